"""Open registration's limits (``[competition] max_participants`` and
``registrations_per_hour``; docs/host.md, "Settings that matter most"): without them anyone
could make account after account, each with its own submission limits and its own turn in
the build queue.

The count per client address is kept in the host's memory over a sliding hour (a restart
forgets it); the cap on participants is counted in the database. One lock is held across a
whole open registration (check, insert, commit, count), so two sent at once cannot both
take the last place.
"""

from __future__ import annotations

import collections
import ipaddress
import math
import threading
import time
from collections.abc import Callable

WINDOW_S = 3600.0
"""The window of ``registrations_per_hour``, seconds."""


def client_key(address: str | None) -> str:
    """The key a client's registrations are counted under: its IP address as text, an IPv6
    address by its /64 network (one host or home network is given a whole /64, so counting
    single addresses would not limit it), an IPv4 address mapped into IPv6 as the IPv4
    address. Anything that is not an IP address (a Unix socket's peer, none) is one key.

    >>> client_key("203.0.113.9")
    '203.0.113.9'
    >>> client_key("2001:db8:1:2:aaaa::1")
    '2001:db8:1:2::/64'
    >>> client_key("::ffff:203.0.113.9")
    '203.0.113.9'
    >>> client_key(None)
    'unknown'
    """
    if not address:
        return "unknown"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class RegistrationWindow:
    """Open registrations per client key (:func:`client_key`) over the last
    :data:`WINDOW_S` seconds, at most ``per_hour`` each (0: no limit). Thread-safe: the
    API's handlers run in a thread pool. Its memory holds one time per registration of the
    last hour, no more.

    Use it as a lock around one registration: :meth:`wait_s` to ask, :meth:`add` once the
    participant is stored.
    """

    def __init__(self, per_hour: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_hour = per_hour
        self._clock = clock
        self._times: dict[str, collections.deque[float]] = {}
        self.lock = threading.Lock()
        """Held across a whole open registration by its caller."""

    def _forget_old(self, now: float) -> None:
        for key in list(self._times):
            times = self._times[key]
            while times and now - times[0] >= WINDOW_S:
                times.popleft()
            if not times:
                del self._times[key]

    def count(self, key: str) -> int:
        """Registrations from ``key`` in the last hour."""
        self._forget_old(self._clock())
        return len(self._times.get(key, ()))

    def wait_s(self, key: str) -> float:
        """Seconds until ``key`` may register again: 0 if it may now."""
        if self.per_hour <= 0:
            return 0.0
        now = self._clock()
        self._forget_old(now)
        times = self._times.get(key)
        if times is None or len(times) < self.per_hour:
            return 0.0
        return max(times[-self.per_hour] + WINDOW_S - now, 1.0)

    def add(self, key: str) -> None:
        """Count a registration from ``key`` now."""
        if self.per_hour > 0:
            self._times.setdefault(key, collections.deque()).append(self._clock())


def minutes(seconds: float) -> str:
    """A wait in whole minutes, rounded up, for a message.

    >>> minutes(59.0), minutes(61.0), minutes(3600.0)
    ('1 minute', '2 minutes', '60 minutes')
    """
    m = max(1, math.ceil(seconds / 60))
    return f"{m} minute{'s' if m != 1 else ''}"


__all__ = ["RegistrationWindow", "client_key", "minutes", "WINDOW_S"]
