"""The competition host against the ladder: sustained games per minute of `moon host run`
and of `moon ladder run` on the same bots, rules and time control, in one run, and the
host's memory as games accumulate.

    .venv/bin/python benchmarks/host.py [--games 1000] [--window 48] [--concurrency 2]
        [--repeat 3] [--diagnostics] [--memory-only] [--host-env NAME=VALUE ...]

1. A ladder of heuristic, random and weak (duplicate sets of 6 games) through the real
   runner; its sustained rate is timed from its first finished game to its last.
2. `moon host run` as a real process (SQLite, local runner): three participants submit the
   same bots; once all three are active, its sustained rate is timed over the next
   ``window`` games, the same number the ladder played.
3. The ladder again (the machine is shared: its load changes), then the host, restarted,
   plays on to ``games`` games; its resident memory (VmRSS of the host process,
   bots aside) is printed every 100 games, to show it stays flat.

Steps 1 and 2 and the ladder again are one repetition; ``--repeat R`` makes R of them, each
with a new host, and prints the overhead's median [min-max] over them. Step 3 restarts the
last host.

Prints the two rates side by side and the host's overhead (ladder rate / host rate; the
aim is at most 1.1). A figure, not a test: the machine is shared and noisy.

``--diagnostics`` prints, beside VmRSS, where the memory is: anonymous and file-backed
resident memory, threads and open file descriptors (from /proc), and from inside the host
(benchmarks/hostdiag/sitecustomize.py) SQLite's own allocator (in use and high-water),
glibc malloc (in use, free but kept), the interpreter's allocated blocks and its interned
strings (how many alive, thousands; the table's MB and slots; how many more new ones it takes
before it is resized), and the host's ``malloc_trim`` calls (how many, mean ms each;
``--host-env MOON_BENCH_NO_TRIM=1`` turns them off, to compare).
``--memory-only`` skips the rates (steps 1 and 3's ladder); ``--host-env`` sets a variable
for the host process (e.g. ``MALLOC_ARENA_MAX=2``) to compare; with ``--diagnostics``,
``--host-env MOON_BENCH_TRACE_FROM=2000`` starts tracemalloc in the host once it has finished
2,000 games and dumps snapshots beside the diagnostics file (see hostdiag/sitecustomize.py);
``--host-env MOON_BENCH_TYPES_AT=1000,3000`` counts the objects the collector tracks, by type,
and how full each ``functools`` cache is, at those game counts, with the differences from one
count to the next (what grows with games).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import math
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "host"))

from host_support import EXAMPLES, HostProcess, make_competition, tar_folder  # noqa: E402

from arena.ladder.config import ladder_from_dict  # noqa: E402
from arena.ladder.runner import Reporter, open_store, run_ladder  # noqa: E402

BOTS = ("heuristic", "random", "weak")
RULES = {"target_score": 7}
ladder_wall = 0.0
TC = {"decision_ms": 1000, "bank_ms": 5000, "startup_ms": 10000, "max_hands": 4}


def ladder_rate(games: int, concurrency: int, tmp: Path) -> tuple[int, float]:
    data = {"ladder": {"name": "bench-host", "preset": "moon3", "seed": 5,
                       "boards": math.ceil(games / 6), "concurrency": concurrency,
                       "options": RULES},
            "time_control": TC,
            "bots": [{"path": str(EXAMPLES / b)} for b in BOTS]}
    tmp.mkdir(parents=True, exist_ok=True)
    cfg = ladder_from_dict(data, tmp / "bench.toml")
    results = tmp / "ladder.sqlite"
    store = open_store(cfg, results)
    stamps: list[float] = []

    class Stamps(Reporter):
        def game_finished(self, game, finished, row) -> None:  # type: ignore[no-untyped-def]
            stamps.append(time.monotonic())

    asyncio.run(run_ladder(cfg, store, results, reporter=Stamps()))
    walls = [row[0] for row in store.db.execute("SELECT wall_ms FROM games")]
    store.close()
    global ladder_wall
    ladder_wall = sum(walls) / len(walls)
    return len(stamps), (len(stamps) - 1) / (stamps[-1] - stamps[0]) * 60


def host_rate(db: Path, first: int, n: int) -> tuple[float, int, float]:
    """Sustained games/min of ``n`` rated games from the ``first``-th (result order), from
    their finish times in the host's database; and their mean wall time, ms."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT finished_at, wall_ms FROM games WHERE kind = 'rated' AND "
                            "status = 'finished' ORDER BY seq LIMIT ? OFFSET ?",
                            (n, first - 1)).fetchall()
    times = [dt.datetime.fromisoformat(r[0]).timestamp() for r in rows]
    return ((len(times) - 1) / (times[-1] - times[0]) * 60, len(times),
            sum(r[1] for r in rows) / len(rows))


