"""A game record as one self-contained HTML page to step through (`moon replay html`).

The page holds everything itself: inline CSS (dominoes drawn with CSS gradients), a small
vanilla script for the navigation, no network, no external file. Every value shown comes
from the record's fields and every string from the record is HTML-escaped: bot names,
fault details and logs are untrusted. The script is a constant; no record data is ever
written into it. Without JavaScript the page still shows every hand and trick, one after
the other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from .records import GameRecord, RecordedHand, RecordedPlay

_TILE = re.compile(r"^([0-6])-([0-6])$")
_SUITS = ("blanks", "ones", "twos", "threes", "fours", "fives", "sixes")


def esc(value: object) -> str:
    """Any value as HTML text, safe in element content and in quoted attributes."""
    return escape(str(value), quote=True)


def trump_text(trump: object) -> str:
    """``"3"`` -> ``"threes"``; ``"doubles"``; ``"none"`` -> ``"no trumps"``."""
    if isinstance(trump, str) and trump.isdigit() and int(trump) < 7:
        return _SUITS[int(trump)]
    if trump == "none":
        return "no trumps"
    return str(trump)


def is_trump(tile: object, trump: object) -> bool:
    """Whether a tile (``"6-4"``) is a trump under the record's trump (``"4"``, ...)."""
    m = _TILE.match(tile) if isinstance(tile, str) else None
    if m is None or not isinstance(trump, str):
        return False
    if trump == "doubles":
        return m[1] == m[2]
    return trump.isdigit() and trump in (m[1], m[2])


def domino(tile: object, extra_class: str = "", attrs: str = "", title: str = "") -> str:
    """A tile drawn as a domino (two halves of pips); text only if it is not ``"a-b"``."""
    m = _TILE.match(tile) if isinstance(tile, str) else None
    cls = f"dom {extra_class}".strip()
    tip = esc(title or str(tile))
    if m is None:
        return f'<span class="{cls} odd" title="{tip}"{attrs}>{esc(tile)}</span>'
    return (f'<span class="{cls}" data-tile="{m[0]}" title="{tip}" role="img" '
            f'aria-label="{m[0]}"{attrs}><i class="p{m[1]}"></i><i class="p{m[2]}"></i></span>')


@dataclass(frozen=True)
class ShownTrick:
    """A trick as the page shows it: its plays with their milliseconds (where the hand's
    flat list of plays has them), and its winner (None: the trick in progress)."""

    leader: int | None
    plays: tuple[RecordedPlay, ...]
    winner: int | None


def trick_list(hand: RecordedHand, n: int) -> list[ShownTrick]:
    """The hand's tricks with each play's milliseconds, plus the trick in progress of an
    unfinished hand (its ``winner`` None).

    Milliseconds come from the hand's flat ``plays`` list (trick k's j-th play is entry
    ``k*n + j``), and only when that entry is the same seat and tile.
    """
    flat = hand.plays
    out: list[ShownTrick] = []
    for k, t in enumerate(hand.tricks):
        plays = []
        for j, p in enumerate(t.plays):
            f = flat[k * n + j] if k * n + j < len(flat) else None
            same = f is not None and (f.seat, f.tile) == (p.seat, p.tile)
            plays.append(RecordedPlay(p.seat, p.tile, f.ms if same and f else None))
        out.append(ShownTrick(t.leader, tuple(plays), t.winner))
    rest = flat[len(out) * n:]
    if rest:
        out.append(ShownTrick(rest[0].seat, rest, None))
    return out


@dataclass(frozen=True)
class Held:
    """A tile a seat holds when play starts."""

    tile: str
    widow: bool
    """It came from the widow."""
    trick: int | None
    """The trick (0-based) it was played in; None if not played."""


def holdings(hand: RecordedHand, tricks: Sequence[ShownTrick], n: int) -> list[list[Held]]:
    """What each seat holds when play starts, each tile with the trick it is played in.

    A seat's tiles are its dealt tiles; the bidder's also take the widow and lose the
    discard once a discard is recorded. At trick k a seat still holds the tiles whose
    ``trick`` is None or >= k.
    """
    played: dict[tuple[int | None, str], int] = {}
    for k, t in enumerate(tricks):
        for p in t.plays:
            played.setdefault((p.seat, p.tile), k)
    out = []
    for seat in range(n):
        tiles = [(t, False) for t in (hand.dealt[seat] if seat < len(hand.dealt) else ())]
        if seat == hand.bidder and hand.discard is not None:
            tiles += [(t, True) for t in hand.widow]
            tiles = [x for x in tiles if x[0] != hand.discard]
        out.append([Held(t, w, played.get((seat, t))) for t, w in tiles])
    return out


