"""The build and validation gate of a new version: the checks of `moon bot check`
(:mod:`arena.check.conformance`), one code path, so that a bot that passes the check on its
author's machine passes the gate.

1. **Build** in the competition's sandbox (:func:`arena.check.conformance.try_build`: the image of
   a Docker bot, its ``build`` command for a trusted local one) with a time limit; the log
   is kept for the version's owner, with a warning line for a ``language`` the arena
   does not know (:func:`arena.bots.manifest.language_warning`: informative, never a refusal).
2. **Validate** (:meth:`Builds.gate`): the check's games
   (:func:`arena.check.conformance.check_games`) under the competition's rules and time control, the
   reference bots as the opponents: one hand against itself (the dealer forced to bid; an
   answer refused on purpose), a dropped stream (it must rejoin), and one complete game
   against the reference bots, recorded as the version's validation game. Each game is
   judged on the version's seats alone (:func:`arena.check.conformance.judge`): any fault fails it
   (a timeout forgiven by the bank still counts). As in `moon bot check`, once the bot
   fails its hand against itself the games after it are skipped
   (:func:`arena.check.conformance.blocks_the_rest`; a ``skip:`` line each in the log). A fault of
   a reference bot is the host's problem, not the version's: the game is voided, the
   version waits, and the host logs an error (a canary).

A failing version is rejected with the reason (the failed check and its problem line); the
version before it stays active.

:class:`Builds` is the host's part that runs the gate: its builders take the pending
versions in turns (:meth:`Builds.next_pending`) and set each one's status.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import moon_sdk
from moon_sdk.rules import Ruleset
from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased, sessionmaker

import arena

from ..bots.manifest import BotSpec, language_warning, load_bot
from ..check.conformance import (
    LOG_LIMIT,
    CheckGame,
    Item,
    Report,
    blocks_the_rest,
    check_games,
    judge,
    try_build,
)
from ..core.timecontrol import TimeControl
from ..ladder.schedule import check_seed
from .executor import GameSlots, InfrastructureError, name_of
from .models import Bot, Version, utcnow
from .outage import Outage, cannot_write
from .recorder import Recorder
from .settings import Settings
from .writer import Writer

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits

log = logging.getLogger("arena.host")

_INSTALL_ROOTS = sorted({str(Path(p).resolve().parents[1]) for p in (
    arena.__file__, moon_sdk.__file__) if p}, key=len, reverse=True)
"""The folders the ``arena`` and ``moon_sdk`` packages are installed in (a checkout's root,
or site-packages), longest first: :func:`for_participant` hides them."""


def build_version(spec: BotSpec, log_path: Path, timeout_s: float,
                  docker_limits: Any = None) -> str | None:
    """Build ``spec`` (:func:`arena.check.conformance.try_build`); the log goes to ``log_path``.
    Returns why the build failed (one line), or None.

    Raises:
        InfrastructureError: no Docker engine answers (the host's failure: try later).
    """
    return try_build(spec, log_path, timeout_s, docker_limits)


async def build_version_async(spec: BotSpec, log_path: Path, timeout_s: float,
                              docker_limits: Any = None) -> str | None:
    """:func:`build_version` in a daemon thread of its own: a host that stops (Ctrl-C,
    SIGTERM) while a build runs exits without waiting for it (the asyncio default
    executor's threads are waited for at exit, so a build of minutes held a stop for
    minutes); the version stays ``building`` and is built again at the next start
    (:meth:`arena.host.service.Host.recover`). A Docker build is cancelled by the engine
    when the host's connection closes.

    Raises:
        InfrastructureError: no Docker engine answers (the host's failure: try later).
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str | None] = loop.create_future()

    def settle(fn: Any, value: Any) -> None:
        if not done.done():
            fn(value)

    def work() -> None:
        try:
            why = build_version(spec, log_path, timeout_s, docker_limits)
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, done.set_exception, e)
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, done.set_result, why)

    threading.Thread(target=work, name=f"build-{spec.name}", daemon=True).start()
    return await done


def for_participant(text: str, folder: Path) -> str:
    """``text`` (a version's reason or its build and validation log) with the host's
    ``folder`` written as ``<competition>`` and where the arena itself is installed (the
    folders of its ``arena`` and ``moon_sdk`` packages, seen in a bot's traceback) as
    ``<arena>``: a participant never learns where the competition lives on the host's
    disk (which, with a version's hash, would name the image built for another
    participant's bot), nor the host's own layout."""
    text = text.replace(str(folder), "<competition>")
    for root in _INSTALL_ROOTS:
        text = text.replace(root + "/", "<arena>/")
    return text


