"""The replay player: a game record (:class:`arena.records.record.GameRecord`) as the steps a
person walks through, and the one page that shows them.

:func:`replay_view` turns a record into a :class:`ReplayView`: every decision of the game
(each bid, discard, trump and play, after each hand's deal) is a numbered
:class:`Step`, and each hand knows what every seat holds between which steps
(:class:`HeldTile`). The template ``replay/player.html`` renders that as markup that
reads top to bottom without JavaScript; ``static/replay.js`` adds the stepping (play by
play, trick by trick, hand by hand, a timeline slider, automatic play at a chosen speed,
one seat's view) to that markup, reading only its ``data-`` attributes. The competition
host serves the same template, CSS and script as files; :func:`render_html` (``moon
replay html``) inlines them into one self-contained page.

Numbering: hands, tricks and plays are counted from 1 in labels *and* in links
(``#hand-3-trick-2`` is the second trick of "Hand 3").
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from ..records.record import GameRecord, RecordedHand, RecordedPlay

_TILE = re.compile(r"^([0-6])-([0-6])$")
_SUITS = ("blanks", "ones", "twos", "threes", "fours", "fives", "sixes")


def trump_text(trump: object) -> str:
    """``"3"`` -> ``"threes"``; ``"doubles"``; ``"none"`` -> ``"no trumps"``; None ->
    ``"not named"`` (a hand cut short before trumps were named)."""
    if trump is None:
        return "not named"
    if isinstance(trump, str) and trump.isdigit() and int(trump) < 7:
        return _SUITS[int(trump)]
    if trump == "none":
        return "no trumps"
    return str(trump)


def is_trump(tile: object, trump: object) -> bool:
    """Whether a tile (``"6-4"``) is a trump under the record's trump (``"4"``,
    ``"doubles"``; docs/rules.md, "Trumps")."""
    m = _TILE.match(tile) if isinstance(tile, str) else None
    if m is None or not isinstance(trump, str):
        return False
    if trump == "doubles":
        return m[1] == m[2]
    return trump.isdigit() and trump in (m[1], m[2])


def pips(tile: object) -> tuple[int, int] | None:
    """A tile's two ends (``"6-4"`` -> ``(6, 4)``), or None if it is not ``"a-b"``."""
    m = _TILE.match(tile) if isinstance(tile, str) else None
    return (int(m[1]), int(m[2])) if m else None


def bid_text(bid: int) -> str:
    """``0`` -> ``"pass"``, ``21`` -> ``"bid 21 (moon)"``, else ``"bid N"``."""
    if bid == 0:
        return "pass"
    if bid == 21:
        return "bid 21 (moon)"
    return f"bid {bid}"


@dataclass(frozen=True)
class Step:
    """One moment of the replay: a hand's deal, or a decision of a seat."""

    index: int
    """0, 1, 2, ... over the whole game (the timeline slider's value)."""
    hand: int
    """The hand's index (0-based; its label is ``index + 1``)."""
    kind: str
    """``deal``, ``bid``, ``discard``, ``trump`` or ``play``."""
    seat: int | None
    text: str
    """What happened, for people (``"bid 5"``, ``"pass"``, ``"trumps fours"``)."""
    tile: str | None = None
    """The tile of a play or a discard."""
    ms: int | None = None
    """The decision's think time as the referee measured it, milliseconds."""
    trick: int | None = None
    """A play's trick (0-based)."""
    order: int | None = None
    """A play's place in its trick (0-based)."""
    anchor: str = ""
    """Its link: ``hand-3``, ``hand-3-bid-2``, ``hand-3-discard``, ``hand-3-trump``,
    ``hand-3-trick-2-play-1`` (numbers as in the labels, from 1)."""


@dataclass(frozen=True)
class HeldTile:
    """A tile a seat holds for part of a hand: from step ``enter`` (None: dealt) until
    step ``leave`` (None: to the end of the hand), so it is in the seat's hand at step
    ``s`` when ``enter <= s < leave``."""

    tile: str
    widow: bool
    enter: int | None
    leave: int | None
    trick: int | None
    """The trick it is played in (0-based), if it is played."""


@dataclass(frozen=True)
class TrickView:
    """A trick: its leader, plays (steps), winner (None: in progress when the game
    ended)."""

    index: int
    leader: int | None
    plays: tuple[Step, ...]
    winner: int | None

    @property
    def anchor(self) -> str:
        """``hand-H-trick-T`` (from 1)."""
        return self.plays[0].anchor.rsplit("-play-", 1)[0] if self.plays else ""