def _bid_text(bid: int) -> str:
    if bid == 0:
        return "pass"
    if bid == 21:
        return "bid 21 (moon)"
    return f"bid {bid}"


def _ms(ms: int | None) -> str:
    return "" if ms is None else f' <span class="ms">{esc(ms)} ms</span>'


def _scores_row(values: Sequence[int] | None, cls: str) -> str:
    return "".join(f'<td class="{cls}">{esc(v)}</td>' for v in values or ())


def _header(record: GameRecord, sides: list[str]) -> str:
    rules_text = ", ".join(f"{k}={v}" for k, v in record.ruleset.items())
    tc_text = ", ".join(f"{k}={v}" for k, v in (record.time_control or {}).items())
    meta = [("preset", record.preset or "custom"), ("ruleset", rules_text),
            ("seed", record.seed), ("deal version", record.deal_version),
            ("time control", tc_text), ("started", record.created_at),
            ("finished", record.finished_at)]
    out = [f'<header><h1>Moon replay <span class="mid">match {esc(record.match_id)}'
           "</span></h1>", '<dl class="meta">']
    out += [f"<dt>{k}</dt><dd>{esc(v)}</dd>" for k, v in meta if v not in (None, "")]
    out.append("</dl>")
    out.append('<table class="seats"><thead><tr><th>seat</th><th>bot</th><th>version</th>'
               "<th>joined as</th></tr></thead><tbody>")
    for s in record.seats:
        joined = f"{s.reported_name} {s.reported_version}".strip()
        out.append(f'<tr><td>{s.seat}</td><td class="bot">{esc(s.name)}</td>'
                   f'<td>{esc(s.version)}</td><td>{esc(joined)}</td></tr>')
    out.append("</tbody></table>")
    out.append(_result(record, sides))
    faults = record.faults
    out.append(f'<h2>Faults ({len(faults)})</h2><ul class="faults">')
    for f in faults:
        tag = ' <b class="forfeit">forfeit</b>' if f.forfeit else ""
        out.append(f'<li class="fault">seat {esc(record.seat_label(f.seat))}: '
                   f'<b>{esc(f.reason)}</b>{tag} — '
                   f'<span class="detail">{esc(f.detail)}</span></li>')
    if not faults:
        out.append("<li>none</li>")
    out.append("</ul>")
    if record.errors:
        out.append(f'<h2>Damaged fields ({len(record.errors)})</h2><ul class="damaged">')
        out += [f"<li>{esc(e)}</li>" for e in record.errors]
        out.append("</ul>")
    out.append("</header>")
    return "\n".join(out)


def _result(record: GameRecord, sides: list[str]) -> str:
    res = record.result
    winner = res.winner
    out = ['<section class="result"><h2>Result</h2><p>']
    if winner is not None and 0 <= winner < len(sides):
        out.append(f'winner: <b class="winner">{esc(sides[winner])}</b>')
    else:
        out.append('<b class="winner none">no winner</b>')
    played = res.hands_played if res.hands_played is not None else len(record.hands)
    out.append(f' (termination: <b class="termination">{esc(res.termination)}</b>, '
               f'{esc(played)} hands)</p>')
    f = res.forfeit
    if f is not None:
        out.append(f'<p class="forfeit-line">forfeit: seat '
                   f'<b>{esc(record.seat_label(f.seat))}</b> — '
                   f'<b>{esc(f.reason)}</b>: '
                   f'<span class="detail">{esc(f.detail)}</span></p>')
    out.append('<table class="final"><thead><tr><th>side</th><th>final score</th>'
               "<th>place</th></tr></thead><tbody>")
    for i, name in enumerate(sides):
        cls = ' class="win"' if i == winner else ""
        score = res.scores[i] if i < len(res.scores) else ""
        place = res.places[i] if i < len(res.places) else ""
        out.append(f'<tr{cls}><td class="side">{esc(name)}</td>'
                   f'<td class="score">{esc(score)}</td><td class="place">{esc(place)}</td></tr>')
    out.append("</tbody></table></section>")
    return "".join(out)


def _outcome_text(hand: RecordedHand) -> str:
    if not hand.finished:
        return "unfinished"
    if hand.bidder is None:
        return "all passed: redeal"
    return "made" if hand.made else "set"


