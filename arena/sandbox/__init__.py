"""Where a bot runs: a local process (``runner = "local"``) or a Docker container
(``runner = "docker"``). See docs/sandbox.md.

- :func:`make_process` makes the right process object for a seat of a game; every kind has
  ``start``/``poll``/``kill``/``log_tail`` (:class:`BotProcess`).
- :func:`build` is the build stage, once per bot before its games: the manifest's ``build``
  command for a local bot, the image (Dockerfile build, pull, or the base image) for a
  Docker bot. It raises :class:`~arena.errors.BotError` (for a Docker build,
  :class:`BuildError`, which carries the log) when the bot cannot be built: leave it out;
  :class:`SandboxError` (an :class:`~arena.errors.InfrastructureError`) when no Docker
  engine answers.
- :func:`cleanup_stale` removes what a killed runner left behind: containers, and local
  bots' cgroups and processes (:func:`arena.sandbox.containment.cleanup_stale`).

The ``docker`` SDK is imported only when a Docker bot is used.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..bots.manifest import BotSpec, Limits
from ..errors import BotError, ConfigError, InfrastructureError
from .local import LocalProcess, run_build_command

if TYPE_CHECKING:
    from .docker import DockerLimits
    from .forkserver import ForkServer

RUNNERS = ("local", "docker")


class BotProcess(Protocol):
    """One bot process (or container) for one game."""

    def start(self) -> None: ...
    def poll(self) -> int | None: ...
    def kill(self) -> None: ...
    def log_tail(self) -> str: ...


def check_runner(spec: BotSpec) -> str:
    """The bot's runner, checked.

    Raises:
        ConfigError: an unknown runner.
    """
    if spec.runner not in RUNNERS:
        raise ConfigError(f"bot {spec.name}: runner {spec.runner!r} is not one of "
                          f"{', '.join(RUNNERS)}")
    return spec.runner


def make_process(spec: BotSpec, address: str, token: str, log_path: str | Path,
                 limits: Limits | None = None, *, docker_limits: DockerLimits | None = None,
                 env: dict[str, str] | None = None, match_id: str = "", seat: int = 0,
                 fork_server: ForkServer | None = None) -> BotProcess:
    """A fresh process for ``spec`` in one seat: a :class:`LocalProcess` (with ``limits``)
    or a :class:`~arena.sandbox.docker.DockerProcess` (with ``docker_limits``), as
    ``spec.runner`` says; a Python SDK bot is forked by ``fork_server`` when one is given
    (:class:`arena.sandbox.forkserver.ForkedProcess`). Nothing starts until ``start()``.

    Raises:
        ConfigError: an unknown runner.
    """
    if check_runner(spec) == "docker":
        from .docker import DockerProcess

        return DockerProcess(spec, address, token, log_path, docker_limits, env,
                             match_id=match_id, seat=seat)
    script = fork_server.usable_for(spec) if fork_server is not None else None
    if fork_server is not None and script is not None:
        from .forkserver import ForkedProcess

        return ForkedProcess(fork_server, script, spec, address, token, log_path, limits, env)
    return LocalProcess(spec, address, token, log_path, limits, env)


def exit_detail(proc: BotProcess) -> str:
    """Why the process ended, for ``Match.note_exit``: ``"out_of_memory"`` for an
    OOM-killed container, else ``""``."""
    detail = getattr(proc, "exit_detail", None)
    return str(detail()) if callable(detail) else ""


def is_infrastructure_error(e: BaseException) -> bool:
    """True for a failure of the sandbox itself (no Docker engine...), which must never be
    scored against a bot (:class:`~arena.errors.InfrastructureError`, of which
    :class:`SandboxError` is one)."""
    return isinstance(e, InfrastructureError)


def build(spec: BotSpec, *, docker_limits: DockerLimits | None = None,
          log_path: Path | None = None, timeout_s: float = 600.0,
          allow_host_build: bool = False, say: Callable[[str], None] | None = None) -> str:
    """The build stage of one bot; returns its log (also written to ``log_path``).
    ``say`` (a command's stderr; None: silent) gets one line as a build command starts
    (``building NAME (COMMAND)...``) and one as it ends (``built NAME in 12.3 s``, or
    ``build of NAME failed after 1.2 s``).

    A local bot runs its manifest's ``build`` command. A Docker bot gets its image
    (Dockerfile build, pull, or the base image); its ``build`` command would run on the
    host, outside any sandbox, so it is refused unless ``allow_host_build`` (a trusted bot):
    an untrusted bot builds in its Dockerfile.

    Raises:
        ConfigError: an unknown runner.
        BotError: the bot cannot be built (for Docker: :class:`BuildError`, with ``.log``);
            leave it out.
        SandboxError: (Docker) no engine answers; an
            :class:`~arena.errors.InfrastructureError`, not the bot's fault.
    """
    out = ""
    if check_runner(spec) == "docker":
        from .docker import BuildError, build_image

        if spec.build and not allow_host_build:
            raise BuildError(spec.name, "a Docker bot's 'build' command would run on the "
                             "host, unsandboxed: build in a Dockerfile instead (or trust it: "
                             "allow_host_build)")
        if spec.build:
            out = _host_build(spec, timeout_s, log_path, say)
        out += build_image(spec, docker_limits, log_path)
        if log_path is not None:
            log_path.write_text(out)
        return out
    return _host_build(spec, timeout_s, log_path, say)


def _host_build(spec: BotSpec, timeout_s: float, log_path: Path | None,
                say: Callable[[str], None] | None = None) -> str:
    if say is not None and spec.build:
        say(f"building {spec.name} ({spec.build})...")
    start = time.monotonic()
    try:
        out = run_build_command(spec, timeout_s)
        if say is not None and spec.build:
            say(f"built {spec.name} in {time.monotonic() - start:.1f} s")
    except BotError as e:
        if say is not None:
            say(f"build of {spec.name} failed after {time.monotonic() - start:.1f} s")
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_text(str(e))
        raise
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(out)
    return out


def cleanup_stale(everything: bool = False, docker: bool = True) -> int:
    """Remove what runners that died left on this host: local bot runs (their cgroups and
    processes, :func:`arena.sandbox.containment.cleanup_stale`) and, with ``docker``, sandbox
    containers (all of them with ``everything``); returns how many. The Docker part does
    nothing when no engine answers. Raises nothing."""
    from .containment import cleanup_stale as clean_local

    removed = clean_local()
    if not docker:
        return removed
    from .docker import SandboxError
    from .docker import cleanup_stale as clean

    try:
        return removed + clean(everything)
    except SandboxError:
        return removed


def __getattr__(name: str) -> object:
    # DockerProcess, DockerLimits, BuildError, SandboxError without importing docker early
    if name in ("DockerProcess", "DockerLimits", "BuildError", "SandboxError",
                "ensure_base_image", "BASE_IMAGE"):
        from . import docker

        return getattr(docker, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RUNNERS", "BotProcess", "build", "check_runner", "cleanup_stale", "exit_detail",
           "is_infrastructure_error", "make_process", "DockerProcess", "DockerLimits",
           "BuildError", "SandboxError", "ensure_base_image", "BASE_IMAGE"]
