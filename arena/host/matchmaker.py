"""The host's matchmaker (:class:`Matchmaker`): the loop that keeps the games' slots full
with rated games, picking each new duplicate set with :mod:`arena.host.matchmaking`,
playing each game on the host's executor and handing its result to the recorder; and,
within their share of the slots, the challenge games participants asked for
(:mod:`arena.host.challenges`), never rated.

A version sits in at most half the running rated games (rounded up) while other games can
be played (:meth:`Matchmaker.claim`), so one slow bot cannot fill every slot with its own
long games and starve the others; two games of one duplicate set never run at once (they
share a board, and a running game's live stream is public).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from moon_sdk.rules import Ruleset
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload, sessionmaker

from ..bots.manifest import BotSpec
from ..core.timecontrol import TimeControl
from ..ladder.schedule import board_seed
from . import challenges, matchmaking
from .builds import VersionSpecs
from .executor import GameRequest, GameSlots, InfrastructureError
from .models import (
    Bot,
    DuplicateSet,
    Game,
    GameSeat,
    Participant,
    Version,
    sets_ended,
    utcnow,
)
from .outage import Outage, cannot_write
from .recorder import Counters, Recorder
from .writer import Writer

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits

log = logging.getLogger("arena.host")


class Matchmaker:
    """Claims, plays and records rated games of ``ruleset`` (``preset`` its name) under
    time control ``tc`` on ``slots``: claims on ``writer``, results through ``recorder``,
    counted in ``counters``; ``closeness`` and ``rng`` pick the sets (:mod:`.matchmaking`),
    ``seed`` (the competition's) their deals. After each game ``cut_logs(game_id)`` runs in
    a thread; while ``stopping`` is set a game that could not end is not voided."""

    def __init__(self, session: sessionmaker[Session], writer: Writer, recorder: Recorder,
                 slots: GameSlots, specs: VersionSpecs, ruleset: Ruleset, preset: str,
                 tc: TimeControl, docker_limits: DockerLimits | None, closeness: float,
                 seed: int, rng: random.Random, counters: Counters,
                 cut_logs: Callable[[str], int], stopping: asyncio.Event,
                 outage: Outage | None = None) -> None:
        self.Session = session
        self.writer = writer
        self.recorder = recorder
        self.slots = slots
        self.specs = specs
        self.ruleset = ruleset
        self.preset = preset
        self.tc = tc
        self.docker_limits = docker_limits
        self.closeness = closeness
        self.seed = seed
        self.rng = rng
        self.counters = counters
        self.cut_logs = cut_logs
        self.stopping = stopping
        self.placement_sets = 0
        """Sets a version plays before it is no longer provisional (``[matchmaking]
        placement_sets``): a provisional version starts each new set while there is one."""
        self.gate: Callable[[Session], bool] | None = None
        """Whether rated games may start now (the phase: :mod:`arena.host.season`); None:
        always."""
        self.outage = outage or Outage()
        """Whether the host can write (:mod:`arena.host.outage`): while it cannot, no game
        is claimed."""
        self.running: dict[str, asyncio.Task[None]] = {}
        """The games being played, by id (the host cancels them when it stops)."""
        self.challenge_share = 0.5
        """The share of the slots challenge games may take (``[challenges] share``)."""
        self.references: dict[str, BotSpec] = {}
        """The host's reference bots by name: a challenge may seat them."""
        self._challenge_last = False
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """A version was judged: look for games now (from the event loop's thread)."""
        self._wake.set()

    def claim(self) -> tuple[str, int, tuple[BotSpec, ...]] | None:
        """Take the next game to play and mark it running; None if there is nothing to
        play: a queued challenge game while challenges hold fewer than their share of the
        slots (:meth:`challenge_slots`; with one slot, challenge and rated games take
        turns), else the next rated game (:meth:`claim_rated`), else, when no rated game
        can be played, a challenge game all the same (within its share)."""
        with self.Session.begin() as s:
            if self.gate is not None and not self.gate(s):
                return None
            job = self.claim_challenge(s, turn=True)
            if job is None:
                job = self.claim_rated(s)
                if job is not None:
                    self._challenge_last = False
                    return job
                job = self.claim_challenge(s, turn=False)
            return job

    def challenge_slots(self) -> int:
        """The challenge games that may run at once (``[challenges] share`` of the slots:
        :func:`arena.host.challenges.slots`)."""
        return challenges.slots(self.slots.capacity, self.challenge_share)

    def claim_challenge(self, s: Session, turn: bool
                        ) -> tuple[str, int, tuple[BotSpec, ...]] | None:
        """Start the oldest queued challenge game that can be played (cancelling those
        that cannot), within :meth:`challenge_slots`; with ``turn``, not right after
        another when the challenges' share is every slot (a rated game goes between)."""
        cap = self.challenge_slots()
        if turn and cap >= self.slots.capacity and self._challenge_last:
            return None
        running = s.scalar(select(func.count()).select_from(Game).where(
            Game.kind == "challenge", Game.status == "running")) or 0
        if running >= cap:
            return None
        queued = s.scalars(select(Game).where(Game.kind == "challenge",
                                              Game.status == "queued")
                           .order_by(Game.created_at, Game.id)
                           .options(selectinload(Game.seats))).all()
        for g in queued:
            why = challenges.playable(s, g, list(self.references))
            if why is not None:
                g.status = "cancelled"
                g.void_reason = f"never played: {why}"
                continue
            g.status = "running"
            g.started_at = utcnow()
            bots = []
            for x in g.seats:
                v = s.get(Version, x.version_id) if x.version_id is not None else None
                bots.append(self.specs(v, v.bot.name) if v is not None
                            else self.references[x.reference])
            self._challenge_last = True
            return g.id, g.seed, tuple(bots)
        return None

    def claim_rated(self, s: Session) -> tuple[str, int, tuple[BotSpec, ...]] | None:
        """Take the next queued rated game (making a new duplicate set when none is
        queued) and mark it running; None if there is none to play.

        A version sits in at most :meth:`per_version` of the running rated games while
        other games can be played: a queued game that would put it over is held back
        (the oldest queued game that is not held goes first, and when none is queued a
        new set is made of the versions under the cap), so one slow bot cannot fill every
        slot with its own long games and starve the others. When nothing else can be
        played (every version at its cap, say with no more versions than seats), the
        oldest held-back game is started, as without the cap. The versions of a
        participant the organiser disabled are not matched.

        Two games of one duplicate set never run at once, whatever else waits: they are
        dealt the same board, and the public live view of one would show the tiles of a
        hand the other has still to play. A set's next game waits for the one running;
        the other slots play other sets (a new one is made when every queued game's set
        is in play)."""
        active = {v.id: v for v in s.scalars(
            select(Version).join(Bot, Version.bot_id == Bot.id)
            .join(Participant, Bot.owner_id == Participant.id)
            .where(Version.status == "active", Participant.disabled.is_(False))
            .options(selectinload(Version.bot)))}
        cap = self.per_version()
        running = collections.Counter(s.scalars(
            select(GameSeat.version_id).join(Game, GameSeat.game_id == Game.id)
            .where(Game.status == "running", Game.kind == "rated")))
        busy = set(s.scalars(select(Game.dset_id).where(Game.status == "running",
                                                       Game.kind == "rated")))
        made_free, made_any = False, False
        while True:
            queued = s.scalars(select(Game).where(Game.status == "queued",
                                                  Game.kind == "rated")
                               .order_by(Game.created_at, Game.id)
                               .options(selectinload(Game.seats))).all()
            held: tuple[Game, list[int | None]] | None = None
            for g in queued:
                ids = [x.version_id for x in g.seats]
                if not all(i in active for i in ids):
                    g.status = "cancelled"
                    g.void_reason = "a version in it left the pool before it was played"
                    sets_ended(s, [g.dset_id])
                    continue
                if g.dset_id in busy:  # its board is in play: never two games of it
                    continue
                if any(running[i] >= cap for i in set(ids) if i is not None):
                    held = held or (g, ids)
                    continue
                return self.start(g, ids, active)
            if not made_free:  # a set of the versions under the cap
                made_free = True
                if self.new_set(s, [v for v in active.values() if running[v.id] < cap]):
                    continue
            if held is not None:  # nothing else can be played
                return self.start(*held, active)
            if not made_any:  # nothing queued: a set of every active version
                made_any = True
                if self.new_set(s, list(active.values())):
                    continue
            return None

    def per_version(self) -> int:
        """The running rated games one version may sit in while other games can be
        played: half the games' slots, rounded up (``[matchmaking] concurrency``)."""
        return max(1, -(-self.slots.capacity // 2))

    def start(self, g: Game, ids: list[int | None], active: dict[int, Version]
               ) -> tuple[str, int, tuple[BotSpec, ...]]:
        """Mark queued game ``g`` running; its id, seed and bots."""
        g.status = "running"
        g.started_at = utcnow()
        return g.id, g.seed, tuple(self.specs(active[i], active[i].bot.name)
                                   for i in ids if i is not None)

    def new_set(self, s: Session, active: list[Version]) -> bool:
        pool = [matchmaking.Candidate(v.id, v.games, v.mu, v.sigma,
                                      v.sets < self.placement_sets) for v in active]
        group = matchmaking.pick_group(pool, self.ruleset.players, self.rng,
                                       self.closeness)
        if not group:
            return False
        dset = DuplicateSet(seed=0)
        s.add(dset)
        s.flush()
        dset.seed = board_seed(self.seed, dset.id)
        now = utcnow()
        for k, seating in enumerate(matchmaking.seatings(group, self.ruleset.players,
                                                         self.rng)):
            g = Game(id=f"s{dset.id}-{k}", kind="rated", dset_id=dset.id, seating=k,
                     seed=dset.seed, status="queued", created_at=now)
            g.seats = [GameSeat(seat=i, version_id=v,
                                side=matchmaking.side(i, self.ruleset.players))
                       for i, v in enumerate(seating)]
            s.add(g)
        s.flush()
        return True

    async def run(self, claim: Callable[[], tuple[str, int, tuple[BotSpec, ...]] | None]
                  | None = None) -> None:
        """Keep the slots full: take a slot, claim the next game (``claim``, by default
        :meth:`claim`; the final has its own) and play it in a task of its own
        (:attr:`running`); with nothing to play, wait for :meth:`wake` or a second."""
        claim = claim or self.claim
        while True:
            if self.outage.on:  # the games it left are voided first (arena.host.outage)
                await asyncio.sleep(0.5)
                continue
            await self.slots.acquire()
            try:
                job = await self.writer.write(claim)
            except Exception as e:
                self.slots.release()
                if cannot_write(e):
                    self.outage.hit("the next rated game's claim", e)
                else:
                    log.exception("matchmaking failed")
                await asyncio.sleep(2)
                continue
            if job is None:
                self.slots.release()
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(1.0):
                        await self._wake.wait()
                continue
            game_id = job[0]
            task = asyncio.create_task(self.play(*job), name=f"game-{game_id}")
            self.running[game_id] = task
            task.add_done_callback(functools.partial(self._forget, game_id))

    def _forget(self, game_id: str, _task: asyncio.Task[None]) -> None:
        self.running.pop(game_id, None)

    async def play(self, game_id: str, seed: int, bots: tuple[BotSpec, ...]) -> None:
        """Play claimed game ``game_id`` on its slot and record it, or void it (not when the
        host is stopping: the next start voids it); then cut its versions' older logs."""
        slot = True
        try:
            req = GameRequest(game_id, bots, self.ruleset, self.preset,
                              seed, self.tc, self.docker_limits)
            try:
                fg = await self.slots.play(req)
            except InfrastructureError as e:
                if cannot_write(e):  # its record (a full disk): left running, voided and
                    # played again once the host can write (arena.host.outage)
                    self.outage.hit(f"the record of game {game_id}", e)
                    return
                log.warning("game %s voided: %s", game_id, e)
                if not self.stopping.is_set():
                    await self.recorder.void_game(game_id, str(e))
                return
            # the slot is free for the next game now; its claim queues on the one writer
            # behind this result, so it sees this game's outcome (a version disabled...)
            self.slots.release()
            slot = False
            await self.recorder.record(fg)
            self.counters.game_finished()
            try:
                await asyncio.to_thread(self.cut_logs, game_id)
            except Exception as e:  # the game is recorded: only its bots' older logs stay
                if cannot_write(e):  # whole
                    self.outage.hit(f"the cut logs of game {game_id}'s bots", e)
                else:
                    log.exception("game %s: its bots' older logs were not cut", game_id)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            if cannot_write(e):  # left running: voided and played again once it can
                self.outage.hit(f"the result of game {game_id}", e)
                return
            log.exception("game %s: the host failed", game_id)
            with contextlib.suppress(Exception):
                await self.recorder.void_game(game_id, "the host failed")
        finally:
            if slot:
                self.slots.release()


__all__ = ["Matchmaker"]