def _overview(record: GameRecord, sides: list[str]) -> str:
    out = ['<section class="overview"><h2>Hands</h2><p class="legend">Dominoes: '
           '<span class="dom trump"><i></i><i></i></span> a trump of that hand, '
           '<span class="dom wid"><i></i><i></i></span> from the widow, '
           '<span class="dom now"><i></i><i></i></span> played in the current trick. '
           'Click a hand or a trick to go to it.</p><table class="hands"><thead><tr>'
           "<th>hand</th><th>dealer</th><th>contract</th><th>result</th>"]
    out += [f"<th>{esc(s)}</th>" for s in sides]
    out.append("</tr></thead><tbody>")
    for i, h in enumerate(record.hands):
        if h.bidder is None:
            contract = "—"
        else:
            contract = f"{record.seat_label(h.bidder)} {h.bid}, {trump_text(h.trump)}"
        out.append(f'<tr data-row="{i}"><td><a href="#hand-{i}" data-goto="{i}">'
                   f'{i + 1}</a></td>'
                   f'<td>{esc(record.seat_label(h.dealer))}</td><td>{esc(contract)}</td>'
                   f'<td>{esc(_outcome_text(h))}</td>{_scores_row(h.scores, "num")}</tr>')
    out.append("</tbody></table></section>")
    return "".join(out)


def _hand(i: int, record: GameRecord, hand: RecordedHand, sides: list[str],
          previous: Sequence[int] | None) -> str:
    n = len(record.seats)
    label = record.seat_label
    bidder, trump, dealer = hand.bidder, hand.trump, hand.dealer
    tricks = trick_list(hand, n)
    held = holdings(hand, tricks, n)

    def badges(seat: int) -> str:
        b = ""
        if seat == dealer:
            b += ' <span class="badge">dealer</span>'
        if seat == bidder:
            b += ' <span class="badge bidder">bidder</span>'
        return b

    def tile(t: object, cls: str = "", attrs: str = "", title: str = "") -> str:
        return domino(t, ("trump " if is_trump(t, trump) else "") + cls, attrs, title)

    out = [f'<section class="hand" id="hand-{i}" data-hand="{i}" data-tricks="{len(tricks)}">',
           f'<h2>Hand {i + 1} of {len(record.hands)} <small>(deal number '
           f'{esc(hand.number)}), dealer {esc(label(dealer))}</small></h2>',
           '<div class="cols"><div>']
    # the deal
    out.append('<h3>Deal</h3><table class="deal">')
    for seat in range(n):
        tiles = hand.dealt[seat] if seat < len(hand.dealt) else ()
        out.append(f'<tr class="dealt" data-seat="{seat}"><th>{esc(label(seat))}'
                   f'{badges(seat)}</th><td>{"".join(tile(t) for t in tiles)}</td></tr>')
    if hand.widow:
        out.append(f'<tr class="widow"><th>widow</th>'
                   f'<td>{"".join(tile(t) for t in hand.widow)}</td></tr>')
    out.append("</table>")
    # the auction and the contract
    out.append('<h3>Auction</h3><ol class="auction">')
    for b in hand.bids:
        out.append(f'<li class="bid" data-seat="{esc(b.seat)}">'
                   f'<span class="seat">{esc(label(b.seat))}</span> '
                   f'<b>{esc(_bid_text(b.bid))}</b>{_ms(b.ms)}</li>')
    out.append("</ol>")
    if bidder is None:
        out.append('<p class="contract">no contract'
                   + (": all passed, redeal" if hand.finished else "") + "</p>")
    else:
        out.append(f'<p class="contract">bidder <b class="bidder-name">'
                   f'{esc(label(bidder))}</b>, contract '
                   f'<b class="bid-value">{esc(hand.bid)}</b>')
        if hand.discard is not None:
            out.append(f'; discard {tile(hand.discard)}'
                       f'<span class="tt">{esc(hand.discard)}</span>{_ms(hand.discard_ms)}')
        if trump is not None:
            out.append(f'; trumps <b class="trump-name">{esc(trump_text(trump))}</b>'
                       f'{_ms(hand.trump_ms)}')
        out.append("</p>")
    # what each seat still holds at the current trick
    out.append('</div><div><h3>Holdings at trick <span class="at">'
               f'{"1 / " + str(len(tricks)) if tricks else "—"}</span></h3>'
               '<table class="holds">')
    for seat in range(n):
        cells = []
        for x in held[seat]:
            k = x.trick
            attrs = f' data-k="{k}"' if k is not None else ""
            title = x.tile + (" (widow)" if x.widow else "") + (
                f" — played in trick {k + 1}" if k is not None else "")
            cells.append(tile(x.tile, "wid" if x.widow else "", attrs, title))
        out.append(f'<tr class="hold" data-seat="{seat}"><th>{esc(label(seat))}'
                   f'{badges(seat)} <span class="cnt"></span></th>'
                   f'<td>{"".join(cells)}</td></tr>')
    out.append("</table>")
    # the tricks
    out.append('<h3>Tricks</h3><ol class="tricks">')
    for k, t in enumerate(tricks):
        w = t.winner
        out.append(f'<li class="trick" data-trick="{k}" '
                   f'data-winner="{esc("" if w is None else w)}">'
                   f'<div class="th">trick {k + 1}, led by '
                   f'<span class="leader">{esc(label(t.leader))}</span></div>'
                   '<ul class="plays">')
        for p in t.plays:
            win = " win" if w is not None and p.seat == w else ""
            out.append(f'<li class="play{win}" data-seat="{esc(p.seat)}">'
                       f'<span class="seat">{esc(label(p.seat))}</span> '
                       f'{tile(p.tile)} <span class="tt">{esc(p.tile)}</span>'
                       f'{_ms(p.ms)}</li>')
        out.append("</ul>")
        if w is None:
            out.append('<div class="won pending">in progress</div>')
        else:
            out.append(f'<div class="won">won by <b>{esc(label(w))}</b></div>')
        out.append("</li>")
    out.append("</ol>")
    # the hand's outcome
    out.append(f'<h3>Outcome: <span class="made">{esc(_outcome_text(hand))}</span></h3>')
    if hand.tricks_taken is not None:
        out.append('<p class="taken">tricks taken: ' + ", ".join(
            f'{esc(label(s))} <b>{esc(x)}</b>' for s, x in enumerate(hand.tricks_taken))
            + "</p>")
    out.append('<table class="score"><thead><tr><th></th>'
               + "".join(f"<th>{esc(s)}</th>" for s in sides) + "</tr></thead><tbody>")
    if previous is not None:
        out.append(f'<tr><th>before</th>{_scores_row(previous, "num")}</tr>')
    out.append(f'<tr class="deltas"><th>change</th>{_scores_row(hand.deltas, "num")}</tr>'
               f'<tr class="running"><th>scores</th>{_scores_row(hand.scores, "num")}'
               "</tr></tbody></table>")
    out.append("</div></div></section>")
    return "\n".join(out)


