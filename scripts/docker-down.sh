#!/usr/bin/env bash
# Stop the dockerd that scripts/docker-up.sh started: the pid in PIDFILE (default
# $MOON_DOCKERD_PIDFILE or /tmp/moon-dockerd.pid). Without a pid file it does nothing, so an
# engine that was running before docker-up.sh is never stopped. Leftover sandbox containers
# (label moon-arena=1) are removed first.
set -uo pipefail
cd "$(dirname "$0")/.."
PIDFILE=${1:-${MOON_DOCKERD_PIDFILE:-/tmp/moon-dockerd.pid}}
PY=${PY:-.venv/bin/python}

[ -f "$PIDFILE" ] || exit 0
pid=$(cat "$PIDFILE")
if [ -x "$PY" ]; then
    "$PY" -m arena.sandbox cleanup --all || true  # our engine: every sandbox container
fi
if kill -0 "$pid" 2>/dev/null; then
    echo "docker-down: stopping dockerd (pid $pid)" >&2
    kill -TERM "$pid"
    for ((i = 0; i < 120; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.25
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "docker-down: dockerd did not stop in 30 s; killing it" >&2
        kill -KILL "$pid" || true
    fi
fi
rm -f "$PIDFILE"
