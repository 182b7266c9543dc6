/* A live table (templates/table/page.html): polls the table's state (GET /state, a long
 * poll), puts the board the server drew in place, builds the choices of the turn as
 * buttons (from text only: textContent, never markup), counts the clock down, and sends
 * the person's answers (POST /act). The digits pick the numbered choices.
 */
(function () {
  "use strict";
  var root = document.getElementById("table");
  if (!root) { return; }
  var key = root.getAttribute("data-key");
  /* "" for `moon play --web`; a host's table lives under /tables/ID */
  var base = root.getAttribute("data-base") || "";
  var $ = function (id) { return document.getElementById(id); };
  var version = 0, turn = null, turnAt = 0, over = false, board = "";

  function url(path, extra) {
    return base + path + "?k=" + encodeURIComponent(key) + (extra || "");
  }
  function post(path, body) {
    return fetch(url(path), {method: "POST", headers: {"Content-Type": "application/json"},
                             body: JSON.stringify(body || {})});
  }
  function act(body) {
    if (!turn) { return; }
    $("refusal").textContent = "";
    post("/act", body);
  }
  function clockText(ms) {
    var s = Math.max(0, Math.floor(ms / 1000)), m = Math.floor(s / 60);
    s = s % 60;
    return m + ":" + (s < 10 ? "0" : "") + s;
  }
  function tick() {
    var el = $("clock");
    if (!turn) { el.textContent = over ? "" : "the others are playing"; el.className = "clock"; return; }
    var used = Date.now() - turnAt;
    var move = turn.decision_ms - used, bank = turn.bank_ms + Math.min(0, move);
    el.textContent = "your clock: " + clockText(Math.max(0, move)) + " for this move, then " +
      clockText(bank) + " of bank";
    el.className = "clock" + (move < 10000 ? " low" : "");
  }
  function render(st) {
    version = st.version;
    $("status").textContent = st.status || "";
    /* drawn and escaped by the server; put in place only when it changed (a hovered or
       focused tile stays) */
    if (st.board && st.board !== board) { $("board").innerHTML = st.board; board = st.board; }
    var hadTurn = !!turn;
    turn = st.turn;
    if (turn && !hadTurn) { turnAt = Date.now(); }
    $("refusal").textContent = st.refusal || "";
    var actions = $("actions");
    actions.textContent = "";
    if (turn && turn.actions.length && turn.actions[0].kind !== "play" &&
        turn.actions[0].kind !== "discard") {
      turn.actions.forEach(function (a) {
        var b = document.createElement("button");
        b.type = "button";
        b.setAttribute("data-action", String(a.action));
        var n = document.createElement("span");
        n.className = "n";
        n.textContent = String(a.n);
        b.appendChild(n);
        b.appendChild(document.createTextNode(a.label));
        actions.appendChild(b);
      });
    } else if (turn) {
      var p = document.createElement("span");
      p.className = "muted";
      p.textContent = turn.phase + ": click a tile, or type its number";
      actions.appendChild(p);
    }
    var scores = $("scores");
    scores.textContent = "";
    (st.scores || []).forEach(function (s) {
      var tr = document.createElement("tr"), th = document.createElement("th"),
          td = document.createElement("td");
      th.textContent = s.side;
      td.textContent = String(s.score);
      td.className = "num";
      tr.appendChild(th);
      tr.appendChild(td);
      scores.appendChild(tr);
    });
    var log = $("log");
    log.textContent = "";
    (st.log || []).forEach(function (line) {
      var li = document.createElement("li");
      li.textContent = line;
      log.appendChild(li);
    });
    if (st.over) {
      over = true;
      $("over").hidden = false;
      $("over-line").textContent = st.over.line;
      $("record").textContent = st.over.record ? "record: " + st.over.record : "";
      if (st.over.record_url) {
        var a = document.createElement("a");
        a.href = st.over.record_url;
        a.textContent = "download the record";
        $("record").appendChild(document.createTextNode(" · "));
        $("record").appendChild(a);
      }
      if (st.over.new_table) {  /* the host restarted: no replay, a new table instead */
        $("replay").setAttribute("href", st.over.new_table);
        $("replay").textContent = "open a new table";
        $("done").hidden = true;
      } else {
        $("replay").setAttribute("href", url("/replay"));
      }
      $("leave").hidden = true;
      $("status").textContent = "game over";
    }
    tick();
  }
  function poll() {
    fetch(url("/state", "&since=" + version)).then(function (r) {
      if (r.status === 404) { throw new Error("gone"); }
      return r.json();
    }).then(function (st) {
      render(st);
      if (st.closed) {
        $("status").textContent = st.over && st.over.new_table ? "game over" : "table closed";
      } else { poll(); }
    }).catch(function (e) {
      if (e && e.message === "gone") {  /* closed, or forgotten after the game: stop */
        $("status").textContent = over ? "table closed" : "this table is no longer here";
        return;
      }
      if (!over) {
        $("status").textContent = "lost the table: is moon play (or the host) still running?";
      }
      setTimeout(poll, 2000);
    });
  }
  document.addEventListener("click", function (e) {
    var t = e.target.closest ? e.target.closest("[data-action]") : null;
    if (t && root.contains(t)) {
      e.preventDefault();
      act({action: parseInt(t.getAttribute("data-action"), 10)});
    }
  });
  document.addEventListener("keydown", function (e) {
    /* a turn has at most 9 choices (8 tiles to discard from, 9 trumps): one digit each */
    if (!turn || e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.key >= "1" && e.key <= "9") { e.preventDefault(); pick(parseInt(e.key, 10)); }
  });
  function pick(k) {
    var a = turn && turn.actions.filter(function (x) { return x.n === k; })[0];
    if (a) { act({action: a.action}); }
    else if (turn) { $("refusal").textContent = "there is no choice " + k + ": pick 1 to " +
                     turn.actions.length; }
  }
  $("leave").addEventListener("click", function () {
    if (window.confirm("Leave the game? It counts as a forfeit.")) { act({leave: true}); }
  });
  $("done").addEventListener("click", function () {
    post("/done").then(function () { $("status").textContent = "table closed"; });
  });
  setInterval(tick, 500);
  poll();
})();
