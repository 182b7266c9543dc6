"""A/B matches: is bot A stronger than bot B? (docs/match.md)

A match plays A against B on duplicate boards, board after board, through a
:class:`~arena.executor.local.GameExecutor`, and records every game in a results file
(:class:`~arena.ladder.store.ResultsStore`, kind ``"match"``) as a ladder does: killed at
any moment it loses no finished game, and a later run resumes it.

- **3 players**: on each board, A, B and each third bot (``against``) in all 6 seatings
  (:func:`arena.ladder.schedule.match_board`).
- **4 players**: A's partnership (A and a copy) against B's (B and a copy) at two tables
  with the partnerships swapped.

**The unit is a board**: all its games share the deal, so its score (A's mean result
against B over its games, :func:`arena.stats.match.game_result`) is one draw of the
pentanomial-style model of :mod:`arena.stats.match`. **What counts** is a function of the
recorded games alone, so that a match shows the same figures however often it was stopped
and resumed: boards are taken in order from board 0 while complete (every game recorded);
with an SPRT, the test is run after each, and the first board at which its LLR crosses a
bound gives the verdict and is the last counted. A board left incomplete (a kill, or games
in flight at the verdict) is recorded but not counted; a later run completes it first.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from moon_sdk.rules import Ruleset

from ..bots.manifest import BotSpec
from ..bots.versions import version_label
from ..core.names import NAME_RULE, name_problem
from ..core.timecontrol import TimeControl
from ..errors import BotError, ConfigError, InfrastructureError
from ..executor.local import FinishedGame, GameExecutor, LocalExecutor
from ..stats.match import SPRT, MatchStats, SetCounts, game_result, match_stats
from .config import LadderConfig, identity_of, settings_of, version_of
from .runner import build_all, check_bot, play_voiding, records_dir
from .schedule import ScheduledGame, match_board
from .store import GameRow, ResultsStore

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits

log = logging.getLogger("arena.match")

THIRD = "heuristic"
"""The example bot that sits with A and B at 3-player tables when no ``against`` is
given."""


def unique_names(a: BotSpec, b: BotSpec, against: Sequence[BotSpec]
                 ) -> tuple[BotSpec, BotSpec, tuple[BotSpec, ...]]:
    """The bots of a match with names that tell them apart in its results: when A and B
    share a name (two versions of one bot, or a bot against its own copy) they become
    ``<name>.A`` and ``<name>.B``; a third bot named like another gets ``.third``
    (``.third2``, ...)."""
    def renamed(s: BotSpec, suffix: str) -> BotSpec:
        return dataclasses.replace(s, name=s.name[:64 - len(suffix)] + suffix)

    if a.name == b.name:
        a, b = renamed(a, ".A"), renamed(b, ".B")
    taken = {a.name, b.name}
    thirds: list[BotSpec] = []
    for c in against:
        named, k = c, 1
        while named.name in taken:
            named = renamed(c, ".third" + (str(k) if k > 1 else ""))
            k += 1
        taken.add(named.name)
        thirds.append(named)
    return a, b, tuple(thirds)


@dataclass(frozen=True)
class MatchConfig:
    """An A/B match.

    Raises:
        ConfigError: a 3-player match without a third bot, bots for another number of
            players, or ``games`` below 1.
    """

    a: BotSpec
    b: BotSpec
    against: tuple[BotSpec, ...]
    """The third bots of 3-player tables (at least one); unused with 4 players."""
    ruleset: Ruleset
    """3 or 4 players."""
    preset: str
    seed: int
    """The master seed: board k's deal is :func:`arena.ladder.schedule.board_seed` of it."""
    time_control: TimeControl
    concurrency: int = 1
    games: int | None = None
    """Stop after this many games (rounded up to whole boards); None: no limit (an SPRT
    stops the match)."""
    sprt: SPRT | None = None
    check: bool = True
    """Play each bot's admission check (one hand against itself) first."""
    fork_server: bool | None = None
    """Fork Python SDK bots (:attr:`arena.ladder.config.LadderConfig.fork_server`)."""
    docker_limits: DockerLimits | None = None
    versions: dict[str, str] = field(default_factory=dict)
    """Each bot's version by name (:func:`arena.ladder.config.version_of`)."""

    def __post_init__(self) -> None:
        players = self.ruleset.players
        if players == 3 and not self.against:
            raise ConfigError("a 3-player match needs a third bot (--against)")
        if self.games is not None and self.games < 1:
            raise ConfigError(f"--games {self.games}: must be at least 1")
        if self.games is None and self.sprt is None:
            raise ConfigError("a match needs a stopping rule: --games N, --sprt, or both")
        for s in (self.a, self.b, *self.thirds):
            problem = name_problem(s.name)
            if problem:
                raise ConfigError(f"bot {s.name!r}: {problem} ({NAME_RULE})")

    @property
    def players(self) -> int:
        """Seats at a table: 3 or 4."""
        return self.ruleset.players

    @property
    def thirds(self) -> tuple[BotSpec, ...]:
        """The third bots that play (none with 4 players)."""
        return self.against if self.players == 3 else ()

    @property
    def unit(self) -> int:
        """Games of one board: 6 per third bot with 3 players, 2 with 4."""
        return 6 * len(self.thirds) if self.players == 3 else 2

    @property
    def boards(self) -> int | None:
        """Boards to play at most (``games`` rounded up to whole boards), or None."""
        return None if self.games is None else math.ceil(self.games / self.unit)

    def entry(self, spec: BotSpec) -> str:
        """``name@version`` of one of its bots."""
        return version_label(spec.name, self.versions.get(spec.name, ""))

    def settings(self) -> dict[str, Any]:
        """What every game of its results file shares: the ladder's settings
        (:func:`arena.ladder.config.settings_of`) and the bots, each ``name@version``: a
        file holds one match, of one A against one B."""
        return {**settings_of(self.ruleset, self.seed, self.time_control),
                "match": {"a": self.entry(self.a), "b": self.entry(self.b),
                          "against": [self.entry(c) for c in self.thirds]}}

    def identity(self) -> str:
        """A hash of :meth:`settings`."""
        return identity_of(self.settings())

    def as_ladder(self) -> LadderConfig:
        """The same bots, rules and clocks as a ladder's (for its build stage and admission
        checks)."""
        return LadderConfig(
            name="match", preset=self.preset, ruleset=self.ruleset, boards=1, seed=self.seed,
            concurrency=self.concurrency, time_control=self.time_control,
            bots=(self.a, self.b, *self.thirds), docker_limits=self.docker_limits,
            check=self.check, versions=self.versions, fork_server=self.fork_server)

    def board_games(self, board: int) -> list[ScheduledGame]:
        """The games of board ``board`` (:func:`arena.ladder.schedule.match_board`)."""
        return match_board(self.a.name, self.b.name, [c.name for c in self.thirds],
                           self.players, board, self.seed, self.versions)


