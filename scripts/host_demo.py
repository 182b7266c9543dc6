"""`make host-demo`: a competition on the embedded defaults (SQLite, the local pool, the
host's own runner) with the example bots submitted by three demo participants; the host
prints its pages' and API's address, the demo what to try; plays until Ctrl-C or SIGTERM,
which stop the host too (exit 130; nothing is left serving).

    python scripts/host_demo.py [--folder runs/host-demo] [--address 127.0.0.1:8000]

The demo runs the example bots as local processes (``trust_local = true``): they are
ours. A real competition keeps the Docker runner (`moon host init` writes it).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.cli.client import ClientError, api  # noqa: E402
from arena.host.submissions import pack  # noqa: E402

DEMO = {"ann": "heuristic", "ben": "random", "cat": "weak"}
STOPPED_EXIT = 130
"""The demo's exit code once stopped (Ctrl-C, SIGTERM), as every `moon` command's."""
PR_SET_PDEATHSIG = 1


def interrupt(_sig: int, _frame: object) -> None:
    """SIGTERM as Ctrl-C (make forwards a SIGTERM to its recipe's process): the demo then
    stops its host and waits for it, instead of ending with the host left serving."""
    raise KeyboardInterrupt


def host_dies_with_us() -> None:
    """In the host's process before it runs: SIGTERM (its clean stop) when the demo's
    thread that started it dies, even by SIGKILL (Linux's PR_SET_PDEATHSIG)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, default=ROOT / "runs" / "host-demo")
    ap.add_argument("--address", default="127.0.0.1:8000")
    args = ap.parse_args()
    moon = [sys.executable, "-m", "arena.cli"]
    shutil.rmtree(args.folder, ignore_errors=True)
    subprocess.run([*moon, "host", "init", str(args.folder), "--name", "Moon demo",
                    "--trust-local", "--open"], check=True, stdout=subprocess.DEVNULL)
    toml = args.folder / "competition.toml"  # games of a few seconds, to watch them go by
    toml.write_text(re.sub(r"(?m)^decision_ms = \d+", "decision_ms = 1000", toml.read_text()))
    signal.signal(signal.SIGTERM, interrupt)
    host = subprocess.Popen([*moon, "host", "run", str(args.folder), "--address",
                             args.address], stdout=subprocess.PIPE, text=True,
                            preexec_fn=host_dies_with_us)
    try:
        assert host.stdout is not None
        line = host.stdout.readline()
        m = re.match(r"serving (\S+)", line)
        if not m:
            print("host-demo: the host did not start (is the address in use? --address)",
                  file=sys.stderr)
            return 1
        url = m.group(1)
        for person, bot in DEMO.items():
            token = api("POST", url, "/api/register", json={"name": person})["token"]
            v = api("POST", url, "/api/submissions", token,
                    files={"archive": (f"{bot}.tar.gz", pack(ROOT / "example_bots" / bot),
                                       "application/gzip")})
            print(f"{person} submitted {v['label']}")
        # the host itself said where its pages and API are (its first line, on stderr):
        # said once, here only what to try
        # registration is open: how a visitor joins with a bot of their own
        token_file = os.path.relpath(args.folder / "admin.token")
        if token_file.startswith(".."):
            token_file = str((args.folder / "admin.token").resolve())
        print(f"join: moon host register {url} NAME, then moon submit ./mybot --server "
              f"{url} --wait (the organiser's token: {token_file})")
        print(f"try: moon host status {url}    curl {url}/api/leaderboard")
        print("playing until Ctrl-C ...", flush=True)
        while host.poll() is None:
            time.sleep(0.5)
        return host.returncode or 0
    except ClientError as e:
        print(f"host-demo: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return STOPPED_EXIT  # the host says what the stop kept, in its last line
    finally:
        # the demo's own signals are ignored from here: a second Ctrl-C must not leave
        # the host serving while it stops
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if host.poll() is None:
            host.send_signal(signal.SIGTERM)
            try:
                host.wait(60)
            except subprocess.TimeoutExpired:
                host.kill()
                host.wait()


if __name__ == "__main__":
    sys.exit(main())