def _logs(record: GameRecord) -> str:
    if not record.logs:
        return '<section class="logs"><h2>Bot logs</h2><p>none recorded</p></section>'
    out = ['<section class="logs"><h2>Bot logs</h2>']
    for key in sorted(record.logs):
        who = record.seat_label(int(key)) if key.isdigit() else f"{key}:?"
        out.append(f"<h3>seat {esc(who)}</h3><pre>{esc(record.logs[key])}</pre>")
    out.append("</section>")
    return "\n".join(out)


def render_html(record: GameRecord, logs: bool = False) -> str:
    """Render a game record (:func:`arena.records.read_record`) as one self-contained
    HTML page.

    The page shows the match (id, preset, ruleset, seed, seats, result, forfeit, faults,
    and the record's damaged fields if any), an overview of the hands, and each hand: the
    deal, the widow, the auction, the contract, discard and trumps, every trick (leader,
    plays with milliseconds, winner), what each seat still holds at the current trick,
    and the hand's outcome and scores. Buttons and the arrow keys step through the hands
    and tricks (left/right: trick, up/down: hand). Everything from the record is escaped;
    bot logs are included (in ``<pre>``) only with ``logs``. Pure: no I/O, never raises
    for a damaged record (it shows what the record holds).
    """
    sides = record.side_labels()
    title = f"Moon replay {record.match_id}"
    body = [_header(record, sides), _NAV, _overview(record, sides)]
    previous: Sequence[int] | None = None
    for i, h in enumerate(record.hands):
        body.append(_hand(i, record, h, sides, previous))
        previous = h.scores if h.scores is not None else previous
    if logs:
        body.append(_logs(record))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + f"\n<script>{SCRIPT}</script>\n</body></html>\n")


_NAV = """<nav class="bar" aria-label="replay navigation">
<button type="button" data-nav="hand-1" title="previous hand (Up)">&#x23EE; hand</button>
<button type="button" data-nav="trick-1" title="previous trick (Left)">&#x25C0; trick</button>
<span class="status" aria-live="polite"></span>
<button type="button" data-nav="trick+1" title="next trick (Right)">trick &#x25B6;</button>
<button type="button" data-nav="hand+1" title="next hand (Down)">hand &#x23ED;</button>
<span class="keys">keys: &larr; &rarr; trick, &uarr; &darr; hand, Home/End</span>
</nav>"""