def make_match(a: BotSpec, b: BotSpec, against: Sequence[BotSpec], ruleset: Ruleset,
               preset: str, seed: int, time_control: TimeControl, **kw: Any) -> MatchConfig:
    """A :class:`MatchConfig` with unique names (:func:`unique_names`) and each bot's
    version taken now; ``kw`` are its other fields.

    Raises:
        ConfigError: see :class:`MatchConfig`; a bot folder that cannot be read.
    """
    a, b, thirds = unique_names(a, b, against if ruleset.players == 3 else ())
    versions = {s.name: version_of(s) for s in (a, b, *thirds)}
    return MatchConfig(a, b, thirds, ruleset, preset, seed, time_control, versions=versions,
                       **kw)


def open_match(cfg: MatchConfig, results: Path, hold: str | None = "moon match"
               ) -> ResultsStore:
    """Open (or create) a match's results file and hold it for this run.

    Raises:
        ConfigError: another run holds it; it holds a ladder, another match (other bots
            or versions) or other settings (the message names each difference).
    """
    store = ResultsStore(results, cfg.identity(), meta={
        "kind": "match", "settings": cfg.settings(), "preset": cfg.preset,
        "players": cfg.players, "seed": cfg.seed, "unit": cfg.unit,
        "a": cfg.a.name, "b": cfg.b.name, "against": [c.name for c in cfg.thirds],
        "entries": {s.name: cfg.entry(s) for s in (cfg.a, cfg.b, *cfg.thirds)},
    }, hold=hold)
    try:
        store.set_meta("sprt", None if cfg.sprt is None else dataclasses.asdict(cfg.sprt))
        store.set_meta("games_limit", cfg.games)
    except BaseException:
        store.close()
        raise
    return store


