"""Ladder results for people and tools: leaderboard, cross-table, per-bot statistics, and
CSV / JSON exports. Everything is computed from the results file alone."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..text import clean, clean_line
from .ratings import Rating, rate
from .schedule import make_schedule
from .sets import rated_view
from .store import ResultsStore


def _t(x: object) -> str:
    """Text of a results file (bot names, reasons) for a rich table: control characters
    shown as escapes (:mod:`arena.text`), markup escaped."""
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
    def made_pct(self) -> float:
        """Contracts made, % of auctions won."""
        return 100.0 * self.contracts_made / self.auctions_won if self.auctions_won else 0.0


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
    ratings = rate(games, [b for b in bots if b in played], bootstrap=bootstrap)
    stats = {b: BotStats(b) for b in bots}
    cross_acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for g in games:
        side = (lambda s: s) if g.players == 3 else (lambda s: s % 2)
        for b in set(g.seats):
            stats[b].games += 1
            seat = g.seats.index(b)
            if g.places[side(seat)] == 1 and g.places.count(1) == 1:
                stats[b].wins += 1
        # once per pair of sides: a partnership of a bot with its copy is one side
        met: set[tuple[int, int, str, str]] = set()
        for i, a in enumerate(g.seats):
            for j, b in enumerate(g.seats):
                key = (side(i), side(j), a, b)
                if a == b or side(i) == side(j) or key in met:
                    continue
                met.add(key)
                pa, pb = g.places[side(i)], g.places[side(j)]
                cross_acc[a][b].append(1.0 if pa < pb else 0.5 if pa == pb else 0.0)
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
    cross = {a: {b: (sum(v) / len(v), len(v)) for b, v in row.items()}
             for a, row in cross_acc.items()}
    return LadderReport(meta, ratings, stats, cross, len(games),
                        duplicate_sets=len({g.dset for g in games}),
                        boards=len({g.board for g in games}),
                        unrated=[b for b in bots if b not in played],
                        scheduled=progress[1] if progress else None, finished=finished,
                        partial_sets=view.partial_sets, partial_games=view.partial_games,
                        retired_games=view.retired_games)


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


def print_report(console: Console, rep: LadderReport) -> None:
    """Leaderboard, cross-table and per-bot statistics as tables."""
    gauntlet = rep.meta.get("gauntlet") or []
    title = (f"ladder {rep.meta.get('name', '')}: {rep.games} games, "
             f"{rep.meta.get('preset', '')}, {rep.meta.get('boards', '?')} boards"
             + (f", gauntlet of {', '.join(gauntlet)}" if gauntlet else ""))
    lb = Table(title=_t(title), caption="rating ± x: its 95% interval (≥ or ≤: a one-sided "
               "bound, the data cannot bound the other side). vs next: the difference from the "
               "next bot down, with its 95% interval. LOS ↓: how likely it is stronger than "
               "the next bot down")
    for col, j in (("#", "right"), ("bot", "left"), ("rating", "right"), ("vs next", "right"),
                   ("LOS ↓", "right"), ("games", "right"), ("win %", "right"),
                   ("pts/hand", "right")):
        # figures never wrap (a rating cut in two misleads); on a narrow terminal the bot
        # names give way first
        lb.add_column(col, justify=j, no_wrap=col != "bot",  # type: ignore[arg-type]
                      min_width=8 if col == "bot" else None)
    for i, r in enumerate(rep.ratings, 1):
        s = rep.stats[r.bot]
        lb.add_row(str(i), _t(r.bot), r.estimate.text(),
                   "" if r.diff_next is None else r.diff_next.text(signed=True),
                   "" if r.los_next is None else f"{100 * r.los_next:.0f}%",
                   str(s.games),
                   f"{100 * s.wins / s.games:.0f}%" if s.games else "-",
                   f"{s.points_per_hand:+.2f}")
    console.print(lb)
    for line in _notes(rep):
        console.print(f"  {_t(line)}")
    if rep.boards < FEW_BOARDS and rep.ratings:
        console.print(f"[yellow]only {rep.boards} board{'s' if rep.boards != 1 else ''}[/]: "
                      + ("no interval can be estimated" if rep.boards < 2
                         else "the intervals and LOS are rough")
                      + "; play more boards (boards = N) for figures worth quoting")
    if rep.unrated:
        console.print(f"not rated (no games): {_t(', '.join(rep.unrated))}")
    if rep.partial_sets:
        console.print(f"not rated yet: {rep.partial_sets} duplicate set(s) with only "
                      f"{rep.partial_games} of their games played (a set is rated once "
                      "complete: run the ladder again to finish them)")
    if rep.retired_games:
        console.print(f"not rated: {rep.retired_games} game(s) of bots or versions no longer "
                      "in the ladder (kept in the results file)")
    for name, why in (rep.meta.get("left_out") or {}).items():
        console.print(f"[red]left out[/] of the last run: {_t(name)}: {escape(clean(why))}")
    order = [r.bot for r in rep.ratings]
    if not order:
        console.print("no games yet: nothing to compare")
        return
    ct = Table(title="head to head: row finished ahead of column (ties ½), games")
    ct.add_column("")
    for b in order:
        ct.add_column(_t(b), justify="right")
    for a in order:
        cells = []
        for b in order:
            v = rep.cross.get(a, {}).get(b)
            cells.append("" if a == b or v is None else f"{100 * v[0]:.0f}% ({v[1]})")
        ct.add_row(_t(a), *cells)
    console.print(ct)
    st = Table(title="per bot")
    for col in ("bot", "auctions won", "made %", "moons tried", "moons made", "faults",
                "forfeits"):
        st.add_column(col, justify="left" if col in ("bot", "faults") else "right")
    for b in order:
        s = rep.stats[b]
        faults = _t(", ".join(f"{k} {v}" for k, v in sorted(s.faults.items())) or "-")
        st.add_row(_t(b), str(s.auctions_won), f"{s.made_pct:.0f}%", str(s.moons_tried),
                   str(s.moons_made), faults, str(s.forfeits))
    console.print(st)


ROW_FIELDS = ("rank", "bot", "rating", "ci_low", "ci_high", "ci_note", "los_next",
              "diff_next", "diff_next_low", "diff_next_high", "games", "wins",
              "points_per_hand", "auctions_won", "contracts_made", "made_pct", "moons_tried",
              "moons_made", "forfeits", "faults", "duplicate_sets", "boards")
"""The columns of :func:`report_rows` (and of the CSV export, even with no row)."""


def _round(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def report_rows(rep: LadderReport) -> list[dict[str, Any]]:
    """One flat row per bot (for CSV / JSON). An end of an interval the data cannot give
    (one-sided, or no interval: fewer than 2 boards, no spread) is None (empty in CSV),
    never a false certainty; ``ci_note`` says why. A rating the data leave open (the bot
    never lost, or never won, a comparison with some other) is None too: its bound is the
    figure to quote. ``diff_next*`` is the difference from the next bot down with its 95%
    interval."""
    rows = []
    for i, r in enumerate(rep.ratings, 1):
        s = rep.stats[r.bot]
        d = r.diff_next
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
            "made_pct": round(s.made_pct, 2), "moons_tried": s.moons_tried,
            "moons_made": s.moons_made, "forfeits": s.forfeits,
            "faults": ";".join(f"{k}={v}" for k, v in sorted(s.faults.items())),
            "duplicate_sets": rep.duplicate_sets, "boards": rep.boards,
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
