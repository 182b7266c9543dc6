"""Refused uploads (docs/host.md, "From upload to rated games"): each counts against its
participant's ``[limits] max_versions_per_day`` as a new version would, so that sending
archive after archive the host must unpack and refuse costs the sender as much as
submitting; and each is one line in the host's log, at most :data:`LINES_PER_MIN` a minute
(then one line saying how many went unsaid).

The count is kept in the database (:class:`arena.host.models.UploadRefusal`, a row per
refusal over a sliding day), so a restart does not forget it; the log's rate limit is in
memory."""

from __future__ import annotations

import collections
import datetime as dt
import logging
import threading
from collections.abc import Callable

from sqlalchemy import delete, func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from .models import UploadRefusal, utcnow

log = logging.getLogger("arena.host")

WINDOW = dt.timedelta(days=1)
"""The window of ``max_versions_per_day``."""
LINES_PER_MIN = 10
"""Refusals said in the log in any minute; the rest are counted in one line."""


class UploadRefusals:
    """Refused uploads per participant over the last :data:`WINDOW`, in the database of
    ``session`` (thread-safe: the API's handlers run in a thread pool). ``clock`` gives
    now, timezone-aware."""

    def __init__(self, session: sessionmaker[Session],
                 clock: Callable[[], dt.datetime] = utcnow) -> None:
        self.Session = session
        self._clock = clock
        self._said: collections.deque[float] = collections.deque()
        self._unsaid = 0
        self._lock = threading.Lock()

    def add(self, participant_id: int, name: str, status: int, detail: str) -> None:
        """Count a refusal of participant ``participant_id`` (``name``) and say it: the
        answer's ``status`` and ``detail`` (its first line). A database that cannot take
        the row costs a line in the log, never the caller's answer."""
        now = self._clock()
        try:
            with self.Session.begin() as s:
                s.add(UploadRefusal(participant_id=participant_id, at=now, status=status))
                s.execute(delete(UploadRefusal).where(UploadRefusal.at < now - WINDOW))
        except SQLAlchemyError as e:
            log.warning("upload refusal of %s not counted: the database did not take it "
                        "(%s)", name, (str(e).splitlines() or [""])[0][:200])
        t = now.timestamp()
        with self._lock:
            while self._said and t - self._said[0] >= 60.0:
                self._said.popleft()
            if len(self._said) >= LINES_PER_MIN:
                self._unsaid += 1
                return
            self._said.append(t)
            unsaid, self._unsaid = self._unsaid, 0
        first = (detail.splitlines() or [""])[0][:300]
        log.warning("upload of %s refused (%d): %s%s", name, status, first,
                    f" ({unsaid} more refused in the last minute, not said)" if unsaid
                    else "")

    def count(self, participant_id: int) -> int:
        """``participant_id``'s refused uploads in the last :data:`WINDOW`."""
        since = self._clock() - WINDOW
        with self.Session() as s:
            return s.scalar(select(func.count(UploadRefusal.id)).where(
                UploadRefusal.participant_id == participant_id,
                UploadRefusal.at >= since)) or 0


__all__ = ["LINES_PER_MIN", "WINDOW", "UploadRefusals"]
