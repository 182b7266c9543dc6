"""An SDK bot that says on stderr, when it joins, what it is: its pid, parent, process
group, instance marker, cgroup, limits, a random number, and how many games this process
has joined (a module-level counter: a process that had played before would say 2). It
always takes the last legal action (deterministic). Named ``probe-hang`` (MOON_BOT_NAME),
on its first turn it starts a ``sleep`` and then hangs, so that the arena must kill both."""

import os
import random
import resource
import subprocess
import sys
import time

from moon_sdk import Bot, run

GAMES = 0


class Probe(Bot):
    name = "probe"

    def on_welcome(self, welcome):
        global GAMES
        GAMES += 1
        with open("/proc/self/cgroup") as f:  # the cgroup v2 line: 0::<path>
            v2 = [line[3:] for line in f.read().splitlines() if line.startswith("0::")]
        cgroup = (v2[0] if v2 else "").replace(" ", "_") or "-"
        mem = resource.getrlimit(resource.RLIMIT_AS)[0]
        print(f"probe pid={os.getpid()} ppid={os.getppid()} pgid={os.getpgid(0)} "
              f"games={GAMES} instance={os.environ.get('MOON_BOT_INSTANCE')} "
              f"cgroup={cgroup} as={mem} cpu={resource.getrlimit(resource.RLIMIT_CPU)[0]} "
              f"files={resource.getrlimit(resource.RLIMIT_NOFILE)[0]} cwd={os.getcwd()} "
              f"random={random.random()!r}", file=sys.stderr, flush=True)

    def act(self, obs):
        if os.environ.get("MOON_BOT_NAME") == "probe-hang":
            child = subprocess.Popen(["sleep", "300"])
            print(f"probe sleeper={child.pid}", file=sys.stderr, flush=True)
            time.sleep(300)
        return obs.legal_actions[-1]


run(Probe())
