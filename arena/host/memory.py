"""Giving a long-running process's free heap memory back to the operating system.

glibc's malloc keeps the memory a process frees for its next allocations; in a process that
runs for weeks (``moon host run``), the free memory scattered through its heaps after
thousands of games, each one's objects freed, stays resident (counted in its RSS) although
nothing uses it. :func:`trim_heap` asks glibc to return it (``malloc_trim(0)``: every
arena's free pages, not only the top of the heap, are released with ``madvise``); the host
calls it at quiet moments, off its event loop (docs/host.md, "Memory").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["TrimStats", "trim_heap", "trim_stats"]


@dataclass
class TrimStats:
    """What :func:`trim_heap` has done in this process: ``calls`` that reached glibc,
    ``seconds`` spent in them (wall time, all calls), ``released`` of them that gave memory
    back (``malloc_trim`` returned 1)."""

    calls: int = 0
    seconds: float = 0.0
    released: int = 0


_STATS = TrimStats()
_LOCK = threading.Lock()


def _find_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


_TRIM = _find_trim()


def trim_heap() -> bool:
    """Return the C heap's free memory to the operating system (glibc ``malloc_trim(0)``);
    blocking (a few ms for a heap of tens of MB; ctypes releases the GIL meanwhile), so
    call it from a worker thread, not an event loop. A no-op where the C library has no
    ``malloc_trim``.

    Returns:
        True when memory was given back, False when there was none to give or no
        ``malloc_trim``.
    """
    if _TRIM is None:
        return False
    with _LOCK:  # one trim at a time: a second one at once would find nothing to do
        t0 = time.perf_counter()
        released = bool(_TRIM(0))
        _STATS.seconds += time.perf_counter() - t0
        _STATS.calls += 1
        _STATS.released += released
    return released


def trim_stats() -> TrimStats:
    """A copy of what :func:`trim_heap` has done in this process so far; ``calls`` stays 0
    where there is no ``malloc_trim``."""
    with _LOCK:
        return TrimStats(_STATS.calls, _STATS.seconds, _STATS.released)