_PIP = "var(--pip)"
_PIPS = {
    1: ["50% 50%"],
    2: ["0 0", "100% 100%"],
    3: ["0 0", "50% 50%", "100% 100%"],
    4: ["0 0", "100% 0", "0 100%", "100% 100%"],
    5: ["0 0", "100% 0", "50% 50%", "0 100%", "100% 100%"],
    6: ["0 0", "0 50%", "0 100%", "100% 0", "100% 50%", "100% 100%"],
}
_PIP_CSS = "".join(
    f".p{n}{{background-image:{','.join([_PIP] * len(pos))};background-position:{','.join(pos)}}}"
    for n, pos in _PIPS.items())

_CSS = """
:root{--pip:radial-gradient(circle closest-side,#1d1d1d 72%,transparent 82%);
--bg:#f6f4ee;--ink:#222;--line:#bbb;--hi:#ffe69a;--win:#2e7d32}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);
background:var(--bg);margin:0;padding:0 16px 40px}
h1{font-size:22px;margin:14px 0 6px}h2{font-size:18px;margin:18px 0 6px}
h3{font-size:14px;margin:12px 0 4px;text-transform:uppercase;letter-spacing:.04em;color:#555}
.mid{font-family:ui-monospace,monospace;font-weight:normal}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
dl.meta dt{font-weight:bold}dl.meta dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:4px 0}
th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:middle}
td.num,td.score,td.place{text-align:right;font-variant-numeric:tabular-nums}
tr.win td,.winner{color:var(--win);font-weight:bold}
.forfeit,.forfeit-line{color:#b71c1c}
.fault .detail,.forfeit-line .detail{font-family:ui-monospace,monospace;overflow-wrap:anywhere}
nav.bar{display:none;position:sticky;top:0;z-index:2;background:#333;color:#fff;
padding:6px 10px;margin:10px -16px;gap:8px;align-items:center;flex-wrap:wrap}
.js nav.bar{display:flex}
nav.bar button{font:inherit;padding:4px 10px;border-radius:4px;border:1px solid #777;
background:#555;color:#fff;cursor:pointer}
nav.bar button:disabled{opacity:.4;cursor:default}
nav.bar .status{font-weight:bold;min-width:14em;text-align:center}
nav.bar .keys{opacity:.7;font-size:12px;margin-left:auto}
table.hands tr{cursor:pointer}table.hands tr.cur td{background:var(--hi)}
section.hand{border-top:3px solid #333;margin-top:18px}
.cols{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:0 28px}
@media (max-width:900px){.cols{grid-template-columns:1fr}}
.badge{font-size:11px;font-weight:normal;background:#ddd;border-radius:8px;padding:0 6px}
.badge.bidder{background:#c5e1a5}
.cnt{font-weight:normal;color:#666;font-size:12px}
ol.tricks{padding-left:0;list-style:none;margin:0}
li.trick{border:1px solid var(--line);border-radius:6px;padding:4px 8px;margin:4px 0;
background:#fff;cursor:pointer}
.js li.trick.future{opacity:.35}
li.trick.cur{outline:3px solid #f9a825;background:#fffbe6}
ul.plays{list-style:none;padding:0;margin:2px 0;display:flex;flex-wrap:wrap;gap:4px 14px}
li.play.win{background:#e8f5e9;outline:2px solid var(--win);border-radius:5px;padding:0 4px}
.won{font-size:12px;color:var(--win)}.won.pending{color:#8a6d00}
.ms{font-size:11px;color:#777}.tt{font-family:ui-monospace,monospace}
ol.auction{margin:0;padding-left:22px}
.dom{display:inline-flex;vertical-align:middle;margin:2px;border:1.5px solid #2b2b2b;
border-radius:5px;background:#fffdf6;box-shadow:1px 1px 0 rgba(0,0,0,.25)}
.dom i{display:block;width:24px;height:24px;padding:3px;background-origin:content-box;
background-repeat:no-repeat;background-size:33.4% 33.4%}
.dom i+i{border-left:1.5px solid #2b2b2b}
.dom.trump{background:#fff1c1;border-color:#b8860b}
.dom.wid{outline:2px dashed #1e88e5;outline-offset:1px}
.dom.odd{padding:2px 6px;font-family:ui-monospace,monospace}
.js .hold .dom.gone{display:none}
.hold .dom.now,.legend .dom.now{outline:3px solid #f9a825;outline-offset:1px}
pre{background:#fff;border:1px solid var(--line);padding:8px;overflow:auto;max-height:30em;
white-space:pre-wrap;overflow-wrap:anywhere}
""" + _PIP_CSS

