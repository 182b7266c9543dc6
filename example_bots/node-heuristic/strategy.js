// The strategy: bid what the hand can expect (its best trump suit plus off-suit doubles),
// name that trump, lead winners, win tricks cheaply, and throw the cheapest tile otherwise.
// Every turn lists its legal actions; this file only picks one of them.
"use strict";

const TRUMP_SUIT = 7; // the "suit led" of a trump lead; number suits are 0..6

const tile = (t) => ({ hi: Math.max(t.high, t.low), lo: Math.min(t.high, t.low) });
const same = (a, b) => a.hi === b.hi && a.lo === b.lo;
const isDouble = (t) => t.hi === t.lo;
const contains = (tiles, t) => tiles.some((u) => same(u, t));

function isTrump(c, t) {
  if (c.kind === "TRUMP_KIND_NUMBER") return t.hi === c.number || t.lo === c.number;
  if (c.kind === "TRUMP_KIND_DOUBLES") return isDouble(t);
  return false;
}

// The suit a tile leads: trumps, or its higher end.
const ledSuit = (c, t) => (isTrump(c, t) ? TRUMP_SUIT : t.hi);

// How strongly t plays to a trick of suit `led`: trumps beat followers, which beat
// everything else (0: cannot win). Doubles are the top of their suit.
function power(c, t, led) {
  if (isTrump(c, t)) {
    if (c.kind === "TRUMP_KIND_DOUBLES" || isDouble(t)) return 107 + t.hi;
    return 100 + (t.hi === c.number ? t.lo : t.hi);
  }
  if (led === TRUMP_SUIT || (t.hi !== led && t.lo !== led)) return 0;
  if (isDouble(t)) return 57;
  return 50 + (t.hi === led ? t.lo : t.hi);
}

// Every tile of the ruleset's set.
function tileSet(r) {
  const out = [];
  for (let hi = 0; hi <= 6; hi++) {
    for (let lo = 0; lo <= hi; lo++) {
      if (r.players === 3 && lo === 0 && (hi > 0 || r.removeDoubleBlank)) continue;
      out.push({ hi, lo });
    }
  }
  return out;
}

// The trumps the ruleset lets a bidder name.
function contracts(r, set) {
  const out = [];
  for (let n = 0; n <= 6; n++) {
    if (n > 0 || contains(set, { hi: 0, lo: 0 })) out.push({ kind: "TRUMP_KIND_NUMBER", number: n });
  }
  if (r.allowDoublesTrump) out.push({ kind: "TRUMP_KIND_DOUBLES", number: 0 });
  if (r.allowNoTrump) out.push({ kind: "TRUMP_KIND_NO_TRUMP", number: 0 });
  return out;
}

// A rough count of the tricks `hand` takes with contract c: an unbroken run of top trumps,
// more trumps at 0.6 each, and off-suit doubles at 0.9.
function expected(hand, c, set) {
  let score = 0;
  if (c.kind !== "TRUMP_KIND_NO_TRUMP") {
    const trumps = set.filter((t) => isTrump(c, t));
    trumps.sort((a, b) => power(c, b, TRUMP_SUIT) - power(c, a, TRUMP_SUIT));
    let run = 0;
    while (run < trumps.length && contains(hand, trumps[run])) run++;
    const held = hand.filter((t) => isTrump(c, t)).length;
    score = run + 0.6 * (held - run);
  }
  for (const t of hand) {
    if (isDouble(t) && !isTrump(c, t)) score += c.kind === "TRUMP_KIND_NO_TRUMP" ? 1.0 : 0.9;
  }
  return score;
}

function bestScore(hand, r) {
  const set = tileSet(r);
  return Math.max(...contracts(r, set).map((c) => expected(hand, c, set)));
}

function chooseBid(obs, legal) {
  const r = obs.ruleset;
  let est = bestScore(obs.hand.map(tile), r);
  if (r.players === 4) est += 1.0; // a partner's help
  else if (tileSet(r).length > 21) est += 0.3; // the widow
  const pass = legal.find((a) => a.bid.value === 0);
  const moon = legal.find((a) => a.bid.value === 21);
  const bids = legal.filter((a) => a.bid.value > 0 && a.bid.value < 21); // ascending
  if (est >= 7.5 && moon) return moon;
  const target = Math.min(Math.floor(est), 7);
  if (bids.length && bids[0].bid.value <= target) return bids[0]; // the lowest that beats the auction
  return pass || bids[0] || legal[0];
}

