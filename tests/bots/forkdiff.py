"""An SDK bot that says on stderr what a Python program can see of how it was started,
to compare a forked bot with one started as a process (tests/e2e/test_forkserver.py):
``sys.argv``, ``__file__``, ``sys.path[0]``, ``sys.orig_argv``, the working folder, the
encodings of its standard streams, its ``/proc/self/cmdline``, the hash of a string when
``PYTHONHASHSEED`` is set, a result computed by a ``spawn``
multiprocessing pool, and, from a non-daemon thread that waits until the script has
returned, a last line (the interpreter waits for such threads before it exits). It always
takes the last legal action. Named ``diff-kill`` (MOON_BOT_NAME), on its first turn it
kills the fork server that forked it (its parent, if that is one)."""

import multiprocessing
import os
import signal
import sys
import threading
import time

from moon_sdk import Bot, run

DONE = threading.Event()


class Diff(Bot):
    name = "diff"

    def on_welcome(self, welcome):
        seed = os.environ.get("PYTHONHASHSEED")
        print(f"diff argv={sys.argv} file={__file__} path0={sys.path[0]} "
              f"orig={sys.orig_argv} cwd={os.getcwd()} "
              f"hash={hash('moon') if seed else '-'}", file=sys.stderr, flush=True)
        print(f"diff stdout={sys.stdout.encoding}/{sys.stdout.errors} "
              f"stderr={sys.stderr.encoding}/{sys.stderr.errors} "
              f"stdin={sys.stdin.encoding}", file=sys.stderr, flush=True)
        with open("/proc/self/cmdline", "rb") as f:  # what ps shows
            words = f.read().rstrip(b"\0").split(b"\0")
        print(f"diff cmdline={words}", file=sys.stderr, flush=True)
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            print(f"diff pool={pool.apply(pow, (2, 10))}", file=sys.stderr, flush=True)

    def act(self, obs):
        if os.environ.get("MOON_BOT_NAME") == "diff-kill":
            with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
                if b"arena.sandbox.forkserver" in f.read():
                    os.kill(os.getppid(), signal.SIGKILL)
        return obs.legal_actions[-1]


def last_words():
    DONE.wait()
    time.sleep(0.05)
    print("diff thread done", file=sys.stderr, flush=True)


if __name__ == "__main__":
    threading.Thread(target=last_words).start()
    try:
        run(Diff())  # exits (SystemExit) at the game's end
    finally:
        DONE.set()
