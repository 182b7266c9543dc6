"""When the host cannot write (its database down, its disk full): nothing stuck, nothing
lost (docs/host.md, "When the host cannot write").

The games in flight play on (they need no database), but a result that cannot be written
is not: its game stays ``running`` in the database, and so would a version caught in its
build or validation. :class:`Outage` is what the host's parts tell when a write fails for
such a reason (:func:`cannot_write`): it says so in one line (then once a minute, with the
count), and while it lasts no new game is claimed and no build taken. A game whose record
cannot be written (a full disk) is such a failure too: it is not rated without its record.
:class:`Mender` asks every few seconds whether the host can write again (a file of
:data:`PROBE_BYTES` in its records folder, then its database); once it can, it voids every game
the database has ``running`` that this host is not playing (a rated one is queued again,
as after a restart: never rated twice, never lost) and sends every version that is
``building`` or ``validating`` but not being built back to the queue, in one
transaction, then says so in one line. No restart is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from .models import Game, Version
from .recorder import Recorder
from .writer import Writer

log = logging.getLogger("arena.host")

CANNOT_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})
"""An ``OSError`` of these is the machine's (a full disk, a read-only or failing one)."""
PROBE_BYTES = 1 << 20
"""What the host writes (and deletes) in its records folder to learn it can write there
again: room for a few games' records, bytes."""
MEND_EVERY_S = 2.0
"""How often the host asks whether it can write again, seconds."""
SAY_EVERY_S = 60.0
"""While it cannot write, the log says so again at most this often, seconds."""


def _causes(e: BaseException) -> Iterator[BaseException]:
    """``e``, then what caused it (``__cause__``), and so on (ten at most)."""
    cause: BaseException | None = e
    for _ in range(10):
        if cause is None:
            return
        yield cause
        cause = cause.__cause__


def _is_write_failure(e: BaseException) -> bool:
    return isinstance(e, SQLAlchemyError) or (isinstance(e, OSError)
                                              and e.errno in CANNOT_WRITE_ERRNOS)


def cannot_write(e: BaseException) -> bool:
    """Whether ``e`` is the host's failure to reach or write its database or disk (not a
    bug): any database error, or an ``OSError`` of :data:`CANNOT_WRITE_ERRNOS`, or an
    error caused by one (an :class:`~arena.errors.InfrastructureError` for a game whose
    record could not be written)."""
    return any(_is_write_failure(c) for c in _causes(e))


def cause_of(e: BaseException) -> BaseException:
    """The error that makes :func:`cannot_write` true of ``e``: ``e`` or one of its
    causes (``e`` if none)."""
    return next((c for c in _causes(e) if _is_write_failure(c)), e)


def reason(e: BaseException) -> str:
    """``e`` in one line: the driver's own message's first line (no SQL, no traceback)."""
    e = cause_of(e)
    orig = getattr(e, "orig", None) or e
    text = str(orig).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(orig).__name__}: {first[:300]}" if first else type(orig).__name__


class Outage:
    """Whether the host can write now, as its parts found; the one place that says it
    cannot (thread-unsafe: used on the event loop)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.since: float | None = None
        """When (monotonic) the host found it could not write; None while it can."""
        self.failures = 0
        """Writes that failed since then."""
        self._said = float("-inf")

    @property
    def on(self) -> bool:
        """Whether the host cannot write (since a write failed, until :class:`Mender`
        found it can)."""
        return self.since is not None

    def hit(self, what: str, e: BaseException) -> None:
        """A write of ``what`` (e.g. "the result of game s3-1") failed with ``e``: say so,
        in one line, the first time and then at most every :data:`SAY_EVERY_S`."""
        now = self.clock()
        first = self.since is None
        if first:
            self.since = now
        self.failures += 1
        if first or now - self._said >= SAY_EVERY_S:
            self._said = now
            log.warning("cannot write %s: %s; %s", what, reason(e),
                        "games and builds wait, the games in flight are voided and played "
                        "again once the host can write" if first else
                        f"still so after {now - (self.since or now):.0f} s "
                        f"({self.failures} writes failed)")

    def over(self, voided: int, requeued: int) -> None:
        """The host can write again: say so, with what was mended."""
        lasted = self.clock() - (self.since or self.clock())
        log.warning("the host can write again after %.0f s: %d game(s) whose result could "
                    "not be written voided (rated ones played again), %d version(s) sent "
                    "back to the build queue", lasted, voided, requeued)
        self.since, self.failures = None, 0


def probe_disk(folder: Path, size: int = PROBE_BYTES) -> None:
    """Write ``size`` bytes to a file in ``folder`` (synced), then delete it.

    Raises:
        OSError: it could not (e.g. ``ENOSPC``: the disk is still full).
    """
    path = folder / ".write-probe"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "wb") as f:
            f.write(b"\0" * size)
            f.flush()
            os.fsync(f.fileno())
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


class Mender:
    """Once the host can write again, void what its outage left (module docstring).
    ``playing()``: the ids of the games this host is playing now; ``building()``: the
    versions being built or validated now; ``probe()``, if given, raises unless the disk
    can be written (:func:`probe_disk`), tried before the database."""

    def __init__(self, session: sessionmaker[Session], writer: Writer, recorder: Recorder,
                 outage: Outage, playing: Callable[[], set[str]],
                 building: Callable[[], set[int]], wake: Callable[[], None],
                 probe: Callable[[], None] | None = None) -> None:
        self.probe = probe
        self.Session = session
        self.writer = writer
        self.recorder = recorder
        self.outage = outage
        self.playing = playing
        self.building = building
        self.wake = wake

    def mend(self, playing: set[str], building: set[int]) -> tuple[int, int]:
        """In one transaction: void every ``running`` game not in ``playing`` (not a
        validation game of a version in ``building``), and send every version caught
        ``building`` or ``validating`` not in ``building`` back to ``pending``; how many
        games and versions. Run it on the writer thread."""
        with self.Session.begin() as s:
            left = s.scalars(select(Game).where(Game.status == "running")
                             .options(selectinload(Game.seats))).all()
            voided = 0
            for g in left:
                if g.id in playing or (g.kind != "rated" and any(
                        x.version_id in building for x in g.seats)):
                    continue
                self.recorder.void(s, g, "its result could not be written: the host could "
                                   "not write to its database or disk")
                voided += 1
            stuck = list(s.scalars(select(Version.id).where(
                Version.status.in_(("building", "validating")))))
            back = [v for v in stuck if v not in building]
            if back:
                s.execute(update(Version).where(Version.id.in_(back))
                          .values(status="pending"))
        return voided, len(back)

    async def run(self) -> None:
        """While the host cannot write, try :meth:`mend` every :data:`MEND_EVERY_S`."""
        while True:
            await asyncio.sleep(MEND_EVERY_S)
            if not self.outage.on:
                continue
            try:
                if self.probe is not None:
                    await asyncio.to_thread(self.probe)
                voided, back = await self.writer.write(self.mend, self.playing(),
                                                       self.building())
            except Exception as e:
                if not cannot_write(e):
                    raise
                self.outage.hit("what the outage left", e)
                continue
            self.outage.over(voided, back)
            self.wake()


__all__ = ["CANNOT_WRITE_ERRNOS", "PROBE_BYTES", "Mender", "Outage", "cannot_write",
           "cause_of", "probe_disk", "reason"]