function argmax(items, score) {
  let best = items[0];
  let top = -Infinity;
  for (const item of items) {
    const s = score(item);
    if (s > top) [best, top] = [item, s];
  }
  return best;
}

function chooseDiscard(obs, legal) {
  const hand = obs.hand.map(tile);
  return argmax(legal, (a) => {
    const d = tile(a.discard);
    return bestScore(hand.filter((t) => !same(t, d)), obs.ruleset);
  });
}

function chooseTrump(obs, legal) {
  const hand = obs.hand.map(tile);
  const set = tileSet(obs.ruleset);
  return argmax(legal, (a) => expected(hand, a.trump, set));
}

// The set minus what this seat has seen: its hand, every play, its own discard.
function unseen(obs) {
  const seen = obs.hand.map(tile);
  for (const trick of obs.tricks) for (const p of trick.plays) seen.push(tile(p.tile));
  for (const p of obs.trick) seen.push(tile(p.tile));
  if (obs.discard) seen.push(tile(obs.discard));
  return tileSet(obs.ruleset).filter((t) => !contains(seen, t));
}

// No unseen tile beats t in a trick of suit `led` (ignoring trumps if asked).
function isBoss(c, t, led, out, ignoreTrumps) {
  return out.every((u) => (ignoreTrumps && isTrump(c, u)) || power(c, u, led) <= power(c, t, led));
}

// Non-trumps before trumps, non-doubles before doubles, fewest pips.
function cheapest(c, tiles) {
  const cost = (t) =>
    (isTrump(c, t) ? 1000 : 0) +
    (isDouble(t) && c.kind !== "TRUMP_KIND_DOUBLES" ? 100 : 0) +
    t.hi +
    t.lo;
  return tiles.reduce((best, t) => (cost(t) < cost(best) ? t : best));
}

function playTile(obs, c, options) {
  const players = obs.ruleset.players;
  const seat = obs.seat;
  const out = unseen(obs);
  if (obs.trick.length === 0) {
    // lead the highest tile nobody can beat, else the cheapest
    const hasBidder = obs.bidder !== null && obs.bidder !== undefined;
    const mySideBid =
      hasBidder && (obs.bidder === seat || (players === 4 && obs.bidder % 2 === seat % 2));
    const trumpsOut = out.some((u) => isTrump(c, u));
    const sorted = [...options].sort(
      (a, b) => power(c, b, ledSuit(c, b)) - power(c, a, ledSuit(c, a)),
    );
    for (const t of sorted) {
      const led = ledSuit(c, t);
      if (led === TRUMP_SUIT && !(mySideBid && trumpsOut)) continue; // keep trumps
      if (isBoss(c, t, led, out, led !== TRUMP_SUIT)) return t;
    }
    return cheapest(c, options);
  }
  const led = ledSuit(c, tile(obs.trick[0].tile));
  const win = obs.trick.reduce((w, p) =>
    power(c, tile(p.tile), led) > power(c, tile(w.tile), led) ? p : w,
  );
  const winTile = tile(win.tile);
  const lastToPlay = obs.trick.length === players - 1;
  const partnerWinning = players === 4 && win.seat === (seat + 2) % 4;
  const beaters = options.filter((t) => power(c, t, led) > power(c, winTile, led));
  if (beaters.length && !(partnerWinning && (lastToPlay || isBoss(c, winTile, led, out, false)))) {
    return beaters.reduce((b, t) => (power(c, t, led) < power(c, b, led) ? t : b)); // win cheaply
  }
  return cheapest(c, options);
}

function choosePlay(obs, legal) {
  const options = legal.map((a) => tile(a.play));
  const pick = playTile(obs, obs.trump, options);
  return legal[options.findIndex((t) => same(t, pick))];
}

// One of the turn's legal actions (an element of turn.legalActions, sent back as is).
function choose(turn) {
  const legal = turn.legalActions;
  const obs = turn.observation;
  switch (legal[0].kind) {
    case "bid":
      return chooseBid(obs, legal);
    case "discard":
      return chooseDiscard(obs, legal);
    case "trump":
      return chooseTrump(obs, legal);
    case "play":
      return choosePlay(obs, legal);
    default:
      return legal[0];
  }
}

module.exports = { choose };