SCRIPT = """
(function () {
  "use strict";
  var hands = Array.prototype.slice.call(document.querySelectorAll("section.hand"));
  if (!hands.length) { return; }
  document.documentElement.className += " js";
  var h = 0, t = 0;
  function each(root, sel, f) { Array.prototype.forEach.call(root.querySelectorAll(sel), f); }
  function count(i) { return parseInt(hands[i].getAttribute("data-tricks"), 10) || 0; }
  function render() {
    var n = count(h), sec = hands[h];
    hands.forEach(function (s, i) { s.hidden = i !== h; });
    each(sec, "li.trick", function (li) {
      var k = parseInt(li.getAttribute("data-trick"), 10);
      li.classList.toggle("cur", k === t);
      li.classList.toggle("future", k > t);
    });
    each(sec, "tr.hold", function (row) {
      var left = 0;
      each(row, ".dom", function (d) {
        var a = d.getAttribute("data-k"), k = a === null ? Infinity : parseInt(a, 10);
        d.classList.toggle("gone", k < t);
        d.classList.toggle("now", k === t);
        if (k >= t) { left += 1; }
      });
      each(row, ".cnt", function (c) { c.textContent = "(" + left + ")"; });
    });
    each(sec, ".at", function (e) { e.textContent = n ? (t + 1) + " / " + n : "\\u2014"; });
    each(document, "table.hands tr[data-row]", function (r) {
      r.classList.toggle("cur", parseInt(r.getAttribute("data-row"), 10) === h);
    });
    each(document, "nav.bar .status", function (e) {
      e.textContent = "hand " + (h + 1) + " of " + hands.length +
        (n ? ", trick " + (t + 1) + " of " + n : ", no tricks");
    });
    var first = h === 0 && t === 0, last = h === hands.length - 1 && t >= n - 1;
    var off = {"hand-1": h === 0, "hand+1": h === hands.length - 1,
               "trick-1": first, "trick+1": last};
    each(document, "[data-nav]", function (b) { b.disabled = !!off[b.getAttribute("data-nav")]; });
  }
  function goHand(i) { h = Math.max(0, Math.min(hands.length - 1, i)); t = 0; render(); }
  function step(d) {
    if (d > 0) {
      if (t < count(h) - 1) { t += 1; } else if (h < hands.length - 1) { h += 1; t = 0; }
    } else if (t > 0) { t -= 1; } else if (h > 0) { h -= 1; t = Math.max(0, count(h) - 1); }
    render();
  }
  document.addEventListener("click", function (ev) {
    var sel = "[data-nav],[data-goto],tr[data-row],li.trick";
    var el = ev.target.closest ? ev.target.closest(sel) : null;
    if (!el) { return; }
    var nav = el.getAttribute("data-nav");
    if (nav) {
      if (nav === "hand-1") { goHand(h - 1); } else if (nav === "hand+1") { goHand(h + 1); }
      else { step(nav === "trick+1" ? 1 : -1); }
    } else if (el.hasAttribute("data-goto") || el.hasAttribute("data-row")) {
      ev.preventDefault();
      goHand(parseInt(el.getAttribute("data-goto") || el.getAttribute("data-row"), 10));
      if (hands[h].scrollIntoView) { hands[h].scrollIntoView({block: "start"}); }
    } else {
      t = parseInt(el.getAttribute("data-trick"), 10) || 0; render();
    }
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || /INPUT|SELECT|TEXTAREA/.test(ev.target.tagName)) {
      return;
    }
    var k = ev.key;
    if (k === "ArrowRight") { step(1); } else if (k === "ArrowLeft") { step(-1); }
    else if (k === "ArrowDown" || k === "PageDown") { goHand(h + 1); }
    else if (k === "ArrowUp" || k === "PageUp") { goHand(h - 1); }
    else if (k === "Home") { goHand(0); } else if (k === "End") { goHand(hands.length - 1); }
    else { return; }
    ev.preventDefault();
  });
  var m = /^#hand-(\\d+)$/.exec(location.hash);
  if (m) { h = Math.min(hands.length - 1, parseInt(m[1], 10)); }
  render();
})();
"""
