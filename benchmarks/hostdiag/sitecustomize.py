"""Diagnostics for ``benchmarks/host.py --diagnostics``: loaded into `moon host run` (this
folder is put first on its PYTHONPATH) when MOON_BENCH_DIAG names a file. A daemon thread
writes there, every 2 s, what only the process itself can see of its memory: SQLite's own
allocator (``sqlite3_memory_used``/``highwater``, from the libsqlite3 that Python's
``_sqlite3`` is linked to), glibc malloc's heap (``mallinfo2``: bytes in use, bytes free but
kept), the interpreter's allocated blocks, and its table of interned strings (read through
the ``interned`` symbol of libpython, when ``nm`` finds it): how many are alive, the table's
bytes and slots, and how many more strings can be added to it before it is resized (each new
interned string takes a slot until then, even once it is dead: a per-game string shows as a
count that falls game after game), and the host's ``malloc_trim`` calls (arena/host/memory.py:
how many, their mean cost; ``MOON_BENCH_NO_TRIM=1`` turns them off, to compare). A benchmark
aid, not part of the product.
"""

from __future__ import annotations

import os

_PATH = os.environ.get("MOON_BENCH_DIAG")


def _is_host() -> bool:
    """Only the host process itself: not its bots, nor its batch fit's worker (they inherit
    the environment)."""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return b"arena.cli" in argv and b"host" in argv and b"run" in argv


