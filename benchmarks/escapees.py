"""What an escapee costs a game: wall time of whole games with a plain bot beside the same
games with a bot that leaves a process holding its stderr open, in each containment mode,
in one run.

    .venv/bin/python benchmarks/escapees.py [--games 3] [--seed 7]

The real arena code plays the games (:func:`arena.executor.game.play_game`, a referee in this
process, a fresh process per seat). Seat 0 is ``tests/bots/runnerbot.py``: plain, or in its
``sleeper`` mode (a ``setsid env -i`` sleeper that keeps the bot's stderr open and is out of
its process group and marker). Seats 1 and 2 are ``example_bots/random``.

The figure is the mean wall time from :func:`play_game`'s call to its return (bot start-up,
the game, the kill and the log) and its ratio to the plain bot's in the same mode. Before
the runner stopped waiting for the end of the pipe, the escapee made each game wait for the
2 s timeout of the log drain: at this writing, on a 2-CPU machine, 3.11 s a game against
1.41 s (2.2x). Now the ratio is about 1 in both modes (1.02x with cgroups, 0.93x without).
In the process-group mode the sleeper survives the game (it is killed here afterwards).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from moon_sdk.rules import Ruleset  # noqa: E402

from arena.bots.manifest import BotSpec, load_bot  # noqa: E402
from arena.executor.game import play_game, serving  # noqa: E402
from arena.referee.referee import Referee  # noqa: E402
from arena.sandbox import containment  # noqa: E402


async def games(n: int, seed: int, modes: str, tmp: Path) -> list[float]:
    marker = f"moon-bench-{uuid.uuid4().hex}"
    bot = BotSpec(name="runnerbot", folder=ROOT / "tests" / "bots",
                  run=f"{{python}} runnerbot.py {marker} {modes}")
    rnd = load_bot(ROOT / "example_bots" / "random")
    referee = Referee(record_dir=tmp / "records")
    walls = []
    async with serving(referee, None) as ep:
        for _ in range(n):
            t0 = time.monotonic()
            match = await play_game(referee, ep, [bot, rnd, rnd], Ruleset.preset("moon3"),
                                    preset="moon3", seed=seed, log_dir=tmp / "logs")
            walls.append(time.monotonic() - t0)
            log = (tmp / "logs" / f"{match.match_id}.seat0.log").read_text(errors="replace")
            for pid in re.findall(r"ESCAPEE \w+ (\d+)", log):
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
    return walls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    print(f"{'mode':<52} {'bot':<22} {'mean wall':>10} {'ratio':>6}")
    for setting in ("auto", "off"):
        os.environ[containment.CGROUP_VAR] = setting
        mode = containment.mode()
        base = None
        for label, modes in (("plain", ""), ("escapee holding stderr", "sleeper")):
            with tempfile.TemporaryDirectory(prefix="moon-bench-") as tmp:
                os.environ[containment.RUN_DIR_VAR] = str(Path(tmp) / "run")
                walls = asyncio.run(games(args.games, args.seed, modes, Path(tmp)))
            mean = statistics.mean(walls)
            base = base or mean
            print(f"{mode[:52]:<52} {label:<22} {mean:>9.2f}s {mean / base:>5.2f}x")


if __name__ == "__main__":
    main()
