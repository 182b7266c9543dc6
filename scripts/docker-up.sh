#!/usr/bin/env bash
# Make a Docker engine reachable and build the sandbox's base image, for the Docker tests
# (tests/sandbox, marker `docker`) and for running bots with `runner = "docker"`.
#
#   scripts/docker-up.sh            # install docker.io if missing, start dockerd if needed,
#                                   # build the base image (python -m arena.sandbox base-image)
#   scripts/docker-down.sh PIDFILE  # stop the dockerd this script started (and only that)
#
# When it starts dockerd it writes dockerd's pid to $MOON_DOCKERD_PIDFILE (default
# /tmp/moon-dockerd.pid) and logs to $MOON_DOCKERD_LOG (default /tmp/moon-dockerd.log); an
# engine that was already running is left alone and no pid file is written.
# Installing and starting an engine needs root; a developer with Docker running needs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PIDFILE=${MOON_DOCKERD_PIDFILE:-/tmp/moon-dockerd.pid}
LOG=${MOON_DOCKERD_LOG:-/tmp/moon-dockerd.log}
WAIT_S=${MOON_DOCKERD_WAIT_S:-90}
PY=${PY:-.venv/bin/python}

say() { echo "docker-up: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

if docker info >/dev/null 2>&1; then
    say "a Docker engine is already running; using it"
else
    if ! command -v dockerd >/dev/null 2>&1; then
        [ "$(id -u)" = 0 ] || die "no dockerd and not root: install Docker (docker.io) first"
        say "installing docker.io (apt-get)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get -o DPkg::Lock::Timeout=600 update -qq || die "apt-get update failed"
        apt-get -o DPkg::Lock::Timeout=600 install -y -qq docker.io >/dev/null || die "apt-get install docker.io failed"
    fi
    command -v docker >/dev/null 2>&1 || die "docker.io installed no docker client"
    [ "$(id -u)" = 0 ] || die "dockerd is not running and only root can start it"
    say "starting dockerd (log: $LOG)"
    # its own session, so the caller's terminal signals do not reach it
    setsid dockerd >"$LOG" 2>&1 < /dev/null &
    pid=$!
    echo "$pid" >"$PIDFILE"
    for ((i = 0; i < WAIT_S * 4; i++)); do
        if docker info >/dev/null 2>&1; then
            break
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 40 "$LOG" >&2 || true
            rm -f "$PIDFILE"
            die "dockerd exited while starting (log above)"
        fi
        sleep 0.25
    done
    if ! docker info >/dev/null 2>&1; then
        tail -n 40 "$LOG" >&2 || true
        die "dockerd did not answer within ${WAIT_S} s (log above); pid $pid in $PIDFILE"
    fi
    say "dockerd is up (pid $pid, pid file $PIDFILE)"
fi

make -s setup  # the venv, with the docker SDK that imports the base image
"$PY" -m arena.sandbox base-image
