/* The replay player: steps through the markup of templates/replay/player.html.
 *
 * Every moment of the game is a step (0, 1, 2, ... over the whole game: each hand's deal,
 * then each bid, discard, trump and play). The page holds every hand already; this script
 * only shows the one at the current step, the tiles each seat holds then (a tile is held
 * while data-enter <= step < data-leave), the trick on the table, and the story so far. It
 * reads data- attributes only; it never builds markup from text. Links use the labels'
 * numbers: #hand-3, #hand-3-trick-2, #hand-3-trick-2-play-1, #hand-3-bid-2.
 */
(function () {
  "use strict";
  var player = document.getElementById("player");
  if (!player) { return; }
  var total = parseInt(player.getAttribute("data-steps"), 10) || 0;
  var players = parseInt(player.getAttribute("data-players"), 10) || 3;
  var sections = Array.prototype.slice.call(player.querySelectorAll("section.hand"));
  if (!total || !sections.length) { return; }
  document.documentElement.classList.add("js");

  function all(root, sel) { return Array.prototype.slice.call(root.querySelectorAll(sel)); }
  function num(el, name) {
    var v = el.getAttribute(name);
    return v === null || v === "" ? null : parseInt(v, 10);
  }

  /* What each hand is made of, read once. */
  var hands = sections.map(function (sec) {
    var h = {sec: sec, first: num(sec, "data-first"), last: num(sec, "data-last"),
             steps: {}, tricks: [], stops: []};
    all(sec, ".story .step[data-step]").forEach(function (el) {
      h.steps[num(el, "data-step")] = el;
    });
    all(sec, ".story li.trick").forEach(function (el) {
      h.tricks.push({el: el, first: num(el, "data-first"), end: num(el, "data-end"),
                     winner: num(el, "data-winner"), index: num(el, "data-trick")});
    });
    /* trick stops: the moment before the first play, and each trick's end */
    if (h.tricks.length) { h.stops.push(h.tricks[0].first - 1); }
    h.tricks.forEach(function (t) { h.stops.push(t.end); });
    return h;
  });
  var controls = player.querySelector(".controls");
  var slider = player.querySelector(".timeline");
  var status = player.querySelector(".controls .status");
  var speedSel = player.querySelector(".speed");
  var viewSel = player.querySelector(".view");
  var cur = 0, view = "all", timer = null, touched = false;

  function handAt(s) {
    for (var i = 0; i < hands.length; i++) {
      if (s >= hands[i].first && s <= hands[i].last) { return i; }
    }
    return hands.length - 1;
  }
  function pos(seat) {
    if (view === "all") { return seat; }
    return (seat - parseInt(view, 10) + players) % players;
  }
  function label(el) {
    var a = el && el.querySelector(".seat");
    return a ? a.textContent : "";
  }

  function render() {
    var hi = handAt(cur), h = hands[hi], s = cur;
    sections.forEach(function (sec, i) { sec.hidden = i !== hi; });
    all(player, ".hand-index a").forEach(function (a, i) { a.classList.toggle("cur", i === hi); });
    var sec = h.sec, viewer = view === "all" ? null : parseInt(view, 10);
    /* the story so far */
    Object.keys(h.steps).forEach(function (k) {
      var el = h.steps[k], i = parseInt(k, 10);
      el.classList.toggle("future", i > s);
      el.classList.toggle("cur", i === s);
    });
    var curTrick = null;
    h.tricks.forEach(function (t) {
      t.el.classList.toggle("future", t.first > s);
      var won = t.el.querySelector(".won");
      if (won) { won.classList.toggle("future", t.end > s); }
      if (t.first <= s) { curTrick = t; }
    });
    /* what the auction and the trump choice make known, only once they have happened */
    all(sec, "[data-from]").forEach(function (el) {
      el.classList.toggle("future", s < num(el, "data-from"));
    });
    var trumpFrom = num(sec, "data-trump-from");
    sec.classList.toggle("pre-trump", trumpFrom === null || s < trumpFrom);
    var outcome = sec.querySelector(".outcome");
    if (outcome) { outcome.classList.toggle("future", s < h.last); }
    /* tiles in hand, the widow, face up or down */
    all(sec, ".board .seat").forEach(function (seatEl) {
      var seat = num(seatEl, "data-seat");
      seatEl.setAttribute("data-pos", pos(seat));
      var hidden = viewer !== null && viewer !== seat;
      all(seatEl, ".held .dom").forEach(function (d) {
        var enter = num(d, "data-enter"), leave = num(d, "data-leave");
        var held = (enter === null || s >= enter) && (leave === null || s < leave);
        d.classList.toggle("gone", !held);
        d.classList.toggle("back", held && hidden);
      });
      var taken = 0;
      h.tricks.forEach(function (t) { if (t.winner === seat && t.end <= s) { taken += 1; } });
      var tk = seatEl.querySelector(".taken");
      if (tk) { tk.textContent = h.tricks.length ? "tricks " + taken : ""; }
      var step = h.steps[s];
      var acting = !!step && num(step, "data-seat") === seat;
      seatEl.classList.toggle("acting", acting);
      var doing = seatEl.querySelector(".doing");
      if (doing) {
        var msEl = acting ? step.querySelector(".ms") : null;
        doing.textContent = acting ? describe(step) + (msEl ? " · " + msEl.textContent : "") : "";
      }
    });
    all(sec, ".board .widow .dom").forEach(function (d) {
      var leave = num(d, "data-leave");
      d.classList.toggle("gone", leave !== null && s >= leave);
      d.classList.toggle("back", viewer !== null);
    });
    /* the trick on the table */
    var complete = curTrick && curTrick.end <= s;
    all(sec, ".board .played").forEach(function (p) {
      var st = num(p, "data-step"), shown = !!curTrick && num(p, "data-trick") === curTrick.index
        && st <= s;
      p.classList.toggle("shown", shown);
      p.classList.toggle("now", shown && st === s && !complete);
      p.classList.toggle("winning", shown && complete && p.getAttribute("data-wins") === "1");
      p.setAttribute("data-pos", pos(num(p, "data-seat")));
    });
    var note = sec.querySelector(".center-note");
    if (note) {
      if (curTrick) {
        note.textContent = "Trick " + (curTrick.index + 1) + (complete && curTrick.winner !== null
          ? " · won by " + label(curTrick.el.querySelector("li.play.win")) : "");
      } else if (s === h.first) {
        note.textContent = "the deal";
      } else {
        note.textContent = "auction";
      }
    }
    /* the controls */
    if (slider) { slider.value = String(s); }
    if (status) { status.textContent = where(hi, s); }
    var off = {"hand-1": s === 0, "trick-1": s === 0, "step-1": s === 0,
               "step+1": s >= total - 1, "trick+1": s >= total - 1, "hand+1": hi >= hands.length - 1};
    all(player, "[data-go]").forEach(function (b) {
      var k = b.getAttribute("data-go");
      if (k in off) { b.disabled = off[k]; }
    });
    if (touched && window.history && history.replaceState) {
      history.replaceState(null, "", "#" + anchor(hi, s));
    }
  }

  function describe(step) {
    var b = step.querySelector("b"), tt = step.querySelector(".tt");
    if (step.classList.contains("play")) { return "plays " + (tt ? tt.textContent : ""); }
    if (step.classList.contains("discard")) { return "discards"; }
    if (step.classList.contains("trump")) { return "trumps " + (b ? b.textContent : ""); }
    return b ? b.textContent : "";
  }
  function where(hi, s) {
    var h = hands[hi], text = "Hand " + (hi + 1) + " of " + hands.length;
    var step = h.steps[s];
    if (s === h.first) { return text + " · the deal"; }
    if (!step) { return text; }
    if (step.classList.contains("play")) {
      var t = null;
      h.tricks.forEach(function (x) { if (x.first <= s && s <= x.end) { t = x; } });
      if (t) {
        return text + " · trick " + (t.index + 1) + " of " + h.tricks.length + " · play " +
          (s - t.first + 1) + " of " + (t.end - t.first + 1);
      }
    }
    if (step.classList.contains("bid")) {
      var bids = all(h.sec, ".story .step.bid");
      return text + " · auction, bid " + (bids.indexOf(step) + 1) + " of " + bids.length;
    }
    return text + " · " + (step.classList.contains("discard") ? "discard" : "trumps");
  }
  function anchor(hi, s) {
    var h = hands[hi], step = h.steps[s];
    if (!step || s === h.first) { return h.sec.id; }
    for (var i = 0; i < h.tricks.length; i++) {
      if (h.tricks[i].end === s) { return h.tricks[i].el.id; }
    }
    return step.id;
  }

  function go(s) {
    cur = Math.max(0, Math.min(total - 1, s));
    render();
  }
  function step(d) { go(cur + d); }
  function trick(d) {
    var stops = [];
    hands.forEach(function (h) { stops = stops.concat([h.first], h.stops); });
    stops.push(total - 1);
    var target = d > 0 ? total - 1 : 0;
    stops.forEach(function (x) {
      if (d > 0 && x > cur && x < target) { target = x; }
      if (d < 0 && x < cur && x > target) { target = x; }
    });
    go(target);
  }
  function hand(d) {
    var hi = handAt(cur);
    if (d < 0 && cur > hands[hi].first) { go(hands[hi].first); return; }
    var j = Math.max(0, Math.min(hands.length - 1, hi + d));
    go(hands[j].first);
  }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    if (controls) { controls.classList.remove("playing"); }
  }
  function start() {
    stop();
    if (cur >= total - 1) { go(0); }
    var speed = parseFloat(speedSel ? speedSel.value : "1") || 1;
    timer = setInterval(function () {
      if (cur >= total - 1) { stop(); return; }
      step(1);
    }, Math.max(40, 900 / speed));
    if (controls) { controls.classList.add("playing"); }
  }
  function toggle() { if (timer === null) { start(); } else { stop(); } }
  function act(k) {
    touched = true;
    if (k === "auto") { toggle(); return; }
    stop();
    if (k === "step+1") { step(1); } else if (k === "step-1") { step(-1); }
    else if (k === "trick+1") { trick(1); } else if (k === "trick-1") { trick(-1); }
    else if (k === "hand+1") { hand(1); } else if (k === "hand-1") { hand(-1); }
    else if (k === "end") { go(total - 1); } else if (k === "start") { go(0); }
  }

  /* A link (#hand-3-trick-2 ...) as a step: a step's own element, a trick's end, a
     hand's deal. Unknown: null. */
  function fromHash(hash) {
    if (!hash || hash.length < 2) { return null; }
    var el = document.getElementById(decodeURIComponent(hash.slice(1)));
    if (!el || !player.contains(el)) { return null; }
    if (el.matches("section.hand")) { return num(el, "data-first"); }
    if (el.matches("li.trick")) { return num(el, "data-end"); }
    var st = el.closest("[data-step]");
    return st ? num(st, "data-step") : null;
  }

  player.addEventListener("click", function (ev) {
    var t = ev.target;
    var btn = t.closest ? t.closest("[data-go]") : null;
    if (btn) { act(btn.getAttribute("data-go")); return; }
    var link = t.closest ? t.closest("[data-step-link]") : null;
    if (link) {
      ev.preventDefault(); touched = true; stop(); go(num(link, "data-step-link")); return;
    }
    var el = t.closest ? t.closest(".story [data-step], .story li.trick") : null;
    if (el) {
      ev.preventDefault(); touched = true; stop();
      go(el.matches("li.trick") && !t.closest("[data-step]") ? num(el, "data-end")
        : num(t.closest("[data-step]"), "data-step"));
    }
  });
  if (slider) {
    slider.addEventListener("input", function () {
      touched = true; stop(); go(parseInt(slider.value, 10) || 0);
    });
  }
  if (speedSel) { speedSel.addEventListener("change", function () { if (timer !== null) { start(); } }); }
  if (viewSel) { viewSel.addEventListener("change", function () { view = viewSel.value; render(); }); }
  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    var tag = ev.target && ev.target.tagName;
    if (tag === "SELECT" || tag === "TEXTAREA" || (tag === "INPUT" && ev.target !== slider)) { return; }
    var map = {ArrowRight: "step+1", ArrowLeft: "step-1", ArrowDown: "trick+1", ArrowUp: "trick-1",
               PageDown: "hand+1", PageUp: "hand-1", Home: "start", End: "end", " ": "auto"};
    var k = map[ev.key];
    if (!k) { return; }
    ev.preventDefault();
    act(k);
  });
  window.addEventListener("hashchange", function () {
    var s = fromHash(location.hash);
    if (s !== null && s !== cur) { stop(); go(s); }
  });
  var first = fromHash(location.hash);
  if (first !== null) { cur = first; touched = true; }
  render();
  if (first !== null) {
    var top = controls || player;
    if (top.scrollIntoView) { top.scrollIntoView({block: "start"}); }
  }
})();