def a_result(game: GameRow, a: str, b: str) -> float:
    """A's result against B in one recorded game: 1 ahead, ½ tied, 0 behind (a side is a
    seat with 3 players, a partnership with 4)."""
    side: Callable[[int], int] = (lambda s: s) if game.players == 3 else (lambda s: s % 2)
    return game_result(game.places[side(game.seats.index(a))],
                       game.places[side(game.seats.index(b))])


@dataclass(frozen=True)
class BoardScore:
    """One board of a match as recorded."""

    board: int
    games: int
    """Its games recorded."""
    score: float | None
    """A's mean result against B over them; None with none."""
    counted: bool
    """Among the boards the figures count."""
    llr: float | None = None
    """With an SPRT, the LLR after this board (counted boards only)."""


@dataclass(frozen=True)
class MatchStatus:
    """What a match's recorded games say (see the module doc for what counts)."""

    games: int
    """Games recorded."""
    counted_games: int
    """Games of the counted boards."""
    counts: SetCounts
    """Set counts of the counted boards (``counts.games`` = games a board)."""
    stats: MatchStats
    llr: float | None
    """The LLR of the counted boards (None without an SPRT)."""
    sprt: SPRT | None
    verdict: str | None
    """``"H1"``, ``"H0"`` or None (no bound crossed)."""
    boards: list[BoardScore]

    @property
    def uncounted(self) -> int:
        """Games recorded but not counted (incomplete boards, or after the verdict)."""
        return self.games - self.counted_games


class Tally:
    """The counted boards of a match, extended as boards complete (see the module doc):
    give it every recorded game (:meth:`add`) and read :meth:`status`."""

    def __init__(self, a: str, b: str, unit: int, sprt: SPRT | None) -> None:
        self.a, self.b, self.unit, self.sprt = a, b, unit, sprt
        self.results: dict[int, list[float]] = defaultdict(list)
        self.counted = 0
        """Boards counted: 0 .. counted − 1."""
        self.counts = SetCounts(unit, (0,) * (2 * unit + 1))
        self.llrs: list[float] = []
        self.verdict: str | None = None

    def add(self, game: GameRow) -> None:
        """Count one recorded game (its board counts once complete)."""
        self.results[game.board].append(a_result(game, self.a, self.b))
        while self.verdict is None and len(self.results.get(self.counted, [])) >= self.unit:
            scores = self.results[self.counted][:self.unit]
            self.counts = self.counts.add(sum(scores) / self.unit)
            self.counted += 1
            if self.sprt is not None:
                value = self.sprt.llr(self.counts)
                self.llrs.append(value)
                self.verdict = self.sprt.decide(value)

    def status(self) -> MatchStatus:
        """The figures of the counted boards."""
        boards = [BoardScore(k, len(r), sum(r) / len(r) if r else None, k < self.counted,
                             self.llrs[k] if k < len(self.llrs) else None)
                  for k, r in sorted(self.results.items())]
        return MatchStatus(
            games=sum(len(r) for r in self.results.values()),
            counted_games=self.counted * self.unit, counts=self.counts,
            stats=match_stats(self.counts), llr=self.llrs[-1] if self.llrs else
            (None if self.sprt is None else 0.0),
            sprt=self.sprt, verdict=self.verdict, boards=boards)


