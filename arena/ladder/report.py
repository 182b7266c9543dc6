"""Ladder results for people and tools: leaderboard, cross-table, per-bot statistics, and
CSV / JSON exports. Everything is computed from the results file alone."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from moon_sdk.rules import Ruleset, RulesetError
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..core.labels import fit_width, unique_labels
from ..core.text import clean, clean_line
from ..core.timecontrol import TimeControl
from ..stats.head_to_head import beyond, share_text
from ..stats.places import places
from .ratings import Rating, head_to_head_table, ladder_fit, leaderboard
from .schedule import make_schedule
from .sets import rated_view
from .store import ResultsStore


def _t(x: object) -> str:
    """Text of a results file (bot names, reasons) for a rich table: control characters
    shown as escapes (:mod:`arena.core.text`), markup escaped."""
    return escape(clean_line(x))


@dataclass
class BotStats:
    """One bot's figures over the ladder."""

    bot: str
    games: int = 0
    wins: int = 0
    """Games finished alone in first place (a partnership's win counts for both)."""
    hands: int = 0
    points: int = 0
    """Sum of its side's score changes over the hands it played."""
    auctions_won: int = 0
    contracts_made: int = 0
    moons_tried: int = 0
    moons_made: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    forfeits: int = 0

    @property
    def points_per_hand(self) -> float:
        """Average change of its side's score per hand (redeals included)."""
        return self.points / self.hands if self.hands else 0.0

    @property
    def made_pct(self) -> float | None:
        """Contracts made, % of auctions won; None when it won no auction."""
        return 100.0 * self.contracts_made / self.auctions_won if self.auctions_won else None


@dataclass
class LadderReport:
    """Everything `moon ladder show` prints."""

    meta: dict[str, Any]
    ratings: list[Rating]
    stats: dict[str, BotStats]
    cross: dict[str, dict[str, tuple[float, int]]]
    """``cross[a][b] = (score of a against b, games)``: 1 for finishing ahead, ½ a tie."""
    games: int
    duplicate_sets: int = 0
    """Duplicate sets played."""
    boards: int = 0
    """Boards played: the bootstrap's unit (every group and table that played a board
    shares its luck). Below 2 the intervals cannot be estimated at all, and below
    :data:`FEW_BOARDS` they are rough."""
    unrated: list[str] = field(default_factory=list)
    """Bots of the ladder with no game (left out, or not reached yet): not rated."""
    scheduled: int | None = None
    """Games of the ladder's schedule (None when the results file cannot say)."""
    finished: bool = False
    """Every scheduled game has been played."""
    partial_sets: int = 0
    """Duplicate sets with some, not all, games recorded: not rated (:mod:`.sets`)."""
    partial_games: int = 0
    """The games of those sets."""
    retired_games: int = 0
    """Games of bots (or versions) no longer in the ladder: kept, not rated."""
    anchor: list[str] = field(default_factory=list)
    """The bots whose mean is 1500 when the data separate some bots (the largest strongly
    connected part of "who finished ahead of whom"); empty when it is every bot."""


SEED_WITHHELD = ("the ladder is not finished ({done} of {scheduled} games): its master seed "
                 "gives away every deal; `moon ladder show --reveal-seed` includes it")


def schedule_progress(store: ResultsStore, meta: dict[str, Any]) -> tuple[int, int] | None:
    """``(games played, games scheduled)`` of the ladder a results file holds (its bots,
    players, boards, seed and gauntlet, from its meta), or None when the meta does not say
    enough."""
    try:
        names = [b["name"] for b in meta["bots"]]
        versions = {b["name"]: b.get("version", "") for b in meta["bots"]}
        schedule = make_schedule(names, int(meta["players"]), int(meta["boards"]),
                                 int(meta["seed"]), meta.get("gauntlet") or (), versions)
    except (KeyError, TypeError, ValueError):
        return None
    done = store.done_ids()
    return sum(1 for g in schedule if g.game_id in done), len(schedule)


