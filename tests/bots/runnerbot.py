"""A Python SDK bot for the local runner's tests: it does what its modes say, then plays the
first legal action. Usage: runnerbot.py MARKER MODE [MODE...] (MOON_ADDRESS, MOON_TOKEN from
the environment). MARKER is a unique word every process it starts carries in its command
line, so a test finds them (and only them).

Modes:
  sleeper   start `setsid env -i sh -c ...` sleeping forever: out of the process group
            and without MOON_BOT_INSTANCE
  burner    the same, burning CPU in a loop
  writer    the same, keeping the bot's stderr open and writing a line to it every 20 ms
            (ignoring SIGPIPE: it lives on when nobody reads the pipe any more)
  daemon    the writer, but started in the background by a shell that exits at once: an
            orphan (reparented, no longer the bot's descendant)
  marked    a `setsid` sleeper that keeps its environment (the marker finds it)
  grouped   an `env -i` sleeper that stays in the bot's process group
  undumpable  a `setsid` sleeper that keeps its environment but makes itself non-dumpable
            (PR_SET_DUMPABLE 0: its /proc/PID/environ is then root's to read)
  hang      after starting the others, never answer the first turn
  print     print() to stdout: "PRINTED <marker> <n>" before joining and at the game's end
  mmap MB   before joining, map MB MiB of address space (no memory is touched), print
            "MAPPED", keep the mapping for the game
  silent    exit with code 1 before joining, writing nothing at all
Every started process prints "ESCAPEE <mode> <pid>" to stderr.
"""

from __future__ import annotations

import mmap
import os
import shutil
import subprocess
import sys
import time

MARKER = sys.argv[1]
MODES = sys.argv[2:]
SLEEP = shutil.which("sleep") or "/bin/sleep"
SETSID = shutil.which("setsid") or "setsid"
ENV = shutil.which("env") or "/usr/bin/env"
SH = "/bin/sh"

SCRIPTS = {
    "sleeper": f': {MARKER}; echo "ESCAPEE sleeper $$" >&2; exec {SLEEP} 3600',
    "burner": f': {MARKER}; echo "ESCAPEE burner $$" >&2; while :; do :; done',
    "writer": f': {MARKER}; trap "" PIPE; echo "ESCAPEE writer $$" >&2; '
              f'while :; do echo "writer tick" >&2; {SLEEP} 0.02; done',
    "daemon": f': {MARKER}; trap "" PIPE; echo "ESCAPEE daemon $$" >&2; '
              f'while :; do echo "daemon tick" >&2; {SLEEP} 0.02; done',
    "marked": f': {MARKER}; echo "ESCAPEE marked $$" >&2; exec {SLEEP} 3600',
    "grouped": f': {MARKER}; echo "ESCAPEE grouped $$" >&2; exec {SLEEP} 3600',
    "undumpable": f"# {MARKER}\nimport ctypes, os, sys, time\n"
                  "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0\n"
                  # one write: the writer's ticks go to the same log at the same time
                  "os.write(2, f'ESCAPEE undumpable {os.getpid()}\\n'.encode())\n"
                  "time.sleep(3600)\n",
}


def start(mode: str) -> None:
    script = SCRIPTS[mode]
    if mode == "marked":
        argv = [SETSID, SH, "-c", script]
    elif mode == "daemon":  # the outer shell starts it in the background and exits
        argv = [SETSID, ENV, "-i", SH, "-c", f'{SH} -c "$0" &', script]
    elif mode == "undumpable":
        argv = [SETSID, sys.executable, "-c", script]
    elif mode == "grouped":
        argv = [ENV, "-i", SH, "-c", script]
    else:
        argv = [SETSID, ENV, "-i", SH, "-c", script]
    subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def main() -> None:
    if "silent" in MODES:
        os._exit(1)
    if "mmap" in MODES:
        mb = int(MODES[MODES.index("mmap") + 1])
        global MAPPING
        MAPPING = mmap.mmap(-1, mb << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        print("MAPPED", file=sys.stderr, flush=True)
    for mode in MODES:
        if mode in SCRIPTS:
            start(mode)
    if "print" in MODES:
        print(f"PRINTED {MARKER} 1")
    from moon_sdk import Bot, run

    class RunnerBot(Bot):
        name = "runnerbot"

        def act(self, obs):  # noqa: ANN001
            if "hang" in MODES:
                while True:
                    time.sleep(3600)
            return obs.legal_actions[0]

        def on_game_over(self, result):  # noqa: ANN001
            if "print" in MODES:
                print(f"PRINTED {MARKER} 2")

    run(RunnerBot())


MAPPING: mmap.mmap | None = None

if __name__ == "__main__":
    main()
