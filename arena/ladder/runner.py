"""Play a ladder's schedule through a :class:`~arena.executor.local.GameExecutor`, saving each
finished game, and tell a :class:`Reporter` what happens.

A run goes through stages, a method each (in the manner of cutechess's tournament):
:meth:`LadderRun.build` (every bot's build), :meth:`LadderRun.admit` (each bot's
admission check), :meth:`LadderRun.plan` (what this run will play), then
:meth:`LadderRun.play_one` for each game, as many at once as the executor's capacity,
and :meth:`LadderRun.game_finished` for each result. The run owns the ladder's policy
(which games, replays of voided ones, dropping a bot after ``max_forfeits``); the
executor owns how games are played.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import glob
import logging
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import sandbox
from ..bots.manifest import BotSpec
from ..bots.versions import version_label
from ..core.results import Termination
from ..core.text import build_error
from ..errors import ArenaError, ConfigError, InfrastructureError
from ..executor.local import FinishedGame, GameExecutor, GameRequest, LocalExecutor
from .config import LadderConfig
from .schedule import ScheduledGame, check_seed, make_schedule
from .store import GameRow, ResultsStore

log = logging.getLogger("arena.ladder")

VOID_RETRIES = 2
"""How often a game voided by an infrastructure fault is played again in one run."""


@dataclass
class RunSummary:
    """What one run did (counts of games, and the bots it left out)."""

    scheduled: int
    """Games of the whole schedule (this ladder's boards and format)."""
    already_done: int
    """Of them, games the results file held before this run."""
    played: int = 0
    voided: int = 0
    """Games voided by an infrastructure fault (each replay counts again)."""
    skipped_bots: dict[str, str] = field(default_factory=dict)
    """Bots left out before the first game (build failed, failed the admission check, or
    had forfeited ``max_forfeits`` games already), with the reason."""
    dropped_bots: dict[str, str] = field(default_factory=dict)
    """Bots left out during the run (``max_forfeits`` reached), with the reason; their
    games not yet played were skipped."""
    skipped_games: int = 0
    """Scheduled games not played because a bot in them was dropped."""
    to_play: int = 0
    """Games this run means to play: not done yet, and no bot in them left out."""


class Reporter:
    """What a ladder run tells its user (a progress bar, live ratings, a log). Every
    method does nothing here: override the ones you show (fastchess's ``output``)."""

    def bot_left_out(self, bot: str, why: str) -> None:
        """Before the first game: ``bot`` will not play in this run (its build failed, it
        failed its admission check, or it had forfeited ``max_forfeits`` games)."""

    def bot_output(self, bot: str, lines: list[str], record: Path | None) -> None:
        """Right after :meth:`bot_left_out` for a failed admission check: the last lines
        of the bot's output in that game (at most :data:`CHECK_OUTPUT_LINES`, oldest first;
        the bot's own text: make it safe before printing, :mod:`arena.core.text`) and the
        game's record (None when none was written). Not called when it wrote nothing."""

    def build_note(self, line: str) -> None:
        """Before the admission checks: a bot's build starts (``building NAME
        (COMMAND)...``) or ends (``built NAME in 12.3 s``)."""

    def planned(self, summary: RunSummary) -> None:
        """The plan is made: ``summary.to_play`` games are coming, after
        ``summary.already_done`` of ``summary.scheduled`` done before."""

    def game_finished(self, game: ScheduledGame, finished: FinishedGame, row: GameRow) -> None:
        """A game was played and stored (``row``, as the results file holds it)."""

    def game_voided(self, game: ScheduledGame, error: InfrastructureError,
                    retry: bool) -> None:
        """A game could not be played through no bot's fault (``error`` says why); it is
        played again if ``retry``, else left for a later run."""

    def game_skipped(self, game: ScheduledGame, why: str) -> None:
        """A planned game will not be played in this run (a bot in it was dropped)."""

    def bot_dropped(self, bot: str, why: str) -> None:
        """During the run: ``bot`` reached ``max_forfeits``; its games not yet started are
        skipped."""

    def run_finished(self, summary: RunSummary) -> None:
        """Every game of the plan was played, voided or skipped."""


def records_dir(results: Path) -> Path:
    """Where a results file's game records go: ``<results>.records/`` beside it."""
    return results.with_name(results.name + ".records")


def open_store(cfg: LadderConfig, results: Path,
               hold: str | None = "moon ladder run") -> ResultsStore:
    """Open (or create) the results file of ``cfg`` and hold it for this run
    (:func:`arena.ladder.store.hold_results`; ``hold=None`` holds nothing). Its bots,
    their versions and the ladder's entries (:mod:`arena.ladder.sets`) are brought up to
    date with ``cfg``: a bot added to the ladder file joins, a removed one leaves the
    ratings, and a bot whose code changed since its games is dealt with by
    ``cfg.on_change`` (:func:`version_changes`).

    Raises:
        ConfigError: another run holds the file; it holds other settings (the message
            names each one) or is damaged; a bot's code changed and ``cfg.on_change`` is
            ``"refuse"`` (the message names the bot, both versions and the choices).
    """
    bots = [{"name": b.name, "version": cfg.versions.get(b.name, ""),
             "folder": str(b.folder), "runner": b.runner} for b in cfg.bots]
    store = ResultsStore(results, cfg.identity(), meta={
        "kind": "ladder", "settings": cfg.settings(),
        "name": cfg.name, "preset": cfg.preset, "ruleset": cfg.ruleset.to_dict(),
        "seed": cfg.seed, "players": cfg.ruleset.players,
        "time_control": cfg.time_control.__dict__,
    }, hold=hold)
    try:
        meta = store.meta()
        changed = version_changes(cfg, store)
        if changed and cfg.on_change == "refuse":
            raise ConfigError(
                f"{results}: the code of {_changed_text(changed)} changed since its games "
                "there; it is never mixed with the old code in one rating: pass "
                "--on-change new-version to enter the new code as a new version (rated "
                "separately), --on-change replace to rate only the new code, or give a new "
                "--results path")
        current = [(b.name, cfg.versions.get(b.name, "")) for b in cfg.bots]
        names = {b.name for b in cfg.bots}
        before = [(e[0], e[1]) for e in meta.get("entries") or []]
        if cfg.on_change == "replace":
            before = []  # the earlier versions of the ladder's bots leave the ratings
        entries = [e for e in before if e[0] in names and e not in current] + current
        store.set_meta("entries", [list(e) for e in entries])
        store.set_meta("bots", bots)
        # a run with fewer boards plays none of the others, but keeps the games of all
        store.set_meta("boards", max(cfg.boards, int(meta.get("boards") or 0)))
        store.set_meta("gauntlet", list(cfg.gauntlet))  # this run's format
    except BaseException:
        store.close()
        raise
    return store


def version_changes(cfg: LadderConfig, store: ResultsStore) -> dict[str, tuple[list[str], str]]:
    """The bots of ``cfg`` whose current version has no game in ``store`` though an earlier
    version of theirs has: ``{name: (versions in the file, current version)}``."""
    played = store.versions_played()
    out: dict[str, tuple[list[str], str]] = {}
    for b in cfg.bots:
        now = cfg.versions.get(b.name, "")
        had = played.get(b.name, set())
        if had and now not in had:
            out[b.name] = (sorted(had), now)
    return out


def _changed_text(changed: dict[str, tuple[list[str], str]]) -> str:
    return ", ".join(f"{n} ({'/'.join(version_label(n, v) for v in had)} there, "
                     f"{version_label(n, now)} now)" for n, (had, now) in changed.items())


def build_all(cfg: LadderConfig, log_dir: Path,
              say: Callable[[str], None] | None = None) -> dict[str, str]:
    """The build stage: a local bot's build command when its build is stale
    (:func:`arena.sandbox.stamps.ensure_built`: a bot built by `make bots`, an earlier run
    or by hand is not built again), a Docker bot's image (:func:`arena.sandbox.build`);
    returns ``{name: reason}`` of the bots whose build failed — they are left out of this
    run — with every build log kept in ``log_dir``. ``say`` hears of each build as it starts
    and ends."""
    from ..sandbox.stamps import ensure_built

    failed: dict[str, str] = {}
    log_dir.mkdir(parents=True, exist_ok=True)
    for b in cfg.bots:
        log = log_dir / f"build-{b.name}.log"
        try:
            if b.runner == "local":
                ensure_built(b, say=say, log_path=log)
            else:
                sandbox.build(b, docker_limits=cfg.docker_limits, log_path=log, say=say)
        except ArenaError as e:  # BotError, SandboxError (no engine), ConfigError
            log.write_text(str(e) + "\n" + str(getattr(e, "log", "")))
            lines = [x for x in str(e).splitlines() if x.strip()]
            said = build_error("\n".join(lines[1:]))
            failed[b.name] = " / ".join(lines[:1] + ([said] if said else [])
                                        + [x for x in lines[1:][-3:] if x != said]) \
                + f" (the whole log: {log})"
    return failed


def check_request(spec: BotSpec, cfg: LadderConfig) -> GameRequest:
    """The admission check of one bot as a game (in the manner of Kaggle's validation
    episode): one hand (``max_hands=1``) against itself, in every seat, under the ladder's
    rules, time control and runner, except that the dealer may not pass the hand out
    (``all_pass=force_dealer``), so that a bot that always passes still bids, takes the
    widow, names trumps and plays. Its seed is no board's (:func:`check_seed`)."""
    # unique: the bot's place in the ladder (names may differ only in a '.' that an id
    # cannot hold), then the name for people
    index = [b.name for b in cfg.bots].index(spec.name)
    ruleset = dataclasses.replace(cfg.ruleset, all_pass="force_dealer")
    return GameRequest(
        game_id=f"check-{index}-" + re.sub(r"[^A-Za-z0-9_-]", "_", spec.name)[:48],
        bots=(spec,) * ruleset.players, ruleset=ruleset, preset="",
        seed=check_seed(cfg.seed), time_control=dataclasses.replace(cfg.time_control,
                                                                    max_hands=1),
        docker_limits=cfg.docker_limits)


CHECK_OUTPUT_LINES = 20
"""How many of the last lines of a bot's output a failed admission check shows (as many
as `moon play` shows of a forfeiting bot)."""


@dataclass(frozen=True)
class CheckFailure:
    """Why a bot failed its admission check, and what it wrote."""

    why: str
    """One line: the seat, the forfeit's reason and detail, the record."""
    output: list[str]
    """The last lines (at most :data:`CHECK_OUTPUT_LINES`) of that seat's output, oldest
    first; empty when it wrote nothing or the record cannot be read."""
    record: Path | None


def _output_tail(record: str | Path | None, seat: int) -> list[str]:
    """The last :data:`CHECK_OUTPUT_LINES` lines of ``seat``'s output in a record."""
    from ..records.record import read_record

    if record is None:
        return []
    try:
        text = read_record(record).logs.get(str(seat), "")
    except ArenaError:  # RecordError: no tail, the reason still stands
        return []
    return text.rstrip().splitlines()[-CHECK_OUTPUT_LINES:]


async def check_failure(executor: GameExecutor, spec: BotSpec,
                        cfg: LadderConfig) -> CheckFailure | None:
    """Play the admission check of ``spec`` (:func:`check_request`); returns how it failed
    (a forfeit: which seat, the reason, the record, the end of that seat's output), or
    None when it passed. A failure of the executor itself is not the bot's: it passes
    (logged)."""
    try:
        finished = await executor.play(check_request(spec, cfg))
    except InfrastructureError as e:
        log.warning("admission check of %s not played (%s): it passes", spec.name, e)
        return None
    f = finished.result.forfeit
    if finished.result.termination is not Termination.FORFEIT or f is None:
        return None
    why = (f"failed its admission check (one hand against itself): seat {f.seat} "
           f"{f.reason.key}" + (f": {f.detail}" if f.detail else "")
           + f"; record {finished.record_path or '(none)'}")
    output = _output_tail(finished.record_path, f.seat) if f.seat is not None else []
    return CheckFailure(why, output,
                        Path(finished.record_path) if finished.record_path else None)


async def check_bot(executor: GameExecutor, spec: BotSpec, cfg: LadderConfig) -> str | None:
    """:func:`check_failure`'s one line, or None when the bot passed."""
    failure = await check_failure(executor, spec, cfg)
    return failure.why if failure else None


class LadderRun:
    """One run of a ladder over a results file.

    Args:
        cfg: the ladder.
        store: its results file (:func:`open_store`); games it holds are not played again.
        results: the results file's path (records go to :func:`records_dir` of it).
        executor: plays the games; by default a :class:`~arena.executor.local.LocalExecutor`
            with ``cfg.concurrency``. The run enters it (``async with``).
        reporter: told of every stage and game (default: tells nobody).
    """

    def __init__(self, cfg: LadderConfig, store: ResultsStore, results: Path,
                 executor: GameExecutor | None = None,
                 reporter: Reporter | None = None) -> None:
        self.cfg = cfg
        self.store = store
        self.results = results
        self.executor: GameExecutor = executor or LocalExecutor(
            records_dir(results), cfg.concurrency, fork_server=cfg.fork_server)
        self.reporter = reporter or Reporter()
        self.specs = {b.name: b for b in cfg.bots}
        self.schedule = make_schedule([b.name for b in cfg.bots], cfg.ruleset.players,
                                      cfg.boards, cfg.seed, cfg.gauntlet, cfg.versions)
        self.done = store.done_ids()
        self.summary = RunSummary(scheduled=len(self.schedule),
                                  already_done=sum(1 for g in self.schedule
                                                   if g.game_id in self.done))
        self.forfeits = store.forfeits_by_bot()
        """Games each bot forfeited in this results file (updated as games finish)."""
        self.todo: deque[ScheduledGame] = deque()

    async def run(self) -> RunSummary:
        """Every stage in order; returns what the run did."""
        self.build()
        async with self.executor:
            await self.admit()
            self.plan()
            await asyncio.gather(*(self._worker() for _ in range(self.executor.capacity)))
        self.store.set_meta("left_out", {**self.summary.skipped_bots,
                                         **self.summary.dropped_bots})
        self.reporter.run_finished(self.summary)
        return self.summary

    def _leave_out(self, bot: str, why: str) -> None:
        self.summary.skipped_bots[bot] = why
        self.reporter.bot_left_out(bot, why)

    def _pending(self) -> list[ScheduledGame]:
        return [g for g in self.schedule if g.game_id not in self.done]

    # -- the stages ------------------------------------------------------------------------
    def build(self) -> None:
        """Build every bot (:func:`build_all`); a bot whose build fails is left out.
        Containers a crashed earlier run left behind are removed first."""
        if any(b.runner == "docker" for b in self.cfg.bots):
            sandbox.cleanup_stale()
        for name, why in build_all(self.cfg, records_dir(self.results) / "logs",
                                   self.reporter.build_note).items():
            self._leave_out(name, why)

    async def admit(self) -> None:
        """With ``cfg.check``, the admission check (:func:`check_bot`) of every bot that
        still has a game to play, all through the executor; a bot that fails is left
        out."""
        if not self.cfg.check:
            return
        pending = self._pending()
        bots = [b for b in self.cfg.bots if b.name not in self.summary.skipped_bots
                and any(b.name in g.seats for g in pending)]
        verdicts = await asyncio.gather(*(check_failure(self.executor, b, self.cfg)
                                          for b in bots))
        for b, failure in zip(bots, verdicts, strict=True):
            if failure:
                self._leave_out(b.name, failure.why)
                if failure.output:
                    self.reporter.bot_output(b.name, failure.output, failure.record)

    def plan(self) -> None:
        """Leave out the bots that had forfeited ``max_forfeits`` games already, then
        queue every game not done whose bots all play, in schedule order."""
        m = self.cfg.max_forfeits
        if m:
            for name, n in self.forfeits.items():
                if n >= m and name not in self.summary.skipped_bots:
                    self._leave_out(name, f"has forfeited {n} games of this ladder "
                                          f"(max_forfeits = {m})")
        out = set(self.summary.skipped_bots)
        self.todo = deque(g for g in self._pending() if not set(g.seats) & out)
        self.summary.to_play = len(self.todo)
        self.reporter.planned(self.summary)

    async def _worker(self) -> None:
        while self.todo:
            await self.play_one(self.todo.popleft())

    async def play_one(self, g: ScheduledGame) -> None:
        """Play game ``g`` unless a bot in it was dropped; a voided game is played again
        (under the id ``<id>-retry<k>``) up to :data:`VOID_RETRIES` times."""
        dropped = sorted(set(g.seats) & set(self.summary.dropped_bots))
        if dropped:
            self.summary.skipped_games += 1
            self.reporter.game_skipped(g, f"{', '.join(dropped)} dropped")
            return
        finished, _ = await play_voiding(self, g)
        if finished is not None:
            self.game_finished(g, finished)

    def game_finished(self, g: ScheduledGame, finished: FinishedGame) -> None:
        """Store a played game, count its forfeits, and drop a bot that reached
        ``max_forfeits``."""
        row = self.store.add_game(g, finished)
        self.summary.played += 1
        m = self.cfg.max_forfeits
        for f in finished.faults:
            if not f.forfeit:
                continue
            bot = g.seats[f.seat]
            self.forfeits[bot] = self.forfeits.get(bot, 0) + 1
            if m and self.forfeits[bot] >= m and bot not in self.summary.dropped_bots:
                why = (f"dropped after {self.forfeits[bot]} forfeits (max_forfeits = {m}); "
                       f"last: {f.reason.key} in game {g.game_id}")
                self.summary.dropped_bots[bot] = why
                self.reporter.bot_dropped(bot, why)
        self.reporter.game_finished(g, finished, row)


def forget_record(folder: Path, game_id: str) -> None:
    """Remove game ``game_id``'s record and seat logs from ``folder`` (a records folder),
    if they are there. Raises nothing."""
    logs = (folder / "logs").glob(f"{glob.escape(game_id)}.seat*.log")
    paths = [folder / f"{game_id}.json", *logs]
    for p in paths:
        with contextlib.suppress(OSError):
            p.unlink()


async def play_voiding(run: Any, g: ScheduledGame) -> tuple[FinishedGame | None,
                                                             InfrastructureError | None]:
    """Play ``g`` through ``run.executor`` (a ladder's or a match's run: its ``cfg``,
    ``specs``, ``store``, ``summary`` and ``reporter``), voiding a game the executor could
    not play (stored as voided, counted, reported) and playing it again as
    ``<id>-retry<n>``, at most :data:`VOID_RETRIES` times. Returns the finished game, or
    None and the last error when every attempt was voided."""
    error: InfrastructureError | None = None
    for attempt in range(VOID_RETRIES + 1):
        request = GameRequest(
            game_id=g.game_id if attempt == 0 else f"{g.game_id}-retry{attempt}",
            bots=tuple(run.specs[n] for n in g.seats), ruleset=run.cfg.ruleset,
            preset=run.cfg.preset, seed=g.seed, time_control=run.cfg.time_control,
            docker_limits=run.cfg.docker_limits)
        try:
            return await run.executor.play(request), None
        except (asyncio.CancelledError, KeyboardInterrupt):
            # stopped (Ctrl-C, SIGTERM) in flight: the results file will not hold it, so
            # neither does the records folder (the resumed run plays it again)
            forget_record(records_dir(run.results), request.game_id)
            raise
        except InfrastructureError as e:
            error = e
            run.summary.voided += 1
            run.store.add_voided(g.game_id, str(e),
                                 dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
            run.reporter.game_voided(g, e, retry=attempt < VOID_RETRIES)
    return None, error


async def run_ladder(cfg: LadderConfig, store: ResultsStore, results: Path,
                     reporter: Reporter | None = None,
                     executor: GameExecutor | None = None) -> RunSummary:
    """Play every scheduled game that ``store`` does not hold yet (:class:`LadderRun`):
    each bot in a fresh process per game, ``cfg.concurrency`` games at a time unless an
    ``executor`` says otherwise. Games voided by an infrastructure fault are noted and
    played again, never rated.

    Before the first game every bot is built (:func:`build_all`) and, with ``cfg.check``,
    checked (:func:`check_bot`); a bot that fails either is left out of this run. With
    ``cfg.max_forfeits``, a bot is dropped once it has forfeited that many games of this
    results file, and its games not yet started are skipped (not voided: a later run
    plays them, for example after the bot is fixed)."""
    return await LadderRun(cfg, store, results, executor, reporter).run()


__all__ = ["CHECK_OUTPUT_LINES", "CheckFailure", "LadderRun", "Reporter", "RunSummary",
           "VOID_RETRIES", "build_all", "check_bot", "check_failure", "check_request",
           "forget_record", "open_store", "play_voiding", "records_dir", "run_ladder",
           "version_changes"]