@dataclass(frozen=True)
class HandView:
    """One hand of the replay."""

    index: int
    number: int
    """The deal's number in the game (redeals count)."""
    dealer: int | None
    bidder: int | None
    bid: int
    trump: str | None
    discard: str | None
    finished: bool
    made: bool | None
    steps: tuple[Step, ...]
    """The deal, then every decision, in order."""
    tricks: tuple[TrickView, ...]
    held: tuple[tuple[HeldTile, ...], ...]
    """Per seat, every tile it holds at some step of the hand."""
    widow: tuple[HeldTile, ...]
    """The widow's tiles, in the middle until the bidder takes them (``leave``)."""
    tricks_taken: tuple[int, ...] | None
    deltas: tuple[int, ...] | None
    scores: tuple[int, ...] | None
    before: tuple[int, ...] | None
    """Each side's score before the hand (None for the first)."""

    @property
    def label(self) -> str:
        """``"Hand 3"``."""
        return f"Hand {self.index + 1}"

    @property
    def anchor(self) -> str:
        """``hand-3``."""
        return f"hand-{self.index + 1}"

    @property
    def first(self) -> int:
        """Its first step (the deal)."""
        return self.steps[0].index

    @property
    def last(self) -> int:
        """Its last step."""
        return self.steps[-1].index

    @property
    def auction_end(self) -> int:
        """The step at which the auction is over (its last bid; the deal if none): the
        bidder and the contract are known from it on."""
        bids = self.auction
        return bids[-1].index if bids else self.first

    @property
    def trump_at(self) -> int | None:
        """The step at which trumps are named, or None if they never are."""
        return next((s.index for s in self.steps if s.kind == "trump"), None)

    @property
    def outcome(self) -> str:
        """``made``, ``set``, ``all passed: redeal`` or ``unfinished``."""
        if not self.finished:
            return "unfinished"
        if self.bidder is None:
            return "all passed: redeal"
        return "made" if self.made else "set"

    @property
    def auction(self) -> tuple[Step, ...]:
        """Its bids."""
        return tuple(s for s in self.steps if s.kind == "bid")

    @property
    def contract_steps(self) -> tuple[Step, ...]:
        """Its discard and trump steps, in the order they were made."""
        return tuple(s for s in self.steps if s.kind in ("discard", "trump"))


@dataclass(frozen=True)
class SeatView:
    """A seat of the game."""

    seat: int
    name: str
    version: str
    joined_as: str

    @property
    def label(self) -> str:
        """``"1:random"``."""
        return f"{self.seat}:{self.name}"


@dataclass(frozen=True)
class ReplayView:
    """A whole game, ready for the template."""

    match_id: str
    players: int
    seats: tuple[SeatView, ...]
    sides: tuple[str, ...]
    """The scoring sides' labels (seats, or partnerships ``"0:a & 2:c"``)."""
    hands: tuple[HandView, ...]
    steps: int
    """How many steps in all."""
    meta: tuple[tuple[str, str], ...]
    """The game's details in words: ``(label, sentence)`` for its rules, clock, deal and
    times."""
    termination: str
    winner: int | None
    """The winning side, or None."""
    final_scores: tuple[int, ...]
    places: tuple[int, ...]
    hands_played: int
    forfeit: Any
    """The forfeit (:class:`arena.records.record.RecordedFault`) or None."""
    faults: tuple[Any, ...]
    errors: tuple[str, ...]
    logs: tuple[tuple[str, str], ...]
    """``(seat label, text)``, shown only where the page was asked for logs."""

    def seat_label(self, seat: int | None) -> str:
        """``"1:random"``, or ``"7:?"``."""
        if seat is not None and 0 <= seat < len(self.seats):
            return self.seats[seat].label
        return f"{seat}:?"

    def side_of(self, seat: int) -> int:
        """The scoring side of a seat (itself; ``seat % 2`` with 4 players)."""
        return seat % 2 if self.players == 4 else seat

    @property
    def winner_label(self) -> str | None:
        """The winning side's label, or None."""
        w = self.winner
        return self.sides[w] if w is not None and 0 <= w < len(self.sides) else None


