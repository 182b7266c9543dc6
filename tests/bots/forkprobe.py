"""An SDK bot that says on stderr, when it joins, what it is: its pid, parent, process
group, instance marker, cgroup, limits, a random number, and how many games this process
has joined (a module-level counter: a process that had played before would say 2), and
whether its ``/proc/self/environ`` holds its run's marker. It always takes the last legal
action (deterministic). Named ``probe-hang`` (MOON_BOT_NAME), on its first turn it starts
a ``sleep`` and then hangs, so that the arena must kill both; named ``probe-forker``, on
its first turn it forks a child that leaves the process group (``setsid``, no ``exec``)
and sleeps, and plays on."""

import os
import random
import resource
import subprocess
import sys
import time

from moon_sdk import Bot, run

GAMES = 0
FORKED = False


class Probe(Bot):
    name = "probe"

    def on_welcome(self, welcome):
        global GAMES
        GAMES += 1
        with open("/proc/self/cgroup") as f:  # the cgroup v2 line: 0::<path>
            v2 = [line[3:] for line in f.read().splitlines() if line.startswith("0::")]
        cgroup = (v2[0] if v2 else "").replace(" ", "_") or "-"
        instance = os.environ.get("MOON_BOT_INSTANCE")
        with open("/proc/self/environ", "rb") as f:
            marked = int(f"\0MOON_BOT_INSTANCE={instance}\0".encode() in b"\0" + f.read())
        mem = resource.getrlimit(resource.RLIMIT_AS)[0]
        print(f"probe pid={os.getpid()} ppid={os.getppid()} pgid={os.getpgid(0)} "
              f"games={GAMES} instance={os.environ.get('MOON_BOT_INSTANCE')} "
              f"cgroup={cgroup} as={mem} cpu={resource.getrlimit(resource.RLIMIT_CPU)[0]} "
              f"files={resource.getrlimit(resource.RLIMIT_NOFILE)[0]} cwd={os.getcwd()} "
              f"random={random.random()!r} marked={marked}", file=sys.stderr, flush=True)

    def act(self, obs):
        global FORKED
        if os.environ.get("MOON_BOT_NAME") == "probe-forker" and not FORKED:
            FORKED = True
            pid = os.fork()
            if pid == 0:
                os.setsid()
                time.sleep(300)
                os._exit(0)
            print(f"probe forked={pid}", file=sys.stderr, flush=True)
        if os.environ.get("MOON_BOT_NAME") == "probe-hang":
            child = subprocess.Popen(["sleep", "300"])
            print(f"probe sleeper={child.pid}", file=sys.stderr, flush=True)
            time.sleep(300)
        return obs.legal_actions[-1]


run(Probe())
