"""A real Dask cluster on this machine for the cluster tests: a ``dask scheduler`` and
``dask worker`` processes (the project's virtualenv's), every socket on 127.0.0.1 and on a
free port, each worker with a bot cache of its own (as if it were another machine),
started and stopped here, every wait bounded."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).with_name("dask")
START_S = 60.0
"""The most a scheduler or a worker may take to start (a loaded 2-core machine)."""


def dask_problem() -> str | None:
    """Why no cluster can be started here, or None."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return "Dask's distributed is not installed (pip install 'moon-arena[cluster]')"
    if not DASK.is_file():
        return f"no dask command beside {sys.executable}"
    return None


def need_dask() -> None:
    """Skip (or, with MOON_REQUIRE_CLUSTER=1, fail) without a way to start a cluster."""
    problem = dask_problem()
    if problem:
        if os.environ.get("MOON_REQUIRE_CLUSTER") == "1":
            pytest.fail(f"MOON_REQUIRE_CLUSTER=1, but {problem}", pytrace=False)
        pytest.skip(problem)


class Cluster:
    """A scheduler and named workers (start with :meth:`start`, :meth:`add_worker`; stop
    with :meth:`stop`)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.scheduler: subprocess.Popen[bytes] | None = None
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.address = ""
        self.file = tmp / "scheduler.json"

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None
               ) -> subprocess.Popen[bytes]:
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115 - kept by the process
        full = dict(os.environ)
        full.update(env or {})
        full["DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__DISK"] = "false"
        return subprocess.Popen([str(DASK), *argv], stdout=log, stderr=subprocess.STDOUT,
                                env=full, cwd=self.tmp, start_new_session=True)

    def log(self, name: str) -> str:
        """What a process wrote (``scheduler`` or a worker's name)."""
        with contextlib.suppress(OSError):
            return (self.tmp / f"{name}.log").read_text(errors="replace")
        return ""

    def start(self) -> str:
        """Start the scheduler; returns its address (``tcp://127.0.0.1:PORT``)."""
        self.scheduler = self._spawn("scheduler", [
            "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
            # its HTTP server (health, metrics) runs without a dashboard too: on :8787,
            # every interface, unless told
            "--dashboard-address", "127.0.0.1:0",
            "--scheduler-file", str(self.file)])
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.scheduler.poll() is not None:
                raise RuntimeError(f"the scheduler exited:\n{self.log('scheduler')}")
            with contextlib.suppress(OSError, ValueError, KeyError):
                self.address = json.loads(self.file.read_text())["address"]
                return self.address
            time.sleep(0.1)
        raise RuntimeError(f"the scheduler did not start:\n{self.log('scheduler')}")

    def add_worker(self, name: str, resources: str = "seats=3", nthreads: int = 1,
                   wait: bool = True) -> subprocess.Popen[bytes]:
        """Start a worker (no nanny: killing it kills it) with its own bot cache
        (``<tmp>/<name>-cache``) and wait until the scheduler knows it."""
        argv = ["worker", self.address, "--host", "127.0.0.1", "--nthreads", str(nthreads),
                "--no-nanny", "--no-dashboard", "--dashboard-address", "127.0.0.1:0",
                "--name", name, "--death-timeout", "60",
                "--local-directory", str(self.tmp / f"{name}-dask")]
        if resources:
            argv += ["--resources", resources]
        proc = self._spawn(name, argv, {"MOON_CLUSTER_CACHE": str(self.cache(name))})
        self.workers[name] = proc
        if wait:
            self.wait_for(lambda names: name in names, f"worker {name} to join")
        return proc

    def cache(self, name: str) -> Path:
        """A worker's bot cache."""
        return self.tmp / f"{name}-cache"

    def worker_names(self) -> set[str]:
        """The workers the scheduler knows now."""
        from distributed import Client

        with Client(self.address, timeout=10, set_as_default=False) as c:
            return {w["name"] for w in c.scheduler_info(n_workers=-1)["workers"].values()}

    def wait_for(self, ok: object, what: str) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            for name, p in self.workers.items():
                if p.poll() is not None and name not in getattr(self, "_killed", set()):
                    raise RuntimeError(f"worker {name} exited:\n{self.log(name)}")
            if ok(self.worker_names()):  # type: ignore[operator]
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out waiting for {what}")

    def kill_worker(self, name: str) -> None:
        """SIGKILL a worker (as if its machine died), and wait until it is gone."""
        self._killed = getattr(self, "_killed", set()) | {name}
        proc = self.workers[name]
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def stop(self) -> None:
        """Stop every process started here (workers, then the scheduler), by pid."""
        procs = [*self.workers.values()] + ([self.scheduler] if self.scheduler else [])
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGKILL)
                p.wait(timeout=10)


def ladder_file(tmp: Path, bots: list[Path], boards: int = 1, seed: int = 5,
                extra: str = "") -> Path:
    """A ladder file of ``bots`` (moon3) in ``tmp``; ``extra``: more ``[ladder]`` lines."""
    text = (f'[ladder]\nname = "c"\npreset = "moon3"\nboards = {boards}\nseed = {seed}\n'
            f"concurrency = 2\n{extra}\n[time_control]\nstartup_ms = 30000\n")
    for b in bots:
        text += f'\n[[bots]]\npath = "{b}"\n'
    p = tmp / "ladder.toml"
    p.write_text(text)
    return p


def schedule_of(lf: Path) -> list[Any]:
    """The games the ladder file ``lf`` schedules (ids carry the bots' versions)."""
    from arena.ladder.config import load_ladder
    from arena.ladder.schedule import make_schedule

    cfg = load_ladder(lf)
    return make_schedule([b.name for b in cfg.bots], cfg.ruleset.players, cfg.boards,
                         cfg.seed, versions=cfg.versions)


__all__ = ["Cluster", "dask_problem", "need_dask", "ladder_file", "schedule_of"]