def _start(path: str) -> None:
    import ctypes
    import ctypes.util
    import json
    import sys
    import threading
    import time

    def lib(name: str, *fallbacks: str) -> ctypes.CDLL | None:
        for n in (ctypes.util.find_library(name), *fallbacks):
            if n:
                try:
                    return ctypes.CDLL(n)
                except OSError:
                    continue
        return None

    import _sqlite3  # loads the libsqlite3 it links to: the same copy is found here

    sq = lib("sqlite3", "libsqlite3.so.0")
    libc = lib("c", "libc.so.6")
    if sq is not None:
        sq.sqlite3_memory_used.restype = ctypes.c_int64
        sq.sqlite3_memory_highwater.restype = ctypes.c_int64
        sq.sqlite3_memory_highwater.argtypes = [ctypes.c_int]

    class Mallinfo2(ctypes.Structure):
        _fields_ = [(f, ctypes.c_size_t) for f in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    mallinfo2 = getattr(libc, "mallinfo2", None) if libc is not None else None
    if mallinfo2 is not None:
        mallinfo2.restype = Mallinfo2
    del _sqlite3

    interned = _interned_table()
    if os.environ.get("MOON_BENCH_NO_TRIM"):  # to compare: the host without malloc_trim
        import arena.host.memory

        arena.host.memory._TRIM = None

    def sample() -> dict[str, float]:
        out: dict[str, float] = {"py_blocks": sys.getallocatedblocks()}
        if interned is not None:
            out["interned"] = len(interned)
            out["interned_bytes"] = sys.getsizeof(interned)
            # CPython 3.11, 64-bit: PyDictObject.ma_keys at 32; in the keys object
            # dk_log2_size at 8, dk_usable at 16
            keys = ctypes.c_void_p.from_address(id(interned) + 32).value
            if keys:
                out["interned_log2"] = ctypes.c_uint8.from_address(keys + 8).value
                out["interned_left"] = ctypes.c_ssize_t.from_address(keys + 16).value
        if sq is not None:
            out["sqlite_used"] = sq.sqlite3_memory_used()
            out["sqlite_high"] = sq.sqlite3_memory_highwater(0)
        if mallinfo2 is not None:
            m = mallinfo2()
            out["malloc_used"] = m.uordblks + m.hblkhd  # in use: heap chunks + mmapped
            out["malloc_free"] = m.fordblks  # free, kept by malloc
            out["malloc_arena"] = m.arena  # bytes of the heaps (all arenas)
        memory = sys.modules.get("arena.host.memory")
        if memory is not None:  # the host's malloc_trim calls so far
            t = memory.trim_stats()
            out["trims"], out["trim_s"], out["trims_released"] = t.calls, t.seconds, t.released
        return out

    trace = os.environ.get("MOON_BENCH_TRACEMALLOC")
    if trace:  # Python-level growth by line: top differences to the first snapshot
        import tracemalloc

        tracemalloc.start(int(trace))
    first: list[object] = []
    started = time.monotonic()

    def compare() -> None:
        import tracemalloc

        snap = tracemalloc.take_snapshot().filter_traces(
            (tracemalloc.Filter(False, tracemalloc.__file__),))
        if not first:
            first.append(snap)
            return
        stats = snap.compare_to(first[0], "traceback")  # type: ignore[arg-type]
        with open(f"{path}.tracemalloc.tmp", "w") as f:
            for st in stats[:30]:
                f.write(f"{st.size_diff / 1024:+9.1f} kB {st.count_diff:+7d} blocks  "
                        f"{st.size / 1024:9.1f} kB\n")
                for line in st.traceback.format()[-2 * int(trace or 1):]:
                    f.write(f"      {line}\n")
        os.replace(f"{path}.tracemalloc.tmp", f"{path}.tracemalloc.txt")

    def loop() -> None:
        tmp = f"{path}.tmp"
        last = 0.0
        while True:
            if trace and time.monotonic() - started > 90 and time.monotonic() - last > 120:
                last = time.monotonic()
                try:
                    compare()
                except Exception as e:
                    with open(f"{path}.tracemalloc.txt", "w") as f:
                        f.write(repr(e))
            try:
                with open(tmp, "w") as f:
                    json.dump(sample(), f)
                os.replace(tmp, path)
            except Exception:  # a diagnostic never takes the host down
                pass
            time.sleep(2.0)

    threading.Thread(target=loop, name="moon-bench-diag", daemon=True).start()
    at = os.environ.get("MOON_BENCH_TYPES_AT")
    if at:
        threading.Thread(target=_types_at, args=(path, [int(n) for n in at.split(",")]),
                         name="moon-bench-types", daemon=True).start()
    late = os.environ.get("MOON_BENCH_TRACE_FROM")
    if late:
        threading.Thread(target=_trace_late, args=(path, int(late)), name="moon-bench-trace",
                         daemon=True).start()


def _interned_table() -> dict[str, str] | None:
    """CPython 3.11's dict of interned strings (the static ``interned`` of
    unicodeobject.c, found by its symbol in libpython), or None."""
    import ctypes
    import subprocess

    try:
        lib, base = "", 0
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and "libpython3" in parts[5] and int(parts[2], 16) == 0:
                    lib, base = parts[5], int(parts[0].split("-")[0], 16)
                    break
        if not lib:
            return None
        out = subprocess.run(["nm", lib], capture_output=True, text=True, timeout=60).stdout
        offs = [int(x.split()[0], 16) for x in out.splitlines()
                if x.split()[-1:] == ["interned"] and x.split()[1:2] in (["b"], ["d"])]
        if len(offs) != 1:
            return None
        ptr = ctypes.c_void_p.from_address(base + offs[0]).value
        table = ctypes.cast(ptr, ctypes.py_object).value if ptr else None
        return table if isinstance(table, dict) else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def _finished_games() -> int:
    """The host's finished games so far, read from its SQLite database (read-only)."""
    import sqlite3
    import time

    with open("/proc/self/cmdline", "rb") as f:
        argv = [a.decode() for a in f.read().split(b"\0")]
    db = os.path.join(argv[argv.index("run") + 1], "host.sqlite")
    for _ in range(10):  # a read may meet the writer's checkpoint: try again
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                return int(conn.execute("SELECT count(*) FROM games WHERE status = "
                                        "'finished'").fetchone()[0])
        except sqlite3.Error:
            time.sleep(0.5)
    return -1


def _types_at(path: str, marks: list[int]) -> None:
    """``MOON_BENCH_TYPES_AT=N1,N2,...``: once the host has finished N games, count the
    objects the garbage collector tracks by type (after a full collection) and write the
    counts to ``{path}.types.{N:06d}.json``, and the types whose count changed since the
    previous mark to ``{path}.types.{N:06d}.diff.txt`` (objects that grow with games)."""
    import collections
    import functools
    import gc
    import json
    import time

    previous: dict[str, int] = {}
    try:
        for mark in sorted(marks):
            while _finished_games() < mark:
                time.sleep(2.0)
            gc.collect()
            objects = gc.get_objects()
            counts = collections.Counter(
                f"{type(o).__module__}.{type(o).__qualname__}" for o in objects)
            # functools caches by how full they are (a bounded cache still filling grows)
            for o in objects:
                if isinstance(o, functools._lru_cache_wrapper):
                    info = o.cache_info()
                    counts[f"lru {getattr(o, '__module__', '?')}."
                           f"{getattr(o, '__qualname__', '?')} (max {info.maxsize})"] = (
                        info.currsize)
            del objects
            with open(f"{path}.types.{mark:06d}.json", "w") as f:
                json.dump(dict(counts), f)
            if previous:
                diff = sorted(((n - previous.get(k, 0), k) for k, n in counts.items()),
                              reverse=True)
                gone = [(n, k) for k, n in previous.items() if k not in counts]
                with open(f"{path}.types.{mark:06d}.diff.txt", "w") as f:
                    for d, k in diff[:60] + [(-n, k) for n, k in gone]:
                        if d:
                            f.write(f"{d:+8d}  {counts.get(k, 0):8d}  {k}\n")
            previous = dict(counts)
    except Exception as e:  # a diagnostic never takes the host down
        with open(f"{path}.types-error.txt", "w") as f:
            f.write(repr(e))


def _trace_late(path: str, from_games: int) -> None:
    """``MOON_BENCH_TRACE_FROM=N``: start tracemalloc (``MOON_BENCH_TRACE_FRAMES`` frames)
    only once the host has finished N games, so that only what is allocated from then on is
    traced (and the host runs at full speed until then); then dump a whole snapshot every
    ``MOON_BENCH_SNAPSHOT_S`` seconds to ``{path}.{games:06d}.snapshot``, to compare any two
    afterwards (``tracemalloc.Snapshot.load``): what was allocated after the first and is
    still alive at the second."""
    import time
    import tracemalloc

    every = float(os.environ.get("MOON_BENCH_SNAPSHOT_S", "60"))
    games = _finished_games
    try:
        while games() < from_games:
            time.sleep(5.0)
        tracemalloc.start(int(os.environ.get("MOON_BENCH_TRACE_FRAMES", "10")))
        while True:
            tracemalloc.take_snapshot().dump(f"{path}.{games():06d}.snapshot")
            time.sleep(every)
    except Exception as e:  # a diagnostic never takes the host down
        with open(f"{path}.trace-error.txt", "w") as f:
            f.write(repr(e))


if _PATH and _is_host():
    _start(_PATH)
