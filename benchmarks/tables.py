"""The host's rated games per minute with no table open and with tables open, side by side.

    .venv/bin/python benchmarks/tables.py [--concurrency 3] [--tables 2] [--seconds 60]
        [--repeat 3]

`moon host run` as a real process (SQLite, local runner, the fast games of the host tests)
with ``[tables] max_open = --tables``; two participants submit the heuristic and random
example bots. Then, ``--repeat`` times, in turn: the rated games finished over
``--seconds`` with no table open, and over as long with ``--tables`` tables open, each
person holding their turn (their page asking for the table's state, never answering:
the slowest thinker), their games holding their slots. Each round's tables are left (a
forfeit) before the next round; the order of the two measures alternates, so that a drift
of the shared machine's load falls on both.

Prints each measure, then the medians with their spread (lowest to highest) side by side,
their ratio, and the share the settings give rated games with every table open,
``(concurrency - tables) / concurrency`` of the slots: where the games are bound by the
slots, the ratio is near that share; on a machine whose cores are the bound (2 shared
cores, say), it is above it, since the slots left play faster. A figure, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "host"))

from host_support import HeldTable, HostProcess, make_competition, wait_for  # noqa: E402


def rated_finished(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as c:
        return int(c.execute("SELECT count(*) FROM games WHERE kind = 'rated' AND "
                             "status = 'finished'").fetchone()[0])


def table_games_running(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as c:
        return int(c.execute("SELECT count(*) FROM games WHERE kind = 'table' AND "
                             "status = 'running'").fetchone()[0])


def rate(db: Path, seconds: float) -> float:
    """Rated games finished per minute over the next ``seconds``."""
    n0, t0 = rated_finished(db), time.monotonic()
    time.sleep(seconds)
    return (rated_finished(db) - n0) * 60 / (time.monotonic() - t0)


def with_tables(host: HostProcess, db: Path, versions: list[int], n: int,
                seconds: float) -> float:
    """The rated rate while ``n`` tables are open, their persons on their move."""
    tables = []
    try:
        for k in range(n):
            t = HeldTable(host.url, versions[k % len(versions)], ["ref:reference-random"],
                          seat=k % 3).hold()
            if t.status != 303:
                raise SystemExit(f"a table was refused ({t.status}): {t.refusal[:300]}")
            tables.append(t)
        wait_for(lambda: all(t.thinking() for t in tables), 180, "the persons' moves")
        return rate(db, seconds)
    finally:
        for t in tables:
            t.leave()
        wait_for(lambda: table_games_running(db) == 0, 180, "the tables' games to end")


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.1f} ({min(xs):.1f}-{max(xs):.1f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--concurrency", type=int, default=3)
    ap.add_argument("--tables", type=int, default=2, help="tables open at once (max_open)")
    ap.add_argument("--seconds", type=float, default=60.0, help="each measure's window")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not 1 <= args.tables < args.concurrency:
        raise SystemExit("--tables must be at least 1 and below --concurrency")
    with tempfile.TemporaryDirectory(prefix="moon-bench-tables-") as tmp:
        extra = (f'\n[tables]\nenabled = true\nwho = "anyone"\nmax_open = {args.tables}\n'
                 "per_visitor_per_hour = 0\ndecision_ms = 3600000\n")
        folder = make_competition(Path(tmp) / "comp", concurrency=args.concurrency,
                                  extra=extra)
        db = folder / "host.sqlite"
        host = HostProcess(folder, None).start()
        try:
            versions = [v["id"] for _, v in host.enter(("heuristic", "random"))]
            rate(db, min(args.seconds, 10.0))  # the first games' start-up, not measured
            none: list[float] = []
            some: list[float] = []
            for r in range(args.repeat):
                for tables in ((0, args.tables) if r % 2 == 0 else (args.tables, 0)):
                    if tables:
                        some.append(with_tables(host, db, versions, tables, args.seconds))
                        print(f"round {r + 1}: {tables} tables open: {some[-1]:.1f} rated "
                              "games/min", flush=True)
                    else:
                        none.append(rate(db, args.seconds))
                        print(f"round {r + 1}: no table open: {none[-1]:.1f} rated games/min",
                              flush=True)
        finally:
            host.stop()
    share = (args.concurrency - args.tables) / args.concurrency
    print(f"\nrated games/min, median (lowest-highest) of {args.repeat}, "
          f"{args.seconds:.0f} s each, concurrency {args.concurrency}:")
    print(f"  {'no table open':<18}{spread(none)}")
    print(f"  {f'{args.tables} tables open':<18}{spread(some)}")
    ratio = statistics.median(some) / statistics.median(none) if statistics.median(none) \
        else float("nan")
    print(f"  ratio {ratio:.2f}; the settings leave rated games {share:.2f} of the slots "
          "with every table open")


if __name__ == "__main__":
    main()
