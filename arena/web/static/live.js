/* The live game page: reads the referee's public events from the host's server-sent
 * events stream (data-events) and shows them: each seat's tricks and score, the trick on
 * the table, and a log of events, newest first. It builds text nodes only (never markup
 * from data). When the game ends it loads the replay page. */
(function () {
  "use strict";
  var root = document.getElementById("live");
  if (!root || !window.EventSource) { return; }
  var players = parseInt(root.getAttribute("data-players"), 10) || 3;
  var status = root.querySelector(".live-status");
  var log = root.querySelector(".live-log");
  var table = root.querySelector(".trick-now");
  var seen = 0;
  var TRUMPS = ["blanks", "ones", "twos", "threes", "fours", "fives", "sixes"];

  function row(seat) { return root.querySelector('tr[data-seat="' + seat + '"]'); }
  function cell(seat, cls) { var r = row(seat); return r ? r.querySelector("." + cls) : null; }
  function setText(el, text) { if (el) { el.textContent = text; } }
  function trumpText(t) {
    if (!t) { return "?"; }
    if (t.kind === "TRUMP_KIND_DOUBLES") { return "doubles"; }
    if (t.kind === "TRUMP_KIND_NO_TRUMP") { return "no trumps"; }
    return TRUMPS[t.number || 0] || String(t.number);
  }
  function tile(text) {
    var d = document.createElement("span");
    d.className = "dom h";
    d.setAttribute("data-tile", text);
    d.title = text;
    var ends = text.split("-");
    for (var i = 0; i < 2; i++) {
      var half = document.createElement("i");
      half.className = "p" + ends[i];
      d.appendChild(half);
    }
    return d;
  }
  function say(text, t) {
    var li = document.createElement("li");
    li.appendChild(document.createTextNode(text));
    if (t) { li.appendChild(document.createTextNode(" ")); li.appendChild(tile(t)); }
    log.insertBefore(li, log.firstChild);
  }
  function resetTricks() {
    for (var s = 0; s < players; s++) { setText(cell(s, "tricks"), "0"); }
  }
  var handlers = {
    hand_started: function (e) {
      resetTricks(); table.textContent = "";
      say("hand " + ((e.hand_number || 0) + 1) + " dealt by seat " + (e.dealer || 0));
    },
    bid: function (e) {
      var v = e.value || 0;
      setText(cell(e.seat || 0, "last"), v ? "bid " + v : "pass");
      say("seat " + (e.seat || 0) + (v ? " bids " + v : " passes"));
    },
    widow_taken: function (e) { say("seat " + (e.seat || 0) + " takes the widow"); },
    discarded: function (e) { say("seat " + (e.seat || 0) + " discards (face down)"); },
    trump_named: function (e) {
      say("seat " + (e.seat || 0) + " names trumps: " + trumpText(e.trump));
    },
    played: function (e) {
      if (table.children.length >= players) { table.textContent = ""; }
      var slot = document.createElement("span");
      slot.className = "played-now";
      slot.appendChild(document.createTextNode((e.seat || 0) + ": "));
      slot.appendChild(tile(e.tile));
      table.appendChild(slot);
      setText(cell(e.seat || 0, "last"), "played " + e.tile);
      say("seat " + (e.seat || 0) + " plays", e.tile);
    },
    trick_won: function (e) {
      var c = cell(e.seat || 0, "tricks");
      if (c) { c.textContent = String((parseInt(c.textContent, 10) || 0) + 1); }
      say("trick " + ((e.trick_number || 0) + 1) + " won by seat " + (e.seat || 0));
    },
    hand_ended: function (e) {
      var scores = e.scores || [];
      for (var s = 0; s < players; s++) {
        var side = players === 4 ? s % 2 : s;
        if (side < scores.length) { setText(cell(s, "score"), String(scores[side])); }
      }
      say("hand over: " + (e.made === undefined ? "redeal" : e.made ? "made" : "set") +
          "; scores " + scores.join(" – "));
    },
    fault: function (e) {
      say("seat " + (e.seat || 0) + " fault: " + (e.reason || "") + (e.forfeit ? " (forfeit)" : ""));
    },
    game_ended: function (e) {
      say("game over: " + (e.termination || ""));
    }
  };
  var source = new EventSource(root.getAttribute("data-events"));
  source.addEventListener("open", function () { setText(status, "Watching: events arrive as they happen."); });
  source.addEventListener("moon", function (msg) {
    var e;
    try { e = JSON.parse(msg.data); } catch (err) { return; }
    if (e.seq <= seen) { return; }
    seen = e.seq;
    root.setAttribute("data-seen", String(seen));
    var h = handlers[e.kind];
    if (h) { h(e); }
  });
  source.addEventListener("end", function () {
    source.close();
    setText(status, "The game is over: loading its replay…");
    root.setAttribute("data-ended", "1");
    window.setTimeout(function () { window.location.reload(); }, 1500);
  });
  source.addEventListener("error", function () {
    if (source.readyState !== EventSource.CLOSED) { setText(status, "Reconnecting…"); return; }
    // refused (too many live views open from here, or on the host): try again later
    setText(status, "The live view is full just now: this page reloads in 20 s.");
    window.setTimeout(function () { window.location.reload(); }, 20000);
  });
})();
