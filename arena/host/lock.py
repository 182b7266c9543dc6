"""One host per competition: :class:`HostLock`.

Two ``moon host run`` on one competition would each think the other's games in flight were
left by a crash (voiding them), run the same matchmaking twice and write the same records.
So a host holds, for as long as it runs:

- an exclusive lock on ``FOLDER/.host.lock`` (``flock``; the file says which process holds
  it), the competition folder's records and uploads being its own;
- a lock on its database: on SQLite, the same kind of lock on ``FILE.host.lock`` next to
  the database file (not on the file itself: SQLite's own locks are POSIX locks, which a
  process loses when it closes any descriptor of that file); on PostgreSQL a session-level
  advisory lock (``pg_try_advisory_lock``), so that two folders cannot share one database
  either.

The kernel and the database server release them whatever ends the process (``kill -9``
too), so a crash never leaves a competition locked. ``moon host rerate``, which must run
with the host stopped, takes the same locks.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text

from ..errors import ConfigError

LOCK_NAME = ".host.lock"
ADVISORY_KEY = 0x6D6F6F6E_686F7374  # "moonhost": the one advisory lock key a host takes
PG_RETRY_S = 3.0
"""How long a PostgreSQL advisory lock held by another session is asked for again (s)."""


class HostLock:
    """The locks of a running host on its competition ``folder`` and database ``engine``
    (module docstring). :meth:`acquire` takes them all or none; :meth:`release` (or the
    process's end) gives them back."""

    def __init__(self, folder: Path, engine: Engine | None) -> None:
        self.folder = folder
        self.engine = engine
        self._files: list[int] = []
        self._pg: Any = None

    def acquire(self) -> None:
        """Take the folder's and the database's locks.

        Raises:
            ConfigError: another process holds one of them (which, when the lock file
                says), or a lock file cannot be written.
        """
        try:
            self._lock_file(self.folder / LOCK_NAME, f"the competition {self.folder}")
            if self.engine is None:  # the folder's lock only
                return
            url = self.engine.url
            if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
                db = Path(url.database).resolve()
                self._lock_file(db.with_name(db.name + LOCK_NAME), f"the database {db}")
            elif url.get_backend_name() == "postgresql":
                self._lock_postgres(self.engine)
        except BaseException:
            self.release()
            raise

    def _lock_file(self, path: Path, what: str) -> None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise ConfigError(f"cannot lock {what} ({path}: {e.strerror}): "
                              "check that the folder is writable") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise ConfigError(f"{what} is already served by another `moon host run`"
                              f"{f' (pid {holder})' if holder else ''}: stop that one first "
                              "(one host per competition and per database)") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._files.append(fd)

    def _lock_postgres(self, engine: Engine) -> None:
        conn = engine.connect()  # held (out of the pool) for as long as the host runs
        try:
            # a host killed a moment ago holds it until the server has ended its session
            # (not at once): asked again for a few seconds before giving up
            deadline = time.monotonic() + PG_RETRY_S
            while True:
                got = conn.execute(text("SELECT pg_try_advisory_lock(:k)"),
                                   {"k": ADVISORY_KEY}).scalar()
                conn.commit()
                if got or time.monotonic() >= deadline:
                    break
                time.sleep(0.25)
        except Exception:
            conn.close()
            raise
        if not got:
            conn.invalidate()
            conn.close()
            raise ConfigError(
                f"the database {engine.url.render_as_string(hide_password=True)} is "
                "already served by another `moon host run`: stop that one first (one host "
                "per competition and per database)")
        self._pg = conn

    def release(self) -> None:
        """Give the locks back (safe to call twice)."""
        for fd in self._files:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._files.clear()
        if self._pg is not None:
            with contextlib.suppress(Exception):
                # unlocked before the connection goes: a session's end is not waited for
                # (its locks outlive the close by a moment), and the connection is closed,
                # not given back to the pool, should the unlock have failed
                self._pg.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": ADVISORY_KEY})
                self._pg.commit()
            with contextlib.suppress(Exception):
                self._pg.invalidate()
                self._pg.close()
            self._pg = None


def check_not_served(folder: Path) -> None:
    """Fail now if another host serves ``folder`` (its lock is held), before a port or a
    database is tried: the one line then says that, not "port in use". Takes nothing: the
    host's own :class:`HostLock` is taken when it opens the competition.

    Raises:
        ConfigError: another `moon host run` serves the folder (its pid, when known).
    """
    probe = HostLock(folder, None)  # the folder's lock only
    try:
        probe.acquire()
    finally:
        probe.release()


def _read_holder(fd: int) -> int | None:
    try:
        first = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


__all__ = ["HostLock", "check_not_served"]