def proc_status(pid: int) -> dict[str, int]:
    """The numeric fields of /proc/PID/status (kB for the Vm*/Rss* ones)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if parts and parts[0].isdigit():
            out[key] = int(parts[0])
    return out


def rss_mb(pid: int) -> float:
    return proc_status(pid).get("VmRSS", -1) / 1024


DIAG_DIR = Path(__file__).resolve().parent / "hostdiag"


def diagnostics(pid: int, inside: Path) -> str:
    """One line: where the host's memory is (MB unless said)."""
    st = proc_status(pid)
    fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    parts = [f"anon {st.get('RssAnon', 0) / 1024:6.1f}", f"file {st.get('RssFile', 0) / 1024:5.1f}",
             f"threads {st.get('Threads', 0):3d}", f"fds {fds:4d}"]
    try:
        d = json.loads(inside.read_text())
    except (OSError, ValueError):
        return "  ".join(parts)
    mb = 1024 * 1024
    if "sqlite_used" in d:
        parts.append(f"sqlite {d['sqlite_used'] / mb:5.1f} (high {d['sqlite_high'] / mb:5.1f})")
    if "malloc_used" in d:
        parts.append(f"malloc used {d['malloc_used'] / mb:6.1f} free {d['malloc_free'] / mb:5.1f}")
    parts.append(f"py blocks {d['py_blocks'] / 1000:5.0f}k")
    if d.get("trims"):
        parts.append(f"trims {d['trims']:3d} ({1000 * d['trim_s'] / d['trims']:5.1f} ms each)")
    if "interned" in d:
        parts.append(f"interned {d['interned'] / 1000:5.1f}k ({d['interned_bytes'] / mb:4.1f}"
                     f" 2^{d.get('interned_log2', 0)}"
                     f" left {d.get('interned_left', 0) / 1000:5.1f}k)")
    return "  ".join(parts + [f"batch worker {batch_worker_mb(pid):5.1f}"])


def batch_worker_mb(pid: int) -> float:
    """VmRSS of the host's batch-fit worker process (a multiprocessing child), MB."""
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            children += (task / "children").read_text().split()
    for child in children:
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                return rss_mb(int(child))
        except OSError:
            continue
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000, help="host games for the memory run")
    ap.add_argument("--window", type=int, default=48, help="games timed for the rates")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3,
                    help="rate measurements, each with a new host (the median is printed)")
    ap.add_argument("--diagnostics", action="store_true",
                    help="print where the host's memory is, beside VmRSS")
    ap.add_argument("--memory-only", action="store_true", help="skip the rates")
    ap.add_argument("--batch-every-s", type=float, default=60.0,
                    help="the host's batch_every_s (seconds between batch fits)")
    ap.add_argument("--host-env", action="append", default=[], metavar="NAME=VALUE",
                    help="an environment variable for the host process (repeatable)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="moon-bench-host-"))
    env = dict(kv.split("=", 1) for kv in args.host_env)
    inside = tmp / "diag.json"
    if args.diagnostics:
        env["MOON_BENCH_DIAG"] = str(inside)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(DIAG_DIR), os.environ.get("PYTHONPATH", "")) if p)

    overheads = []
    folder = tmp
    for k in range(1 if args.memory_only else args.repeat):
        if args.repeat > 1 and not args.memory_only:
            print(f"repetition {k + 1} of {args.repeat}:", flush=True)
        folder, overhead = repetition(args, tmp / f"r{k}", env)
        overheads.append(overhead)
    if len(overheads) > 1:
        ordered = sorted(overheads)
        print(f"host overhead over {len(ordered)} repetitions: median "
              f"{statistics.median(ordered):.2f}x [{ordered[0]:.2f}-{ordered[-1]:.2f}] "
              "(each a new host; aim <= 1.1)", flush=True)
    memory(args, folder, env, inside)