def trick_plays(hand: RecordedHand, n: int) -> list[tuple[int | None, list[RecordedPlay],
                                                         int | None]]:
    """The hand's tricks as ``(leader, plays, winner)`` with each play's milliseconds
    (from the flat ``plays`` list: trick k's j-th play is entry ``k*n + j`` when that entry
    is the same seat and tile), then the trick in progress of an unfinished hand (winner
    None)."""
    flat = hand.plays
    out: list[tuple[int | None, list[RecordedPlay], int | None]] = []
    for k, t in enumerate(hand.tricks):
        plays = []
        for j, p in enumerate(t.plays):
            f = flat[k * n + j] if k * n + j < len(flat) else None
            same = f is not None and (f.seat, f.tile) == (p.seat, p.tile)
            plays.append(RecordedPlay(p.seat, p.tile, f.ms if same and f else None))
        out.append((t.leader, plays, t.winner))
    rest = list(flat[len(out) * n:])
    if rest:
        out.append((rest[0].seat, rest, None))
    return out


def _hand_view(i: int, hand: RecordedHand, n: int, start: int, trump_first: bool,
               before: Sequence[int] | None) -> HandView:
    steps: list[Step] = []
    a = f"hand-{i + 1}"

    def add(kind: str, seat: int | None, text: str, anchor: str, **kw: Any) -> Step:
        s = Step(start + len(steps), i, kind, seat, text, anchor=anchor, **kw)
        steps.append(s)
        return s

    add("deal", hand.dealer, "deal", a)
    for j, b in enumerate(hand.bids):
        add("bid", b.seat, bid_text(b.bid), f"{a}-bid-{j + 1}", ms=b.ms)
    auction_end = steps[-1].index
    discard_step: Step | None = None
    trump_step: Step | None = None

    def do_discard() -> None:
        nonlocal discard_step
        if hand.discard is not None:
            discard_step = add("discard", hand.bidder, f"discard {hand.discard}",
                               f"{a}-discard", tile=hand.discard, ms=hand.discard_ms)

    def do_trump() -> None:
        nonlocal trump_step
        if hand.trump is not None:
            trump_step = add("trump", hand.bidder, f"trumps {trump_text(hand.trump)}",
                             f"{a}-trump", ms=hand.trump_ms)

    if trump_first:
        do_trump()
        do_discard()
    else:
        do_discard()
        do_trump()
    tricks = []
    for k, (leader, plays, winner) in enumerate(trick_plays(hand, n)):
        shown = tuple(add("play", p.seat, f"play {p.tile}", f"{a}-trick-{k + 1}-play-{j + 1}",
                          tile=p.tile, ms=p.ms, trick=k, order=j)
                      for j, p in enumerate(plays))
        tricks.append(TrickView(k, leader, shown, winner))
    # who holds what, between which steps
    played = {(p.seat, p.tile): p for t in tricks for p in t.plays}
    taken = (trump_step.index if trump_first and trump_step else auction_end)
    took_widow = (hand.bidder is not None and bool(hand.widow)
                  and (not trump_first or trump_step is not None))
    held: list[tuple[HeldTile, ...]] = []
    for seat in range(n):
        tiles = [(t, False) for t in (hand.dealt[seat] if seat < len(hand.dealt) else ())]
        if seat == hand.bidder and took_widow:
            tiles += [(t, True) for t in hand.widow]
        row = []
        for t, from_widow in tiles:
            p = played.get((seat, t))
            leave = p.index if p else None
            if seat == hand.bidder and discard_step is not None and t == hand.discard:
                leave = discard_step.index
            row.append(HeldTile(t, from_widow, taken + 1 if from_widow else None, leave,
                                p.trick if p else None))
        held.append(tuple(row))
    widow = tuple(HeldTile(t, True, None, taken + 1 if took_widow else None, None)
                  for t in hand.widow)
    return HandView(i, hand.number, hand.dealer, hand.bidder, hand.bid, hand.trump,
                    hand.discard, hand.finished, hand.made, tuple(steps), tuple(tricks),
                    tuple(held), widow, hand.tricks_taken, hand.deltas, hand.scores,
                    tuple(before) if before is not None else None)


def _words(options: str) -> str:
    """``moon3 with target_score=7, max_hands=4`` as ``moon3 with target score 7, max
    hands 4``."""
    return re.sub(r"([a-z_]+)=", lambda m: m.group(1).replace("_", " ") + " ", options)