def status_of(store: ResultsStore, sprt: SPRT | None = None) -> MatchStatus:
    """The status of the match a results file holds, with ``sprt`` (default: the one its
    last run used).

    Raises:
        ConfigError: the file holds no match.
    """
    meta = store.meta()
    if meta.get("kind") != "match":
        raise ConfigError(f"{store.path} holds no A/B match (a ladder's results: moon ladder "
                          "show)")
    if sprt is None and meta.get("sprt"):
        sprt = SPRT(**meta["sprt"])
    tally = Tally(meta["a"], meta["b"], int(meta["unit"]), sprt)
    for g in sorted(store.games(), key=lambda g: g.board):
        tally.add(g)
    return tally.status()


class MatchReporter(Protocol):
    """What a match run tells its user (`moon match`'s live line)."""

    def started(self, status: MatchStatus) -> None:
        """Before the first game of this run: what the file held already."""

    def game_finished(self, game: ScheduledGame, row: GameRow, status: MatchStatus) -> None:
        """A game was played and stored; ``status`` counts it."""

    def game_voided(self, game: ScheduledGame, error: InfrastructureError,
                    retry: bool) -> None:
        """A game could not be played through no bot's fault; played again if ``retry``."""

    def build_note(self, line: str) -> None:
        """Before the first game: a bot's build starts or ends (one line)."""


class _Silent:
    """The reporter of a run given none: it tells nothing."""

    def started(self, status: MatchStatus) -> None:
        pass

    def game_finished(self, game: ScheduledGame, row: GameRow, status: MatchStatus) -> None:
        pass

    def game_voided(self, game: ScheduledGame, error: InfrastructureError,
                    retry: bool) -> None:
        pass

    def build_note(self, line: str) -> None:
        pass


@dataclass
class MatchSummary:
    """What one run did and what the match says after it."""

    status: MatchStatus
    played: int = 0
    voided: int = 0