def build_report(store: ResultsStore, bootstrap: int = 200,
                 reveal_seed: bool = False) -> LadderReport:
    """Compute the report from a results file. The master seed (``meta["seed"]``) is None,
    and ``meta["seed_withheld"]`` says why, while the ladder is not finished, unless
    ``reveal_seed`` (docs/ladder.md: the seed gives away every deal). Only complete
    duplicate sets of the ladder's entries are rated and counted (:mod:`.sets`); the
    others are counted apart."""
    meta = store.meta()
    progress = schedule_progress(store, meta)
    finished = progress is not None and progress[0] == progress[1]
    if "seed" in meta and not finished and not reveal_seed:
        done, scheduled = progress or ("?", "?")
        meta["seed"] = None
        if isinstance(meta.get("settings"), dict):
            meta["settings"] = {**meta["settings"], "seed": None}
        meta["seed_withheld"] = SEED_WITHHELD.format(done=done, scheduled=scheduled)
    entries = [(e[0], e[1]) for e in meta["entries"]] if "entries" in meta else None
    view = rated_view(store.games(), entries)
    games = view.games
    bots = [view.labels[e] for e in entries or [] if e in view.labels]
    for g in games:
        for b in g.seats:
            if b not in bots:
                bots.append(b)
    played = {b for g in games for b in g.seats}
    rated = [b for b in bots if b in played]
    fit = ladder_fit(games, rated, bootstrap=bootstrap)
    ratings = leaderboard(fit)
    anchor = [r.bot for r in ratings if r.bot in fit.anchor_bots] \
        if len(fit.anchor_bots) < len(rated) else []
    stats = {b: BotStats(b) for b in bots}
    for g in games:
        side: Callable[[int], int] = (lambda s: s) if g.players == 3 else (lambda s: s % 2)
        for b in set(g.seats):
            stats[b].games += 1
            seat = g.seats.index(b)
            if g.places[side(seat)] == 1 and g.places.count(1) == 1:
                stats[b].wins += 1
    seat_bot = {(g.game_id, s): b for g in games for s, b in enumerate(g.seats)}
    players = {g.game_id: g.players for g in games}
    for h in store.finished_hands():
        if h.game_id not in players:  # recorded after we listed the games (a live ladder)
            continue
        n = players[h.game_id]
        for s in range(n):
            b = seat_bot[(h.game_id, s)]
            stats[b].hands += 1
            stats[b].points += h.deltas[s if n == 3 else s % 2]
        if h.bidder is not None:
            b = seat_bot[(h.game_id, h.bidder)]
            stats[b].auctions_won += 1
            stats[b].contracts_made += int(bool(h.made))
            if h.bid == 21:
                stats[b].moons_tried += 1
                stats[b].moons_made += int(bool(h.made))
    # a bot that sits twice at a table (2-bot ladders) counts each hand once per seat
    for f in store.faults():
        if f.game_id not in players:  # not rated (a partial set, a retired bot)
            continue
        b = seat_bot[(f.game_id, f.seat)]
        c = Counter(stats[b].faults)
        c[f.reason] += 1
        stats[b].faults = dict(c)
        stats[b].forfeits += f.forfeit
    cross = head_to_head_table(games)
    return LadderReport(meta, ratings, stats, cross, len(games),
                        duplicate_sets=len({g.dset for g in games}),
                        boards=len({g.board for g in games}),
                        unrated=[b for b in bots if b not in played],
                        scheduled=progress[1] if progress else None, finished=finished,
                        partial_sets=view.partial_sets, partial_games=view.partial_games,
                        retired_games=view.retired_games, anchor=anchor)


DASH = "–"
"""A figure that does not exist (a share of nothing), as the tables show it."""

FEW_BOARDS = 8
"""Fewer boards than this: the report warns that the intervals are rough (wide, and their
width itself uncertain: it is estimated from so few boards)."""