class VersionSpecs:
    """The runnable bots of the versions in ``store``, run with ``runner`` (the
    competition's, whatever a bot.toml says); each read once."""

    def __init__(self, store: Path, runner: str) -> None:
        self.store = store
        self.runner = runner
        self._specs: dict[int, BotSpec] = {}

    def __call__(self, version: Version, bot_name: str) -> BotSpec:
        """The runnable bot of ``version`` of bot ``bot_name``.

        Raises:
            ConfigError: its stored bot.toml cannot be read.
        """
        cached = self._specs.get(version.id)
        if cached is None:
            folder = self.store / "versions" / version.hash
            spec = load_bot(folder)
            cached = dataclasses.replace(spec, name=bot_name, version=version.hash[:12],
                                         runner=self.runner)
            self._specs[version.id] = cached
        return cached


STALL_KEY = "startup_stall"
"""How a validation's failure for a bot that did not join in time reads
(:func:`arena.check.conformance.problem_line`)."""
STALL_RETRIES = 2
"""A validation failed only because the bot did not join in time is tried again this many
times before the version is rejected: the host's load (a loaded machine slows every
process's start) is not the bot's fault. The time the host took to start the bot's process
or container is never counted (:meth:`arena.referee.referee.Match.seat_started`)."""
STALL_BACKOFF_S = 5.0
"""The builder waits this long times the try before the next version (the load may pass)."""


