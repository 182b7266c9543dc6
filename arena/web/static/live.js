/* The live game page (templates/pages/live.html): the host's public events of a game in
 * progress (server-sent events at data-events), drawn on the replay player's board from a
 * spectator's seat. Only what has been played is face up: every seat's hand is drawn face
 * down from its count, the widow and the discard stay face down; the events hold no other
 * tile (arena.protocol.convert.event_to_dict).
 *
 * Events wait in a queue and are shown at the chosen pace: a move (a deal, a bid, a
 * discard, trumps, a play) no sooner than the pace's delay after the one before, what
 * follows from it (a trick won, a hand's end) at once. "catch up" shows every event
 * received; pause holds the queue. When the stream ends and every move has been shown, the
 * page links to the game's replay.
 *
 * It builds elements and text nodes only (never markup from data). For tests and tools the
 * root element says data-received (the last event's seq received), data-seen (the last
 * shown), data-moves (how many moves it has shown), data-ended ("1": the stream is over)
 * and data-over ("1": the last move shown).
 */
(function () {
  "use strict";
  var root = document.getElementById("live");
  if (!root || !window.EventSource) { return; }
  document.documentElement.classList.add("js");
  var n = parseInt(root.getAttribute("data-players"), 10) || 3;
  var hasWidow = root.getAttribute("data-widow") === "1";
  var SUITS = ["blanks", "ones", "twos", "threes", "fours", "fives", "sixes"];
  var MOVES = {hand_started: 1, bid: 1, discarded: 1, trump_named: 1, played: 1};
  var $ = function (sel) { return root.querySelector(sel); };
  var controls = $(".live-controls"), status = $(".live-status"), paceSel = $(".pace");
  var names = [];
  for (var i = 0; i < n; i++) {
    var nm = root.querySelector('.board .seat[data-seat="' + i + '"] .name');
    names.push(nm ? nm.textContent : i + ":?");
  }

  /* ---- what a spectator knows of the game ---- */
  var hand = null, rows = [], faults = [], result = null, lastMove = null;
  function newHand(e) {
    var k = [];
    for (var s = 0; s < n; s++) { k.push(7); }
    var taken = [];
    for (s = 0; s < n; s++) { taken.push(0); }
    return {number: e.hand_number || 0, dealer: e.dealer || 0, counts: k, taken: taken,
            widow: hasWidow, bids: [], bidder: null, bid: 0, auctionOver: false,
            trump: null, steps: [], trick: [], tricks: [], outcome: null};
  }
  function closeAuction() {
    if (hand.auctionOver) { return; }
    hand.auctionOver = true;
    hand.bids.forEach(function (b) {
      if (b.value > hand.bid) { hand.bid = b.value; hand.bidder = b.seat; }
    });
  }
  var apply = {
    hand_started: function (e) { hand = newHand(e); lastMove = {kind: "deal"}; },
    bid: function (e) {
      var b = {seat: e.seat || 0, value: e.value || 0};
      hand.bids.push(b);
      lastMove = {kind: "bid", seat: b.seat, text: bidText(b.value)};
    },
    widow_taken: function (e) {
      closeAuction();
      hand.widow = false;
      hand.counts[e.seat || 0] += 1;
    },
    discarded: function (e) {
      closeAuction();
      hand.counts[e.seat || 0] -= 1;
      hand.steps.push({kind: "discard", seat: e.seat || 0});
      lastMove = {kind: "discard", seat: e.seat || 0, text: "discards face down"};
    },
    trump_named: function (e) {
      closeAuction();
      hand.trump = e.trump || null;
      hand.steps.push({kind: "trump", seat: e.seat || 0});
      lastMove = {kind: "trump", seat: e.seat || 0, text: "trumps " + trumpText(hand.trump)};
    },
    played: function (e) {
      closeAuction();
      if (hand.trick.length && hand.trick.done) { hand.trick = []; }
      if (!hand.trick.length) {
        hand.trick = [];
        hand.tricks.push({leader: e.seat || 0, plays: hand.trick, winner: null});
      }
      hand.trick.push({seat: e.seat || 0, tile: e.tile});
      hand.counts[e.seat || 0] -= 1;
      lastMove = {kind: "play", seat: e.seat || 0, text: "plays " + e.tile};
    },
    trick_won: function (e) {
      var t = hand.tricks[hand.tricks.length - 1];
      if (t) { t.winner = e.seat || 0; }
      hand.trick.done = true;
      hand.taken[e.seat || 0] += 1;
    },
    hand_ended: function (e) {
      closeAuction();
      var made = e.made === undefined || e.made === null ? null : !!e.made;
      hand.outcome = {made: made, redeal: e.bidder === undefined || e.bidder === null,
                      deltas: e.score_deltas || [], scores: e.scores || []};
      rows.push({label: "hand " + (hand.number + 1), deltas: hand.outcome.deltas,
                 scores: hand.outcome.scores});
    },
    fault: function (e) {
      faults.push(names[e.seat || 0] + ": " + words(e.reason, "FAULT_REASON_") +
                  (e.forfeit ? " (forfeit)" : "") + (e.detail ? ": " + e.detail : ""));
    },
    game_ended: function (e) { result = e; }
  };

  /* ---- words ---- */
  function words(v, prefix) {
    return String(v || "").replace(prefix, "").toLowerCase().replace(/_/g, " ");
  }
  function bidText(v) { return v === 0 ? "pass" : v === 21 ? "bid 21 (moon)" : "bid " + v; }
  function trumpText(t) {
    if (!t) { return "not named"; }
    if (t.kind === "TRUMP_KIND_DOUBLES") { return "doubles"; }
    if (t.kind === "TRUMP_KIND_NO_TRUMP") { return "no trumps"; }
    return SUITS[t.number || 0] || String(t.number);
  }
  function isTrump(tile, t) {
    if (!t || !tile) { return false; }
    var ends = tile.split("-");
    if (t.kind === "TRUMP_KIND_DOUBLES") { return ends[0] === ends[1]; }
    if (t.kind === "TRUMP_KIND_NUMBER") {
      var k = String(t.number || 0);
      return ends[0] === k || ends[1] === k;
    }
    return false;
  }
  function sideOf(seat) { return n === 4 ? seat % 2 : seat; }

  /* ---- elements (as macros.html's domino draws them) ---- */
  function el(tag, cls, text) {
    var x = document.createElement(tag);
    if (cls) { x.className = cls; }
    if (text !== undefined) { x.textContent = text; }
    return x;
  }
  function domino(tile, cls) {
    var d = el("span", "dom " + cls + (isTrump(tile, hand && hand.trump) ? " trump" : ""));
    d.setAttribute("data-tile", tile);
    d.setAttribute("title", tile);
    d.setAttribute("role", "img");
    d.setAttribute("aria-label", tile);
    tile.split("-").forEach(function (p) { d.appendChild(el("i", "p" + p)); });
    return d;
  }
  function back() {
    var d = el("span", "dom v back");
    d.setAttribute("aria-hidden", "true");
    d.appendChild(el("i"));
    d.appendChild(el("i"));
    return d;
  }
  function clear(x) { while (x.firstChild) { x.removeChild(x.firstChild); } return x; }
  function seatStep(cls, seat) {
    var li = el("li", "step " + cls);
    li.setAttribute("data-seat", String(seat));
    li.appendChild(el("span", "seat", names[seat]));
    li.appendChild(document.createTextNode(" "));
    return li;
  }

  /* ---- the page, from what a spectator knows ---- */
  function render() {
    root.setAttribute("data-seen", String(seen));
    root.setAttribute("data-received", String(received));
    root.setAttribute("data-moves", String(moves));
    renderControls();
    if (!hand) { return; }
    var h = hand, trickDone = !!h.trick.done, s;
    $(".hand-title").textContent = "Hand " + (h.number + 1) + " · dealer " + names[h.dealer];
    for (s = 0; s < n; s++) {
      var seatEl = root.querySelector('.board .seat[data-seat="' + s + '"]');
      if (!seatEl) { continue; }
      var held = clear(seatEl.querySelector(".held"));
      for (var k = 0; k < h.counts[s]; k++) { held.appendChild(back()); }
      held.appendChild(el("span", "count", h.counts[s] + (h.counts[s] === 1 ? " tile" : " tiles")));
      seatEl.querySelector(".badge.dealer").hidden = s !== h.dealer;
      seatEl.querySelector(".badge.bidder").hidden = !(h.auctionOver && s === h.bidder);
      seatEl.querySelector(".taken").textContent = h.tricks.length ? "tricks " + h.taken[s] : "";
      var acting = !!lastMove && lastMove.seat === s && !h.outcome;
      seatEl.classList.toggle("acting", acting);
      seatEl.querySelector(".doing").textContent = acting ? lastMove.text : "";
    }
    var widow = $(".board .widow");
    widow.hidden = !h.widow;
    while (widow.children.length > 1) { widow.removeChild(widow.lastChild); }
    if (h.widow) { widow.appendChild(back()); }
    var area = clear($(".board .trick-area"));
    var t = h.tricks.length ? h.tricks[h.tricks.length - 1] : null;
    if (t) {
      t.plays.forEach(function (p, j) {
        var slot = el("div", "played shown");
        slot.setAttribute("data-pos", String(p.seat));
        slot.setAttribute("data-seat", String(p.seat));
        if (!trickDone && j === t.plays.length - 1) { slot.classList.add("now"); }
        if (trickDone && p.seat === t.winner) { slot.classList.add("winning"); }
        slot.appendChild(domino(p.tile, "v"));
        area.appendChild(slot);
      });
    }
    var note = "auction";
    if (h.outcome) {
      note = h.outcome.redeal ? "all passed: redeal" : h.outcome.made ? "made" : "set";
    } else if (t) {
      note = "Trick " + h.tricks.length + (trickDone ? " · won by " + names[t.winner] : "");
    } else if (h.auctionOver) {
      note = "the contract";
    }
    $(".board .center-note").textContent = note;
    renderStory(h);
  }
  function renderStory(h) {
    var auction = clear($(".story .auction"));
    h.bids.forEach(function (b, j) {
      var li = seatStep("bid", b.seat);
      li.appendChild(el("b", "", bidText(b.value)));
      if (lastMove && lastMove.kind === "bid" && j === h.bids.length - 1) { li.classList.add("cur"); }
      auction.appendChild(li);
    });
    var contract = $(".story .contract");
    contract.hidden = !h.auctionOver;
    clear(contract);
    if (h.auctionOver) {
      if (h.bidder === null) {
        contract.textContent = "no contract: all passed";
      } else {
        contract.appendChild(document.createTextNode("bidder "));
        contract.appendChild(el("b", "bidder-name", names[h.bidder]));
        contract.appendChild(document.createTextNode(", contract "));
        contract.appendChild(el("b", "bid-value", String(h.bid)));
        contract.appendChild(document.createTextNode("; trumps "));
        contract.appendChild(el("b", "trump-name", trumpText(h.trump)));
      }
    }
    var steps = clear($(".story .contract-steps"));
    h.steps.forEach(function (x) {
      var li = seatStep(x.kind, x.seat);
      li.appendChild(document.createTextNode(x.kind === "discard" ? "discards (face down)"
        : "names trumps: "));
      if (x.kind === "trump") { li.appendChild(el("b", "trump-name", trumpText(h.trump))); }
      steps.appendChild(li);
    });
    var tricks = clear($(".story .tricks"));
    h.tricks.forEach(function (t, j) {
      var li = el("li", "trick");
      li.setAttribute("data-trick", String(j));
      var th = el("div", "th", "Trick " + (j + 1) + ", led by ");
      th.appendChild(el("span", "leader", names[t.leader]));
      li.appendChild(th);
      var ul = el("ul", "plays");
      t.plays.forEach(function (p, q) {
        var pl = seatStep("play" + (t.winner === p.seat ? " win" : ""), p.seat);
        pl.appendChild(domino(p.tile, "h"));
        pl.appendChild(document.createTextNode(" "));
        pl.appendChild(el("span", "tt", p.tile));
        if (lastMove && lastMove.kind === "play" && j === h.tricks.length - 1 &&
            q === t.plays.length - 1) { pl.classList.add("cur"); }
        ul.appendChild(pl);
      });
      li.appendChild(ul);
      if (t.winner === null) { li.appendChild(el("div", "won pending", "in progress")); } else {
        var won = el("div", "won", "won by ");
        won.appendChild(el("b", "", names[t.winner]));
        li.appendChild(won);
      }
      tricks.appendChild(li);
    });
    var body = clear($(".story .hands-so-far"));
    if (!rows.length) {
      var none = el("td", "muted", "no hand is over yet");
      none.setAttribute("colspan", String(n === 4 ? 3 : n + 1));
      body.appendChild(el("tr")).appendChild(none);
    }
    rows.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("th", "", r.label));
      r.scores.forEach(function (v, j) {
        var td = el("td", "num", String(v));
        var d = r.deltas[j] || 0;
        if (d) { td.appendChild(el("small", "delta", " (" + (d > 0 ? "+" : "") + d + ")")); }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    var fl = clear($(".live-faults"));
    faults.forEach(function (f) { fl.appendChild(el("li", "fault", f)); });
  }
  function renderControls() {
    var waiting = queue.filter(function (e) { return MOVES[e.kind]; }).length;
    var over = ended && !queue.length;
    root.setAttribute("data-over", over ? "1" : "0");
    if (controls) { controls.classList.toggle("playing", !paused); }
    var catchUp = $(".catch-up");
    if (catchUp) { catchUp.disabled = !queue.length; }
    var text;
    if (over) {
      text = "The game is over.";
    } else if (!received) {
      text = connected ? "Waiting for the game's first move…" : "Connecting…";
    } else if (paused) {
      text = "Paused" + (waiting ? ": " + waiting + " move" + (waiting === 1 ? "" : "s") +
        " waiting" : "") + ".";
    } else if (waiting) {
      text = waiting + " move" + (waiting === 1 ? "" : "s") + " behind" +
        (ended ? " (the game is over)" : " the game") + ": “catch up” shows them at once.";
    } else {
      text = "Live: each move as it happens.";
    }
    if (status) { status.textContent = text; }
    var gameOver = $(".game-over");
    if (gameOver) {
      gameOver.hidden = !over;
      if (over && result) {
        var w = result.winner;
        var side = w === undefined || w === null ? "" : n === 4 ? names[w] + " & " + names[w + 2]
          : names[w];
        $(".over-line").textContent = " (" + words(result.termination, "TERMINATION_") +
          (side ? "; winner " + side : "; no winner") + ")";
      }
    }
  }

  /* ---- the queue and its pace ---- */
  var queue = [], seen = 0, received = 0, ended = false, connected = false, paused = false;
  var timer = null, lastShown = 0, moves = 0;
  function pace() { return paceSel ? parseInt(paceSel.value, 10) || 0 : 0; }
  function show(e) {
    var f = apply[e.kind];
    if (f && (hand || e.kind === "hand_started" || e.kind === "fault" ||
              e.kind === "game_ended")) { f(e); }
    seen = e.seq;
    if (MOVES[e.kind]) { moves += 1; }
  }
  function pump() {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    while (queue.length && !paused) {
      var e = queue[0];
      if (MOVES[e.kind] && seen) {
        var wait = pace() * (e.kind === "hand_started" ? 2 : 1) - (Date.now() - lastShown);
        if (wait > 0) { timer = setTimeout(pump, wait); break; }
      }
      queue.shift();
      show(e);
      if (MOVES[e.kind]) { lastShown = Date.now(); }
      /* what follows a move (its trick won, the hand's end) shows with it */
    }
    render();  /* the board, or only the count of moves waiting */
  }
  function catchUp() {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    while (queue.length) { show(queue.shift()); }
    lastShown = Date.now();
    render();
  }
  function setPaused(p) { paused = p; if (!paused) { pump(); } else { render(); } }

  root.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("[data-go]") : null;
    if (!b) { return; }
    if (b.getAttribute("data-go") === "pause") { setPaused(!paused); }
    else if (b.getAttribute("data-go") === "catch-up") { catchUp(); }
  });
  if (paceSel) { paceSel.addEventListener("change", pump); }
  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    var tag = ev.target && ev.target.tagName;
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA") { return; }
    if (ev.key === " ") { ev.preventDefault(); setPaused(!paused); }
    else if (ev.key === "End") { ev.preventDefault(); catchUp(); }
  });

  var source = new EventSource(root.getAttribute("data-events"));
  source.addEventListener("open", function () { connected = true; render(); });
  source.addEventListener("moon", function (msg) {
    var e;
    try { e = JSON.parse(msg.data); } catch (err) { return; }
    /* a reconnected stream starts again from the first event: keep only the new ones */
    if (typeof e.seq !== "number" || e.seq <= received) { return; }
    received = e.seq;
    queue.push(e);
    pump();
  });
  source.addEventListener("end", function () {
    source.close();
    ended = true;
    if (!received) {  /* it was over before we could watch: its page is now the replay */
      if (status) { status.textContent = "The game is over: loading its replay…"; }
      root.setAttribute("data-ended", "1");
      window.setTimeout(function () { window.location.reload(); }, 1500);
      return;
    }
    root.setAttribute("data-ended", "1");
    pump();
  });
  source.addEventListener("error", function () {
    if (source.readyState !== EventSource.CLOSED) { if (status) { status.textContent = "Reconnecting…"; } return; }
    // refused (too many live views open from here, or on the host): try again later
    if (status) { status.textContent = "The live view is full just now: this page reloads in 20 s."; }
    window.setTimeout(function () { window.location.reload(); }, 20000);
  });
  render();
})();