class MatchRun:
    """One run of a match over its results file: build, admission checks, then boards in
    order until the SPRT decides or the game limit is reached, ``executor.capacity`` games
    at once. Games in flight when the verdict comes are finished and recorded (not
    counted).

    Raises (from :meth:`run`):
        BotError: A's, B's or a third bot's build or admission check failed.
        InfrastructureError: a game could not be played after :data:`VOID_RETRIES`
            replays (the games recorded so far are kept).
    """

    def __init__(self, cfg: MatchConfig, store: ResultsStore, results: Path,
                 executor: GameExecutor | None = None,
                 reporter: MatchReporter | None = None) -> None:
        self.cfg = cfg
        self.store = store
        self.results = results
        self.executor: GameExecutor = executor or LocalExecutor(
            records_dir(results), cfg.concurrency, fork_server=cfg.fork_server)
        self.reporter = reporter or _Silent()
        self.specs = {s.name: s for s in (cfg.a, cfg.b, *cfg.thirds)}
        self.tally = Tally(cfg.a.name, cfg.b.name, cfg.unit, cfg.sprt)
        games = sorted(store.games(), key=lambda g: g.board)
        for g in games:
            self.tally.add(g)
        self.done = {g.game_id for g in games}
        self.summary = MatchSummary(self.tally.status())
        self._queue = self._games()
        self._failure: BaseException | None = None

    def finished(self) -> bool:
        """The match is over: a verdict, or the game limit reached (every board up to it
        counted)."""
        if self.tally.verdict is not None:
            return True
        limit = self.cfg.boards
        return limit is not None and self.tally.counted >= limit

    def _games(self) -> Iterator[ScheduledGame]:
        board = 0
        while self.cfg.boards is None or board < self.cfg.boards:
            for g in self.cfg.board_games(board):
                if g.game_id not in self.done:
                    yield g
            board += 1

    async def run(self) -> MatchSummary:
        """Every stage in order; returns what the run did."""
        if self.finished():
            self.reporter.started(self.summary.status)
            return self.summary
        ladder = self.cfg.as_ladder()
        failed = build_all(ladder, records_dir(self.results) / "logs", self.reporter.build_note)
        if failed:
            name, why = next(iter(failed.items()))
            raise BotError(f"{name}: its build failed, the match cannot be played: {why}")
        async with self.executor:
            if self.cfg.check:
                bots = list(self.specs.values())
                verdicts = await asyncio.gather(*(check_bot(self.executor, s, ladder)
                                                  for s in bots))
                for s, verdict in zip(bots, verdicts, strict=True):
                    if verdict:
                        raise BotError(f"{s.name} {verdict}: the match cannot be played")
            self.reporter.started(self.summary.status)
            await asyncio.gather(*(self._worker() for _ in range(self.executor.capacity)))
        if self._failure is not None:
            raise self._failure
        self.summary.status = self.tally.status()
        return self.summary

    async def _worker(self) -> None:
        while not self.finished() and self._failure is None:
            g = next(self._queue, None)
            if g is None:
                return
            try:
                await self.play_one(g)
            except InfrastructureError as e:
                self._failure = e

    async def play_one(self, g: ScheduledGame) -> None:
        """Play game ``g``, again up to :data:`VOID_RETRIES` times if voided, and record it.

        Raises:
            InfrastructureError: every attempt was voided.
        """
        finished, error = await play_voiding(self, g)
        if finished is None:
            raise InfrastructureError(
                f"game {g.game_id} could not be played ({error}); the match stops: its "
                f"{len(self.done)} recorded games are kept, run it again to resume"
            ) from error
        self.game_finished(g, finished)

    def game_finished(self, g: ScheduledGame, finished: FinishedGame) -> None:
        """Store a played game and count it."""
        row = self.store.add_game(g, finished)
        self.done.add(g.game_id)
        self.summary.played += 1
        self.tally.add(row)
        self.summary.status = self.tally.status()
        self.reporter.game_finished(g, row, self.summary.status)


async def run_match(cfg: MatchConfig, store: ResultsStore, results: Path,
                    reporter: MatchReporter | None = None,
                    executor: GameExecutor | None = None) -> MatchSummary:
    """Play (or resume) a match until it is over (:class:`MatchRun`)."""
    return await MatchRun(cfg, store, results, executor, reporter).run()


# -- words and exports ------------------------------------------------------------------------

def _sweep(status: MatchStatus, a: str, b: str) -> str:
    """Why the Elo has one bound only, when one side won every counted board (``"mybot won
    all 4 boards"``), else "": the bound rests on the number of boards alone (docs/match.md,
    "Elo difference, interval and LOS"), so a few boards make a loose one."""
    elo, n = status.stats.elo, status.stats.sets
    if elo.two_sided or (elo.low is None and elo.high is None):
        return ""
    winner = a if elo.low is not None else b
    return f"{winner} won all {n} board{'s' if n != 1 else ''}"


def progress_line(status: MatchStatus, a: str = "A", b: str = "B") -> str:
    """One line of figures: games, A's score, Elo ± interval (with why it has one bound
    only, when one side won every board), LOS, and the LLR with its bounds
    (``LLR 1.52 (-2.94, 2.94)``)."""
    st = status.stats
    left = "" if not status.uncounted else \
        f" ({status.uncounted} not counted yet)" if status.verdict is None else \
        f" ({status.uncounted} finished after the verdict, not counted)"
    parts = [f"games {status.games}{left}",
             f"boards {st.sets}"]
    if st.sets:
        parts.append(f"{a} scores {100 * st.score:.1f}% against {b}")
        sweep = _sweep(status, a, b)
        parts.append(f"Elo {st.elo.text(signed=True)}"
                     + (f" ({sweep}: a bound, not an estimate; more games narrow it)"
                        if sweep else ""))
        if st.los is not None:
            parts.append(f"LOS {100 * st.los:.1f}%")
    if status.sprt is not None and status.llr is not None:
        parts.append(f"LLR {status.llr:.2f} ({status.sprt.lower:.2f}, {status.sprt.upper:.2f})")
    return " · ".join(parts)