class Builds:
    """The build queue and the validation gate of a competition in ``folder``: its
    builders (:meth:`builder`, one task each) build and validate pending versions with
    the ``references`` bots as opponents, playing on ``slots`` and writing statuses on
    ``writer`` (validation games through ``recorder``); ``validated`` is called when a
    version was judged (a new active one may start games)."""

    def __init__(self, folder: Path, settings: Settings, session: sessionmaker[Session],
                 writer: Writer, recorder: Recorder, slots: GameSlots, specs: VersionSpecs,
                 references: list[BotSpec], ruleset: Ruleset, tc: TimeControl,
                 docker_limits: DockerLimits | None, validated: Callable[[], None],
                 outage: Outage | None = None) -> None:
        self.folder = folder
        self.store = specs.store
        self.settings = settings
        self.Session = session
        self.writer = writer
        self.recorder = recorder
        self.slots = slots
        self.specs = specs
        self.references = references
        self.ruleset = ruleset
        self.tc = tc
        self.docker_limits = docker_limits
        self.validated = validated
        self.problem = ""
        """The last infrastructure failure of the builder that was logged ("" after a
        success): said once, not at every retry."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self.outage = outage or Outage()
        """Whether the host can write (:mod:`arena.host.outage`): while it cannot, no
        version is taken."""
        self.busy: set[int] = set()
        """The versions being built or validated now."""
        self.stalls: dict[int, int] = {}
        """Validations tried again since the start because the version's bot did not join
        in time (:data:`STALL_RETRIES`), by version."""

    def wake(self) -> None:
        """A new version was stored: start its build (thread-safe; nothing before the
        builders run)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    def build_log(self, version_id: int) -> Path:
        """Where a version's build and validation log is kept."""
        return self.store / "logs" / f"version-{version_id}.log"

    def next_pending(self) -> tuple[int, str] | None:
        """Take the next version to build and validate (``building`` now, its
        ``build_started_at`` set) and return its id and bot's name; None when none waits.

        A fair share, not arrival order: the oldest pending version of the participant
        whose latest build started longest ago — one who never had a build first, ties in
        order of their oldest pending version. So participants take turns (round-robin):
        one who submits several versions puts one build at most before each other
        participant's next (docs/host.md, "From upload to rated games"). A version whose
        bot has another one building or validating waits for it (with several builders,
        ``[runner] builders``): a bot's versions are judged one after another, in order, so
        an older one never replaces a newer one as its bot's active version."""
        with self.Session.begin() as s:
            latest = (select(Bot.owner_id.label("owner"),
                             func.max(Version.build_started_at).label("at"))
                      .join(Version, Version.bot_id == Bot.id)
                      .group_by(Bot.owner_id).subquery())
            sibling = aliased(Version)
            busy = (select(sibling.id).where(sibling.bot_id == Version.bot_id,
                                             sibling.status.in_(("building", "validating")))
                    .exists())
            v = s.scalar(select(Version).join(Bot, Version.bot_id == Bot.id)
                         .outerjoin(latest, latest.c.owner == Bot.owner_id)
                         .where(Version.status == "pending", ~busy)
                         .order_by(latest.c.at.asc().nulls_first(), Version.id).limit(1))
            if v is None:
                return None
            v.status = "building"
            v.build_started_at = utcnow()
            return v.id, v.bot.name

    def set_status(self, version_id: int, status: str, reason: str = "") -> None:
        with self.Session.begin() as s:
            v = s.get(Version, version_id)
            assert v is not None
            v.status, v.reason = status, for_participant(reason, self.folder)
            if status != "active":
                return
            bot = v.bot
            old = s.get(Version, bot.active_version_id) if bot.active_version_id else None
            if old is not None and old.id != v.id and old.status == "active":
                old.status = "retired"
            bot.active_version_id = v.id
            v.activated_at = utcnow()

    async def builder(self) -> None:
        """One builder: take the next pending version (:meth:`next_pending`), build and
        validate it; a failure of the host's puts it back to pending, to be tried again."""
        self._loop = asyncio.get_running_loop()
        while True:
            if self.outage.on:  # what it left is mended first (arena.host.outage)
                await asyncio.sleep(1.0)
                continue
            try:
                job = await self.writer.write(self.next_pending)
            except Exception as e:
                if not cannot_write(e):
                    raise
                self.outage.hit("the build queue", e)
                continue
            if job is None:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(2.0):
                        await self._wake.wait()
                continue
            self.busy.add(job[0])
            try:
                await self.gate(*job)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                if not cannot_write(e):
                    await self._failed(job[0], e)
                    continue
                # left building or validating: sent back to the queue once it can write
                self.outage.hit(f"version {job[0]}'s build or validation", e)
                continue
            finally:
                self.busy.discard(job[0])
            self.problem = ""

    async def _failed(self, version_id: int, e: Exception) -> None:
        """The host failed to build or validate ``version_id`` (``e``): it waits, pending,
        for another try."""
        try:
            if isinstance(e, InfrastructureError):
                # e.g. no Docker engine: said once, not a traceback every few seconds; its
                # owner sees why it waits
                if str(e) != self.problem:
                    log.warning("version %s waits: %s", version_id, e)
                    self.problem = str(e)
                await self.writer.write(self.set_status, version_id, "pending",
                                        "waiting for the host: it cannot build or run bots "
                                        "just now (its organiser has been told); it will "
                                        "try again")
            else:  # the host's own failure: the version waits for another try
                log.exception("version %s: build/validation failed in the host", version_id)
                await self.writer.write(self.set_status, version_id, "pending")
        except Exception as again:
            if not cannot_write(again):
                raise
            self.outage.hit(f"version {version_id}'s status", again)
        await asyncio.sleep(5)

    async def gate(self, version_id: int, bot_name: str) -> None:
        """Build version ``version_id`` of bot ``bot_name`` and validate it; it ends
        ``active``, ``rejected`` (with the reason), or ``pending`` (the host's failure).

        Raises:
            InfrastructureError: the build could not be run (no Docker engine answers).
        """
        with self.Session() as s:
            v = s.get(Version, version_id)
            assert v is not None
            spec = self.specs(v, bot_name)
        log_path = self.build_log(version_id)
        why = await build_version_async(spec, log_path, self.settings.runner.build_timeout_s,
                                        self.docker_limits)  # a stop does not wait for it
        warning = language_warning(spec)  # informative: said in the log, never refused
        if warning:
            with open(log_path, "a") as f:
                f.write(f"\nwarning: {warning}\n")
        if why:
            await self.writer.write(self.set_status, version_id, "rejected", why)
            return
        await self.writer.write(self.set_status, version_id, "validating")
        refs = self.references
        token = secrets.token_hex(3)
        seed = check_seed(self.settings.matchmaking.seed ^ version_id)
        games = check_games(spec, refs, [(self.settings.competition.preset, self.ruleset)],
                            self.tc, seed=seed, prefix=f"v{version_id}-{token}",
                            docker_limits=self.docker_limits)
        # the game against the reference bots first: it is the recorded validation game, and
        # the canary (a reference bot's fault voids it) is judged there before the others
        games.sort(key=lambda cg: not self.is_validation_game(cg))
        items = []
        blocked = ""  # as `moon bot check`: a bot that cannot finish a plain hand stops here
        for cg in games:
            if blocked:
                items.append(Item(cg.item, "skip", blocked))
                continue
            played = await self.check_game(version_id, cg)
            if played is None:  # not played (the host's failure): the version waits
                return
            item, blocked = played
            items.append(item)
        report = Report(bot_name, tuple(items))
        failed = report.first_failure
        why = None if failed is None else f"validation: {failed.name}: {failed.problem}"
        stalled = failed is not None and STALL_KEY in failed.problem
        tries = self.stalls.pop(version_id, 0) + 1
        if failed is not None and stalled and tries <= STALL_RETRIES:
            # the host's load may be why (it slows every process's start): tried again
            self.stalls[version_id] = tries
            again = (f"validation: {failed.name}: the bot did not join in time, which a "
                     "loaded host can cause: it is validated again "
                     f"(try {tries + 1} of {STALL_RETRIES + 1})")
            await self.writer.write(self.set_status, version_id, "pending", again)
            await asyncio.sleep(STALL_BACKOFF_S * tries)
            return
        if why is not None and stalled and tries > 1:
            why += f" (tried {tries} times: it never joined in time)"
        shown: set[tuple[str, ...]] = set()  # the same output twice is said once
        with open(log_path, "a") as f:
            f.write("\n--- validation (the checks of `moon bot check`, against the reference "
                    f"bots): {'passed' if why is None else 'FAILED'}\n")
            for item in items:
                f.write(f"{item.status}: {item.name}\n"
                        + (f"    {item.problem}\n" if item.problem else ""))
                if item.status == "pass" or not item.tail:
                    continue
                if item.tail in shown:
                    f.write("    the end of your bot's output in that game: the same as "
                            "above\n")
                else:
                    shown.add(item.tail)
                    f.write("    the end of your bot's output in that game:\n"
                            + "".join(f"    | {line}\n" for line in item.tail))
        await self.writer.write(self.set_status, version_id, "rejected" if why else "active",
                         why or "")
        self.validated()

    @staticmethod
    def is_validation_game(cg: CheckGame) -> bool:
        """The check's whole game against the reference bots: recorded as the version's
        validation game."""
        return cg.whole_game

    async def check_game(self, version_id: int, cg: CheckGame) -> tuple[Item, str] | None:
        """Play one game of a version's validation (:func:`arena.check.conformance.check_games`)
        and judge it; the whole game against the reference bots is recorded as the
        version's validation game. Returns its item and why the games after it are not to
        be played, or "" (:func:`arena.check.conformance.blocks_the_rest`); None when the game could
        not be judged (an infrastructure failure, or a reference bot faulted: the host's
        canary), after putting the version back to pending."""
        req = cg.request
        recorded = self.is_validation_game(cg)
        if recorded:
            await self.recorder.add_validation_game(req.game_id, version_id, req.seed,
                                                    req.bots)
        async with self.slots:
            try:
                fg = await self.slots.play(req)
            except InfrastructureError as e:
                if cannot_write(e):  # its record (a full disk): the builder's outage
                    raise
                if recorded:
                    await self.recorder.void_game(req.game_id, str(e))
                await self.writer.write(self.set_status, version_id, "pending")
                await asyncio.sleep(1)
                return None
        canary = [f for f in fg.faults if f.seat not in cg.seats]
        if canary:  # a reference bot faulted: the host is unwell, the version not judged
            f0 = canary[0]
            log.error("validation game %s: reference bot %s (seat %d) faulted: %s %s; "
                      "version %d waits (check the [[reference]] bots)", req.game_id,
                      req.bots[f0.seat].name, f0.seat, name_of(f0.reason), f0.detail,
                      version_id)
            if recorded:
                await self.recorder.void_game(req.game_id,
                                              f"reference bot faulted: {name_of(f0.reason)}")
            await self.writer.write(self.set_status, version_id, "pending")
            await asyncio.sleep(30)
            return None
        if recorded:
            await self.recorder.record(fg)
        item = judge(cg, fg)
        return item, blocks_the_rest(cg, fg, item)



__all__ = ["LOG_LIMIT", "Builds", "VersionSpecs", "build_version", "build_version_async",
           "for_participant"]
