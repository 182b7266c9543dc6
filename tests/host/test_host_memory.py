"""The host gives its heap's free memory back to the operating system (arena/host/memory.py,
docs/host.md "Memory"): ``trim_heap`` releases what a process freed, and a running host
calls it at its quiet moments (after each batch fit) while it goes on playing games.

The host's calls are seen from outside through a ``sitecustomize`` of the test's own, put
first on the host process's PYTHONPATH, which counts each call to glibc's ``malloc_trim``
in a file (one line per call) and then makes the call."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

from arena.host import memory

needs_trim = pytest.mark.skipif(memory._TRIM is None,
                                reason="the C library has no malloc_trim (not glibc)")

FREED = textwrap.dedent("""
    import ctypes, sys
    from arena.host.memory import trim_heap, trim_stats

    def anon_kb():
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                return int(line.split()[1])

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = []
    for _ in range(40_000):              # 40,000 blocks of 1 kB: 40 MB in malloc's heap
        p = libc.malloc(1000)
        ctypes.memset(p, 1, 1000)        # touched: resident
        blocks.append(p)
    keep = libc.malloc(1000)             # above them: freeing them cannot shrink the heap top
    for p in blocks:
        libc.free(p)
    before = anon_kb()
    released = trim_heap()
    after = anon_kb()
    print(released, before - after, trim_stats().calls)
""")


@needs_trim
def test_trim_heap_gives_back_memory_that_was_freed_inside_the_heap() -> None:
    # 40 MB freed below a block still in use stay resident until trimmed; the trim gives
    # back (nearly) all of them: at least half, whatever else the interpreter holds
    out = subprocess.run([sys.executable, "-c", FREED], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert out[0] == "True"
    assert int(out[1]) >= 20_000, f"only {out[1]} kB given back of 40,000 kB freed"
    assert out[2] == "1"


def test_trim_heap_is_a_no_op_without_malloc_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    before = memory.trim_stats().calls
    monkeypatch.setattr(memory, "_TRIM", None)
    assert memory.trim_heap() is False
    assert memory.trim_stats().calls == before


COUNTER = textwrap.dedent("""
    import os

    if os.environ.get("MOON_TEST_TRIMS"):
        import arena.host.memory

        real = arena.host.memory._TRIM

        def counted(pad):
            with open(os.environ["MOON_TEST_TRIMS"], "a") as f:
                f.write("trim\\n")
            return real(pad)

        arena.host.memory._TRIM = counted
""")


@needs_trim
def test_the_host_trims_its_heap_between_batch_fits_and_keeps_playing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(COUNTER)
    trims = tmp_path / "trims.txt"
    folder = make_competition(tmp_path / "comp")  # a batch fit every 2 s
    host = HostProcess(folder, None, {"PYTHONPATH": str(site),
                                      "MOON_TEST_TRIMS": str(trims)}).start()

    def calls() -> int:
        return len(trims.read_text().splitlines()) if trims.exists() else 0

    def finished() -> int:
        return int(host.ok("GET", "/api/status")["finished"])

    try:
        versions = []
        for i, bot in enumerate(("heuristic", "random", "weak")):
            token = host.register(f"p{i}")
            versions.append((token, host.submit(token, tar_folder(EXAMPLES / bot)).json()))
        for token, v in versions:
            assert host.wait_version(token, v["id"])["status"] == "active"
        wait_for(lambda: finished() >= 1 and calls() >= 1, 120, "a game and a trim")
        # trims go on while games are played, and games go on after trims
        n, t = finished(), calls()
        wait_for(lambda: calls() >= t + 2 and finished() > n, 120,
                 "two more trims and more games")
        assert host.proc is not None and host.proc.poll() is None
    finally:
        host.stop()
    assert "Traceback" not in host.log.read_text(), host.log.read_text()[-3000:]