def _when(stamp: object) -> str:
    """An ISO time as ``2026-12-02 11:04:22 UTC``; anything else as it is."""
    try:
        at = dt.datetime.fromisoformat(str(stamp)).astimezone(dt.UTC)
    except ValueError:
        return str(stamp)
    return at.strftime("%Y-%m-%d %H:%M:%S UTC")


def details(record: GameRecord) -> tuple[tuple[str, str], ...]:
    """The record's rules, clock, deal and times as ``(label, sentence)``, for people:
    the options that differ from the preset's, the seed the deal came from, when it was
    played. Never raises."""
    from ..ladder.report import rules_text, time_text

    meta = {"preset": record.preset, "ruleset": record.ruleset,
            "time_control": record.time_control or {}}
    n = len(record.seats)
    rules = f"Moon for {n} players" + (" in two partnerships" if n == 4 else "")
    rules += ", " + _words(rules_text(meta))
    out = [("rules", rules)]
    clock = time_text(meta)
    if clock:
        out.append(("clock", _words(clock)))
    if record.seed is not None:
        deal = f"dealt from seed {record.seed} (deal version {record.deal_version})"
        out.append(("deal", deal))
    played = " to ".join(_when(x) for x in (record.created_at, record.finished_at)
                         if x not in (None, ""))
    if played:
        out.append(("played", played))
    return tuple(out)


def replay_view(record: GameRecord, logs: bool = False) -> ReplayView:
    """The record as the player shows it. Never raises for a damaged record: it shows
    what the record holds (and :attr:`ReplayView.errors` says what is damaged).
    ``logs`` keeps the bots' output tails the record holds (owners only, on the host)."""
    n = len(record.seats)
    trump_first = bool(record.ruleset.get("trump_before_widow", False))
    hands = []
    start = 0
    before: Sequence[int] | None = None
    for i, h in enumerate(record.hands):
        hv = _hand_view(i, h, n, start, trump_first, before)
        hands.append(hv)
        start = hv.last + 1
        before = h.scores if h.scores is not None else before
    meta = details(record)
    seats = tuple(SeatView(s.seat, s.name, s.version,
                           f"{s.reported_name} {s.reported_version}".strip())
                  for s in record.seats)
    res = record.result
    shown_logs: tuple[tuple[str, str], ...] = ()
    if logs:
        shown_logs = tuple((record.seat_label(int(k)) if k.isdigit() else f"{k}:?",
                            record.logs[k]) for k in sorted(record.logs))
    return ReplayView(
        match_id=record.match_id, players=n, seats=seats, sides=tuple(record.side_labels()),
        hands=tuple(hands), steps=start,
        meta=meta,
        termination=res.termination, winner=res.winner, final_scores=res.scores,
        places=res.places,
        hands_played=res.hands_played if res.hands_played is not None else len(record.hands),
        forfeit=res.forfeit, faults=record.faults, errors=record.errors, logs=shown_logs)


def render_html(record: GameRecord, logs: bool = False) -> str:
    """A game record as one self-contained HTML page (``moon replay html``): the player's
    template with its CSS and script inlined, no network, no external file.

    The page shows the match (id, preset, ruleset, seed, seats, result, forfeit, faults,
    the record's damaged fields if any) and the player: every hand's deal, auction,
    contract and tricks with each decision's think time, which a script steps through
    (keys, buttons, a timeline slider, automatic play, one seat's view). Everything from
    the record is escaped by the template; bot logs are included only with ``logs``. A
    Content-Security-Policy allows only the page's own style and its one script (by
    hash). Pure: no I/O but reading the package's files; never raises for a damaged
    record.
    """
    from .templating import static_text, templates

    script = static_text("replay.js")
    css = static_text("base.css") + "\n" + static_text("replay.css")
    digest = hashlib.sha256(script.encode()).digest()
    csp = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           f"script-src 'sha256-{base64.b64encode(digest).decode()}'")
    return templates().get_template("replay/standalone.html").render(
        view=replay_view(record, logs=logs), inline_css=Markup(css),
        inline_script=Markup(script), csp=csp, show_logs=logs)


__all__ = ["HandView", "details", "HeldTile", "ReplayView", "Step", "TrickView", "bid_text",
           "is_trump", "pips", "render_html", "replay_view", "trick_plays", "trump_text"]