def verdict_line(status: MatchStatus, a: str = "A", b: str = "B") -> str:
    """The final word on a match."""
    sprt, n = status.sprt, status.stats.sets
    where = f"after {n} board{'s' if n != 1 else ''} ({status.counted_games} games)"
    if sprt is not None and status.verdict == "H1":
        return (f"H1 accepted: {a} is stronger than {b} (elo1 = {sprt.elo1:g}); LLR "
                f"{status.llr:.2f} ≥ {sprt.upper:.2f} {where}")
    if sprt is not None and status.verdict == "H0":
        elo = status.stats.elo.text(signed=True)
        return (f"H0 accepted: {a} is not stronger than {b} by elo1 = {sprt.elo1:g} (the "
                f"games favour a difference of at most elo0 = {sprt.elo0:g}; measured Elo "
                f"{elo}); LLR {status.llr:.2f} ≤ {sprt.lower:.2f} {where}")
    elo = status.stats.elo.text(signed=True)
    if sprt is not None:
        sweep = _sweep(status, a, b)
        return (f"no verdict yet {where}: LLR {status.llr or 0:.2f} is between "
                f"{sprt.lower:.2f} and {sprt.upper:.2f}; Elo {elo}"
                + (f" ({sweep}: a bound, not an estimate)" if sweep else
                   f" (no interval: {status.stats.elo.note})" if status.stats.elo.note else "")
                + "; play on (a larger --games) to decide")
    los = "" if status.stats.los is None else f", LOS {100 * status.stats.los:.1f}%"
    why = f" (no interval: {status.stats.elo.note})" if status.stats.elo.note else ""
    sweep = _sweep(status, a, b)
    if sweep:
        why = (f": {sweep}, so the Elo has one bound only, and {n} board"
               f"{'s' if n != 1 else ''} make a loose one; more games (--games) narrow it")
    return f"{a} against {b}: Elo {elo}{los} {where}{why}"


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, 3)


BOARD_FIELDS = ("board", "games", "score", "counted", "llr")
"""The columns of the CSV export: one row per recorded board."""


def export_match(store: ResultsStore, status: MatchStatus, fmt: str) -> str:
    """A match as ``csv`` (one row per board: its games, A's score, whether counted, the
    LLR after it) or ``json`` (the match, the counted figures, the verdict, and the
    boards)."""
    rows = [{"board": x.board, "games": x.games,
             "score": None if x.score is None else round(x.score, 6), "counted": x.counted,
             "llr": None if x.llr is None else round(x.llr, 6)} for x in status.boards]
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=BOARD_FIELDS)
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()
    import json

    st, sprt = status.stats, status.sprt
    return json.dumps({
        "match": store.meta(), "games": status.games, "counted_games": status.counted_games,
        "boards": st.sets, "set_counts": list(status.counts.counts),
        "games_per_board": status.counts.games,
        "score": _finite(st.score), "elo": _finite(st.elo.value), "elo_low": _finite(st.elo.low),
        "elo_high": _finite(st.elo.high), "elo_note": st.elo.note,
        "los": _finite(st.los),
        "sprt": None if sprt is None else {**dataclasses.asdict(sprt), "lower": sprt.lower,
                                            "upper": sprt.upper},
        "llr": None if status.llr is None else round(status.llr, 6),
        "verdict": status.verdict, "board_scores": rows,
    }, indent=1)


__all__ = ["THIRD", "BoardScore", "MatchConfig", "MatchReporter", "MatchRun", "MatchStatus",
           "MatchSummary", "Tally", "a_result", "export_match", "make_match", "open_match",
           "progress_line", "run_match", "status_of", "unique_names", "verdict_line"]