def _notes(rep: LadderReport) -> list[str]:
    """One line per bot whose interval is one-sided or missing, saying why; one line when
    all share the reason."""
    noted = [(r.bot, r.note) for r in rep.ratings if r.note]
    if not noted or rep.boards < 2:     # the warning below says it
        return []
    if len(noted) == len(rep.ratings) and len({n for _, n in noted}) == 1:
        return [f"no interval: {noted[0][1]}"]
    return [f"{b}: {n}" for b, n in noted]


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 board"``, ``"2 boards"`` (``many``: the plural when not ``word + "s"``)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def rules_text(meta: dict[str, Any]) -> str:
    """The ladder's rules for its title: the preset, then every option that differs from
    the preset's (``moon3 with players=4, min_bid=3``), from the results file's meta."""
    preset = str(meta.get("preset") or "")
    ruleset = meta.get("ruleset") or {}
    try:
        base = Ruleset.from_dict({"preset": preset}).to_dict() if preset else {}
    except (RulesetError, TypeError, ValueError):
        base = {}
    changed = [f"{k}={v}" for k, v in ruleset.items() if base.get(k, object()) != v]
    if not preset:
        return ", ".join(changed) or "custom rules"
    return preset + (f" with {', '.join(changed)}" if changed else "")


def time_text(meta: dict[str, Any]) -> str:
    """The time control for the title: the decision time and bank always, then every other
    field that differs from the default (``2000 ms a decision + 30000 ms bank,
    max_hands=40``); empty when the meta has none."""
    tc = meta.get("time_control") or {}
    if not tc:
        return ""
    defaults = {f.name: f.default for f in dataclasses.fields(TimeControl)}
    text = (f"{tc.get('decision_ms', defaults['decision_ms'])} ms a decision + "
            f"{tc.get('bank_ms', defaults['bank_ms'])} ms bank")
    other = [f"{k}={v}" for k, v in tc.items()
             if k not in ("decision_ms", "bank_ms") and defaults.get(k) != v]
    return text + (", " + ", ".join(other) if other else "")


def title_text(rep: LadderReport) -> str:
    """The leaderboard's title: the ladder, its games and boards, its rules (every option
    other than the preset's) and its time control, and the gauntlet if any."""
    gauntlet = rep.meta.get("gauntlet") or []
    parts = [f"ladder {rep.meta.get('name', '')}: {plural(rep.games, 'game')} on "
             f"{plural(rep.boards, 'board')}", rules_text(rep.meta)]
    tc = time_text(rep.meta)
    if tc:
        parts.append(tc)
    if gauntlet:
        parts.append(f"gauntlet of {', '.join(gauntlet)}")
    return ", ".join(parts)


def shared_ranks(ratings: Sequence[Rating]) -> list[str]:
    """The place shown for each bot of a leaderboard (best first): ``"1"``, ``"2"``, ...
    where the table tells a bot from the one above, Holm's step-down over every neighbour's
    LOS holding the whole table at 95% (:func:`arena.stats.places.places`); bots not told
    apart share the best place among them, marked ``=`` (``"2="``, ``"2="``). Without
    intervals (fewer than 2 boards) no two bots are told apart."""
    return places([r.los_next for r in ratings])


def head_to_head(rep: LadderReport, a: str, b: str) -> tuple[float, int] | None:
    """``(how often a finished ahead of b, games)`` over the games they met in (ties
    count ½), or None when they never met."""
    v = rep.cross.get(a, {}).get(b)
    return v if v and v[1] else None


def gap_beyond(rep: LadderReport, r: Rating, nxt: str) -> bool:
    """The gap from ``r`` to the next bot down says more than their games measured
    (:func:`arena.stats.head_to_head.beyond`; 3-player games only: in partnerships a
    gap between two opponents is not their share alone)."""
    h = head_to_head(rep, r.bot, nxt)
    d = r.diff_next
    if h is None or d is None or not d.determined or rep.meta.get("players") == 4:
        return False
    return beyond(d.value, h[0], h[1])


def h2h_text(rep: LadderReport, k: int) -> str:
    """The head-to-head cell of leaderboard row ``k`` against the next row: ``58% of 36``,
    marked ``*`` when the gap is beyond those games; ``never met``; empty for the last."""
    if k + 1 >= len(rep.ratings):
        return ""
    r, nxt = rep.ratings[k], rep.ratings[k + 1].bot
    h = head_to_head(rep, r.bot, nxt)
    if h is None:
        return "never met"
    return f"{share_text(h[0])} of {h[1]}" + (" *" if gap_beyond(rep, r, nxt) else "")


FAULTS_WIDTH = 16
"""The faults column's share of the width when the bot labels are fitted (it wraps)."""

LIVE_NOTE = ("The live view during the run is OpenSkill, updated game by game in the order "
             "the games finished; this leaderboard is the final fit over all games and "
             "replaces it (the two may order close bots differently).")