def repetition(args: argparse.Namespace, tmp: Path, env: dict[str, str]
               ) -> tuple[Path, float]:
    """The ladder, a new host on the same bots, the ladder again: the host's competition
    folder and its overhead (mean ladder rate / host rate; 0.0 with ``--memory-only``)."""
    if args.memory_only:
        n_ladder = 0
    else:
        n_ladder, ladder_a = ladder_rate(args.window, args.concurrency, tmp / "a")
        wall_a = ladder_wall
        print(f"ladder: {n_ladder} games, {ladder_a:.1f} games/min sustained", flush=True)

    folder = make_competition(tmp / "comp", concurrency=args.concurrency)
    toml = folder / "competition.toml"
    toml.write_text(toml.read_text()
                    .replace("batch_every_s = 2", f"batch_every_s = {args.batch_every_s:g}")
                    .replace("bootstrap = 20", "bootstrap = 100"))
    host = HostProcess(folder, None, env).start()
    try:
        versions = []
        for i, bot in enumerate(BOTS):
            token = host.register(f"p{i}")
            versions.append((token, host.submit(token, tar_folder(EXAMPLES / bot)).json()))
        for token, v in versions:
            assert host.wait_version(token, v["id"])["status"] == "active"
        # timed from the database afterwards (the results' own times, as the ladder's
        # are timed by its callbacks), so that polling the API costs the host nothing
        n0 = finished(host)
        while not args.memory_only and finished(host) < n0 + n_ladder + 1:
            time.sleep(2.0)
    finally:
        host.stop()
    if args.memory_only:
        return folder, 0.0
    return folder, rates(args, tmp, folder, n0, n_ladder, ladder_a, wall_a)


def rates(args: argparse.Namespace, tmp: Path, folder: Path, n0: int, n_ladder: int,
          ladder_a: float, wall_a: float) -> float:
    """Prints the host's rate, the ladder's again and the overhead; returns the overhead."""
    hosted, n_host, wall_ms = host_rate(folder / "host.sqlite", n0 + 1, n_ladder)
    print(f"host:   {n_host} games, {hosted:.1f} games/min sustained", flush=True)

    # the ladder again, so that a change in the machine's load shows (it is shared)
    _, ladder_b = ladder_rate(args.window, args.concurrency, tmp / "b")
    print(f"ladder: {n_ladder} games, {ladder_b:.1f} games/min sustained (again)", flush=True)
    ladder = (ladder_a + ladder_b) / 2
    print(f"host overhead: {ladder / hosted:.2f}x (mean ladder rate / host rate; aim <= 1.1)",
          flush=True)
    print(f"mean game wall time: ladder {(wall_a + ladder_wall) / 2:.0f} ms, host "
          f"{wall_ms:.0f} ms", flush=True)
    return ladder / hosted


def memory(args: argparse.Namespace, folder: Path, env: dict[str, str], inside: Path) -> None:
    """The last host, restarted, plays on to ``args.games`` games; its memory every 100."""
    host = HostProcess(folder, None, env).start()
    try:
        assert host.proc is not None
        pid = host.proc.pid
        print("host memory (VmRSS of the host process, bots aside):", flush=True)
        start, mark, t_start = finished(host), 100, time.monotonic()
        while True:
            n = finished(host) - start
            if n >= mark or n >= args.games:  # every 100 games, and at the end
                mins = (time.monotonic() - t_start) / 60
                extra = f"  {diagnostics(pid, inside)}" if args.diagnostics else ""
                print(f"  {n:5d} games  {rss_mb(pid):7.1f} MB  ({mins:.1f} min){extra}",
                      flush=True)
                mark += 100
                if n >= args.games:
                    break
            time.sleep(5.0)
    finally:
        host.stop()


def finished(host: HostProcess) -> int:
    return int(host.ok("GET", "/api/status")["finished"])


if __name__ == "__main__":
    main()
