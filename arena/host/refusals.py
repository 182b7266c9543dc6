"""Refused uploads (docs/host.md, "From upload to rated games"): each counts against its
participant's ``[limits] max_versions_per_day`` as a new version would, so that sending
archive after archive the host must unpack and refuse costs the sender as much as
submitting; and each is one line in the host's log, at most :data:`LINES_PER_MIN` a minute
(then one line saying how many went unsaid).

The count is kept in the host's memory over a sliding day (a restart forgets it), one
time per refusal, no more."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger("arena.host")

WINDOW_S = 86400.0
"""The window of ``max_versions_per_day``, seconds."""
LINES_PER_MIN = 10
"""Refusals said in the log in any minute; the rest are counted in one line."""


class UploadRefusals:
    """Refused uploads per participant over the last :data:`WINDOW_S` (thread-safe: the
    API's handlers run in a thread pool)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._times: dict[int, collections.deque[float]] = {}
        self._said: collections.deque[float] = collections.deque()
        self._unsaid = 0
        self._lock = threading.Lock()

    def add(self, participant_id: int, name: str, status: int, detail: str) -> None:
        """Count a refusal of participant ``participant_id`` (``name``) and say it: the
        answer's ``status`` and ``detail`` (its first line)."""
        now = self._clock()
        with self._lock:
            self._times.setdefault(participant_id, collections.deque()).append(now)
            self._forget(now)
            while self._said and now - self._said[0] >= 60.0:
                self._said.popleft()
            if len(self._said) >= LINES_PER_MIN:
                self._unsaid += 1
                return
            self._said.append(now)
            unsaid, self._unsaid = self._unsaid, 0
        first = (detail.splitlines() or [""])[0][:300]
        log.warning("upload of %s refused (%d): %s%s", name, status, first,
                    f" ({unsaid} more refused in the last minute, not said)" if unsaid
                    else "")

    def count(self, participant_id: int) -> int:
        """``participant_id``'s refused uploads in the last :data:`WINDOW_S`."""
        with self._lock:
            self._forget(self._clock())
            return len(self._times.get(participant_id, ()))

    def _forget(self, now: float) -> None:
        for pid in list(self._times):
            times = self._times[pid]
            while times and now - times[0] > WINDOW_S:
                times.popleft()
            if not times:
                del self._times[pid]


__all__ = ["LINES_PER_MIN", "WINDOW_S", "UploadRefusals"]