def _cell_width(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> list[int]:
    """The width each column takes: its widest cell or header line (nothing wraps)."""
    widths = [max((cell_len(w) for w in h.splitlines()), default=0) for h in headers]
    for row in rows:
        widths = [max(w, cell_len(c)) for w, c in zip(widths, row, strict=True)]
    return widths


def _columns(table: Table, headers: Sequence[str], rows: Sequence[Sequence[str]],
             label_width: int, wraps: Sequence[str] = ()) -> None:
    """Add ``headers`` as columns of ``table``: ``bot`` left and exactly ``label_width``
    wide; figures right and never wrapped nor cut (a rating cut in two misleads); the
    columns in ``wraps`` may wrap."""
    widths = _cell_width(rows, headers)
    for k, h in enumerate(headers):
        if h == "bot":
            table.add_column(h, min_width=label_width, max_width=label_width, no_wrap=True)
        elif h in wraps:
            table.add_column(h)
        else:
            table.add_column(h, justify="right", no_wrap=True, min_width=widths[k])


def print_report(console: Console, rep: LadderReport, live_note: bool = False) -> None:
    """Leaderboard, cross-table and per-bot statistics as tables, each explained in plain
    words under it. Bots are shown by labels that are never alike and fit the console's
    width (:mod:`arena.core.labels`); ``live_note`` says how this leaderboard relates to the
    live view that ran before it (`moon ladder run`)."""
    order = [r.bot for r in rep.ratings]
    ranks = shared_ranks(rep.ratings)
    lb_head = ("#", "bot", "rating", "vs next", "h2h ↓", "LOS ↓", "games", "win %",
               "pts/hand")
    lb_rows = []
    for i, r in enumerate(rep.ratings):
        s = rep.stats[r.bot]
        lb_rows.append((ranks[i], r.bot, r.estimate.text(),
                        "" if r.diff_next is None else r.diff_next.text(signed=True),
                        h2h_text(rep, i),
                        "" if r.los_next is None else f"{100 * r.los_next:.0f}%",
                        str(s.games), f"{100 * s.wins / s.games:.0f}%" if s.games else DASH,
                        f"{s.points_per_hand:+.2f}"))
    st_head = ("bot", "auctions\nwon", "made %", "moons\ntried", "moons\nmade", "faults",
               "forfeits")
    st_rows = []
    for b in order:
        s = rep.stats[b]
        faults = ", ".join(f"{k} {v}" for k, v in sorted(s.faults.items())) or DASH
        st_rows.append((b, str(s.auctions_won),
                        DASH if s.made_pct is None else f"{s.made_pct:.0f}%",
                        str(s.moons_tried), str(s.moons_made), clean_line(faults),
                        str(s.forfeits)))
    full = unique_labels(order)
    longest = max((cell_len(x) for x in full), default=1)
    room = []
    for head, rows in ((lb_head, lb_rows), (st_head, st_rows)):
        widths = _cell_width(rows, head)
        if "faults" in head:  # it wraps: count a short line of it
            widths[head.index("faults")] = min(widths[head.index("faults")], FAULTS_WIDTH)
        k = head.index("bot")
        room.append(fit_width(console.width, sum(widths) - widths[k], len(head), longest))
    labels = dict(zip(order, unique_labels(order, min(room, default=longest)), strict=True))

    width = max((cell_len(x) for x in labels.values()), default=3)
    lb = Table(title=_t(title_text(rep)), title_justify="left")
    _columns(lb, lb_head, lb_rows, width)
    for row in lb_rows:
        lb.add_row(row[0], escape(labels[row[1]]), *(_t(c) for c in row[2:]))
    console.print(lb)
    unbounded = any("n/a" in row[2] or "n/a" in row[3] for row in lb_rows)
    marked = any(row[4].endswith("*") for row in lb_rows)
    for line in _explain(rep, ranks, live_note, unbounded, marked):
        console.print(line, highlight=False)
    if not order:
        console.print("no games yet: nothing to compare")
        return
    ct = Table(title="head to head: how often the row's bot finished ahead of the column's "
                     "(ties count ½), and in how many games", title_justify="left")
    ct.add_column("#", justify="right", no_wrap=True)
    ct.add_column("bot", min_width=width, max_width=width, no_wrap=True)
    for i in range(len(order)):
        ct.add_column(f"#{i + 1}", justify="right", no_wrap=True)
    for i, a in enumerate(order):
        cells = []
        for b in order:
            v = rep.cross.get(a, {}).get(b)
            cells.append("" if a == b or v is None else f"{100 * v[0]:.0f}% ({v[1]})")
        ct.add_row(str(i + 1), escape(labels[a]), *cells)
    console.print(ct)
    console.print("columns #1, #2, ... are the bots in leaderboard order", highlight=False)
    st = Table(title="per bot", title_justify="left")
    _columns(st, st_head, st_rows, width, wraps=("faults",))
    for st_row in st_rows:
        st.add_row(escape(labels[st_row[0]]), *(escape(c) for c in st_row[1:]))
    console.print(st)
    console.print("made %: contracts made of the auctions won (– when it won none)",
                  highlight=False)


def _explain(rep: LadderReport, ranks: Sequence[str], live_note: bool,
             unbounded: bool = False, marked: bool = False) -> list[str]:
    """The plain-words lines under the leaderboard (rich markup, bot text escaped);
    ``unbounded``: the table shows an ``n/a``, which a line then explains; ``marked``: a
    head-to-head cell is marked ``*``, which a line then explains."""
    lines = []
    if rep.ratings:
        average = ("the field's average is 1500" if not rep.anchor else
                   "1500 is the average of " + _t(", ".join(rep.anchor)))
        lines.append(f"rating: strength on the Elo scale ({average}), fit "
                     f"over all {plural(rep.games, 'game')}; ± x is its 95% interval, from "
                     f"resampling whole boards ({plural(rep.boards, 'board')} here). "
                     "≥ or ≤: a one-sided bound (the data cannot bound the other side). "
                     "vs next: the difference from the next bot down, with its 95% interval. "
                     "h2h ↓: how often the bot finished ahead of the next one down in the "
                     "games they met (ties count ½), and in how many. "
                     "LOS ↓: how likely the bot is stronger than the next one down. "
                     "#: a bot has a place of its own where the whole table holds at 95%: "
                     "the chance that any of its \"stronger than the next one down\" "
                     "claims is wrong is at most 5% (Holm's step-down over the neighbours' "
                     "LOS).")
    if rep.anchor:
        outside = [r.bot for r in rep.ratings if r.bot not in rep.anchor]
        lines.append("the scale is anchored on " + _t(", ".join(rep.anchor)) + ": each "
                     "finished both ahead of and behind the others, directly or through "
                     "others, so the games measure their gaps; "
                     + _t(", ".join(outside)) + (" is" if len(outside) == 1 else " are")
                     + " rated by a bound from them (the lines below say why).")
    if marked:
        lines.append("*: the gap says more than the games between the two measured (the "
                     "share it implies, 1 / (1 + 10^(−gap/400)), is outside the 95% "
                     "interval of the observed one): quote the games, not the gap.")
    if unbounded:
        lines.append("n/a: the data bound it on neither side (a bot never behind one bot and "
                     "never ahead of another, or never compared with one), or show no spread "
                     "(1 board, or every board alike); the lines below say which.")
    if any(r.endswith("=") for r in ranks):
        shared = next(r for r in ranks if r.endswith("="))
        lines.append(f"{shared} (a place with =): these bots share a place; the table "
                     "cannot tell them apart at 95% as a whole.")
    lines += [f"  {_t(x)}" for x in _notes(rep)]
    if rep.boards < FEW_BOARDS and rep.ratings:
        lines.append(f"[yellow]only {plural(rep.boards, 'board')}[/]: "
                     + ("no interval can be estimated (it needs at least 2 boards)"
                        if rep.boards < 2
                        else f"the intervals are wide and rough (fewer than {FEW_BOARDS} "
                             "boards), and so are the LOS")
                     + "; play more boards (boards = N) for figures worth quoting")
    if live_note and rep.ratings:
        lines.append(LIVE_NOTE)
    if rep.unrated:
        lines.append(f"not rated (no games): {_t(', '.join(rep.unrated))}")
    if rep.partial_sets:
        lines.append(f"not rated yet: {plural(rep.partial_sets, 'duplicate set')} with only "
                     f"{plural(rep.partial_games, 'game')} played (a set is rated once "
                     "complete: run the ladder again to finish it)")
    if rep.retired_games:
        lines.append(f"not rated: {plural(rep.retired_games, 'game')} of bots or versions no "
                     "longer in the ladder (kept in the results file)")
    for name, why in (rep.meta.get("left_out") or {}).items():
        lines.append(f"[red]left out[/] of the last run: {_t(name)}: {escape(clean(why))}")
    return lines


ROW_FIELDS = ("rank", "bot", "rating", "ci_low", "ci_high", "ci_note", "los_next",
              "diff_next", "diff_next_low", "diff_next_high", "games", "wins",
              "points_per_hand", "auctions_won", "contracts_made", "made_pct", "moons_tried",
              "moons_made", "forfeits", "faults", "duplicate_sets", "boards", "place",
              "h2h_next", "h2h_next_games", "h2h_next_beyond")
"""The columns of :func:`report_rows` (and of the CSV export, even with no row)."""


def _round(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def report_rows(rep: LadderReport) -> list[dict[str, Any]]:
    """One flat row per bot (for CSV / JSON). An end of an interval the data cannot give
    (one-sided, or no interval: fewer than 2 boards, no spread) is None (empty in CSV),
    never a false certainty; ``ci_note`` says why. A rating the data leave open (the bot
    never lost, or never won, a comparison with some other) is None too: its bound is the
    figure to quote. ``diff_next*`` is the difference from the next bot down with its 95%
    interval; ``place`` the table's place (``2=`` shared); ``h2h_next`` and
    ``h2h_next_games`` how often the bot finished ahead of the next one down and in how
    many games (None when they never met), ``h2h_next_beyond`` whether the gap says more
    than those games measured."""
    rows = []
    shown = shared_ranks(rep.ratings)
    for i, r in enumerate(rep.ratings, 1):
        s = rep.stats[r.bot]
        d = r.diff_next
        nxt = rep.ratings[i].bot if i < len(rep.ratings) else None
        h = head_to_head(rep, r.bot, nxt) if nxt else None
        rows.append({
            "rank": i, "bot": r.bot,
            "rating": round(r.rating, 1) if r.determined else None,
            "ci_low": _round(r.low), "ci_high": _round(r.high), "ci_note": r.note,
            "los_next": _round(r.los_next, 4),
            "diff_next": None if d is None or not d.determined else round(d.value, 1),
            "diff_next_low": None if d is None else _round(d.low),
            "diff_next_high": None if d is None else _round(d.high),
            "games": s.games,
            "wins": s.wins, "points_per_hand": round(s.points_per_hand, 4),
            "auctions_won": s.auctions_won, "contracts_made": s.contracts_made,
            "made_pct": _round(s.made_pct, 2), "moons_tried": s.moons_tried,
            "moons_made": s.moons_made, "forfeits": s.forfeits,
            "faults": ";".join(f"{k}={v}" for k, v in sorted(s.faults.items())),
            "duplicate_sets": rep.duplicate_sets, "boards": rep.boards,
            "place": shown[i - 1], "h2h_next": None if h is None else round(h[0], 4),
            "h2h_next_games": None if h is None else h[1],
            "h2h_next_beyond": None if nxt is None else gap_beyond(rep, r, nxt),
        })
    return rows


def export(rep: LadderReport, fmt: str) -> str:
    """The report as ``csv`` (one row per bot) or ``json`` (leaderboard, cross-table,
    stats, meta)."""
    rows = report_rows(rep)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=ROW_FIELDS)
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()
    return json.dumps({
        "ladder": rep.meta, "games": rep.games, "duplicate_sets": rep.duplicate_sets,
        "boards": rep.boards, "unrated": rep.unrated, "leaderboard": rows,
        "partial_sets": rep.partial_sets, "partial_games": rep.partial_games,
        "retired_games": rep.retired_games,
        "cross_table": {a: {b: {"score": round(v[0], 4), "games": v[1]} for b, v in row.items()}
                        for a, row in rep.cross.items()},
        "stats": {b: asdict(s) for b, s in rep.stats.items()},
    }, indent=1)
