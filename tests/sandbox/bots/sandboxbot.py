"""A test bot for the sandbox tests: plays the first legal action, after doing what its
mode says. Usage: sandboxbot.py MODE [ARGS...] (MOON_ADDRESS, MOON_TOKEN from the env).

Modes:
  play [PATH...]             just play; first print where it runs (uid, cwd), whether it
                             sees each PATH ("SEES <path>: yes/no") and where it may write
                             ("WRITE <folder>: ok/denied")
  net HOST:PORT...           try to reach each address (and resolve a name), print
                             "NET <target>: blocked (<error>)" or "NET <target>: OPEN", play
  oom MB                     join, then allocate (and touch) memory 16 MiB at a time, up to
                             MB (or until killed), printing progress; then play
  forkbomb                   fork until the process limit stops it (children keep trying,
                             and sleep), print how far it got, then never join
  sleep                      join, then never answer its first turn
  spin CPU_S [never]         before joining, compute for CPU_S seconds of its own CPU
                             time and print "SPUN <cpu> s of CPU in <wall> s"; then play
                             (with ``never``: sleep forever instead, never joining)
  forker MARKER              fork a child that sleeps forever (it keeps MARKER in its argv),
                             print "CHILD <pid>", play the game to the end, print "CHILD
                             <pid> alive at the end", and exit, leaving the child behind
"""

from __future__ import annotations

import os
import socket
import sys
import time

from moon_sdk import Bot, run

MODE = sys.argv[1] if len(sys.argv) > 1 else "play"
ARGS = sys.argv[2:]


def say(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def probe_network(targets: list[str]) -> None:
    for target in targets:
        host, _, port = target.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=3):
                say(f"NET {target}: OPEN")
        except OSError as e:
            say(f"NET {target}: blocked ({e})")
    try:
        socket.getaddrinfo("pypi.org", 443)
        say("NET dns pypi.org: OPEN")
    except OSError as e:
        say(f"NET dns pypi.org: blocked ({e})")


def look_around(paths: list[str]) -> None:
    for path in paths:
        say(f"SEES {path}: {'yes' if os.path.exists(path) else 'no'}")
    for folder in (os.getcwd(), "/", "/tmp"):
        try:
            with open(os.path.join(folder, f"probe-{os.getpid()}"), "w") as f:
                f.write("x")
            say(f"WRITE {folder}: ok")
        except OSError as e:
            say(f"WRITE {folder}: denied ({e})")


def allocate(limit_mb: int) -> None:
    blocks = []
    for i in range(limit_mb // 16):
        blocks.append(bytearray(b"\x01") * (16 << 20))  # written, so really resident
        say(f"allocated {(i + 1) * 16} MiB")
    say("allocated everything and was not killed")


def spin(cpu_s: float) -> None:
    wall0, cpu0 = time.monotonic(), time.process_time()
    while time.process_time() - cpu0 < cpu_s:
        pass
    say(f"SPUN {time.process_time() - cpu0:.2f} s of CPU in "
        f"{time.monotonic() - wall0:.2f} s")


def fork_bomb() -> None:
    children = 0
    while True:
        try:
            pid = os.fork()
        except OSError as e:
            say(f"FORK stopped after {children} children: {e}")
            break
        if pid == 0:  # a child: keep trying to fork, slowly, forever
            while True:
                try:
                    if os.fork() == 0:
                        continue
                except OSError:
                    pass
                time.sleep(0.05)
        children += 1
    while True:
        time.sleep(3600)


class SandboxBot(Bot):
    name = "sandboxbot"
    version = "1"
    child = 0

    def on_game_over(self, result):  # noqa: ANN001
        if self.child:
            os.kill(self.child, 0)  # raises if it is gone
            say(f"CHILD {self.child} alive at the end")

    def on_welcome(self, welcome):  # noqa: ANN001
        if MODE == "oom":
            allocate(int(ARGS[0]))

    def act(self, obs):  # noqa: ANN001
        if MODE == "sleep":
            say("sleeping forever")
            while True:
                time.sleep(3600)
        return obs.legal_actions[0]


def main() -> None:
    say(f"MODE {MODE} uid={os.getuid()} cwd={os.getcwd()} root={sorted(os.listdir('/'))}")
    bot = SandboxBot()
    if MODE == "play":
        look_around(ARGS)
    elif MODE == "net":
        probe_network(ARGS)
    elif MODE == "forkbomb":
        fork_bomb()
    elif MODE == "spin":
        spin(float(ARGS[0]))
        if ARGS[1:] == ["never"]:
            while True:
                time.sleep(3600)
    elif MODE == "forker":
        bot.child = os.fork()
        if bot.child == 0:
            os.execv(sys.executable, [sys.executable, "-c",
                                      "import time\nwhile True: time.sleep(3600)", *ARGS])
        say(f"CHILD {bot.child}")
    run(bot)


if __name__ == "__main__":
    main()
