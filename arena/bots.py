"""Bot folders, their manifests, and running a bot as a local process.

A bot folder holds ``bot.toml``::

    name = "heuristic"          # required: letters, digits, '-', '_', '.'
    version = "1.0"             # optional, default "0"
    language = "python"         # informative, except "stdio": run through the stdio bridge
    run = "{python} bot.py"     # required: run from the folder; {python} is our Python
    build = "go build -o bot ." # optional: run once before the first game

Each game gets a fresh process (so a bot cannot remember a duplicate deal) in its own
process group, with the referee's address and the seat's token in ``MOON_ADDRESS`` and
``MOON_TOKEN``; the whole group is killed after the game.
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .timecontrol import ConfigError

MANIFEST = "bot.toml"
STDIO = "stdio"
"""The language of a bot that reads JSON turns on stdin and writes JSON actions on stdout."""
LOG_TAIL_BYTES = 8 * 1024
"""How much of a bot's stderr a game record keeps (the end of it)."""

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class BotSpec:
    """A bot as its manifest describes it."""

    name: str
    folder: Path
    run: str
    version: str = "0"
    language: str = ""
    build: str = ""
    runner: str = "local"
    """``local`` (a process) or ``docker`` (a container)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def command(self) -> list[str]:
        """The run command as argv, with ``{python}`` filled in. A ``stdio`` bot's command
        runs under the stdio bridge (:mod:`arena.stdio_bridge`), which speaks gRPC for it."""
        argv = [sys.executable if w == "{python}" else w for w in shlex.split(self.run)]
        if self.language == STDIO:
            argv = [sys.executable, "-m", "arena.stdio_bridge", "--name", self.name,
                    "--version", self.version, "--", *argv]
        return argv


def load_bot(path: str | Path) -> BotSpec:
    """Read a bot folder (or its ``bot.toml``).

    Raises:
        ConfigError: no such folder, no manifest, bad TOML, or a missing/invalid field; the
            message names the file and the field.
    """
    p = Path(path)
    manifest = p if p.name == MANIFEST else p / MANIFEST
    if not manifest.parent.is_dir():
        raise ConfigError(f"bot {str(path)!r}: no such folder")
    if not manifest.is_file():
        raise ConfigError(f"bot {str(path)!r}: no {MANIFEST} in {manifest.parent} "
                          "(see the README's 'Write a bot', or `moon new-bot`)")
    try:
        data = tomllib.loads(manifest.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{manifest}: not valid TOML: {e}") from None
    for key in ("name", "run"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ConfigError(f"{manifest}: the field {key!r} is required (a string)")
    if not _NAME.match(data["name"]):
        raise ConfigError(f"{manifest}: name {data['name']!r} must be 1-64 letters, digits, "
                          "'-', '_' or '.'")
    known = {"name", "version", "language", "run", "build", "runner"}
    return BotSpec(
        name=data["name"], folder=manifest.parent.resolve(), run=data["run"],
        version=str(data.get("version", "0")), language=str(data.get("language", "")),
        build=str(data.get("build", "")), runner=str(data.get("runner", "local")),
        extra={k: v for k, v in data.items() if k not in known},
    )


def build_bot(spec: BotSpec, timeout_s: float = 600.0) -> str:
    """Run the bot's build command (if any) in its folder; returns the build log.

    Raises:
        ConfigError: the build failed or timed out (the message ends with the log's tail).
    """
    if not spec.build:
        return ""
    try:
        proc = subprocess.run(spec.build, shell=True, cwd=spec.folder, capture_output=True,
                              text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"bot {spec.name}: build timed out after {timeout_s:.0f} s") from None
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise ConfigError(f"bot {spec.name}: build failed (exit {proc.returncode}):\n"
                          f"{out[-2000:]}")
    return out


def missing_command(spec: BotSpec) -> str | None:
    """Why the bot's run command cannot start (its program is not found), or None."""
    argv = spec.command()
    exe = argv[0] if argv else ""
    found = (spec.folder / exe).is_file() if "/" in exe else shutil.which(exe)
    if found:
        return None
    hint = " (has it been built? its bot.toml says build = " \
        f"{spec.build!r})" if spec.build else ""
    return f"bot {spec.name}: cannot run {spec.run!r} in {spec.folder}: {exe!r} not found{hint}"


@dataclass
class Limits:
    """Resource limits of a local bot process (applied with setrlimit)."""

    memory_mb: int = 2048
    """Address-space limit, MiB."""
    cpu_s: int = 600
    """CPU seconds for the whole game."""
    open_files: int = 256


class LocalProcess:
    """A bot process for one game, in its own process group.

    Use :meth:`start`, then :meth:`poll`/:meth:`wait`; :meth:`kill` ends the whole group.
    stderr goes to ``log_path`` (stdout is discarded unless it's a stdio bot).
    """

    def __init__(self, spec: BotSpec, address: str, token: str, log_path: Path,
                 limits: Limits | None = None, env: dict[str, str] | None = None) -> None:
        self.spec = spec
        self.address = address
        self.token = token
        self.log_path = log_path
        self.limits = limits or Limits()
        self.env = env or {}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the process.

        Raises:
            ConfigError: the run command cannot be started (not found, not executable).
        """
        env = dict(os.environ)
        env.update(self.env)
        env.update(MOON_ADDRESS=self.address, MOON_TOKEN=self.token,
                   MOON_BOT_NAME=self.spec.name, PYTHONUNBUFFERED="1")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        lim = self.limits
        argv = self.spec.command()
        problem = missing_command(self.spec)
        if problem:
            raise ConfigError(problem)
        preexec = None
        prlimit = shutil.which("prlimit")
        if prlimit:  # util-linux: limits without a preexec_fn, so the spawn can use vfork
            mem = lim.memory_mb * 1024 * 1024
            argv = [prlimit, f"--as={mem}", f"--cpu={lim.cpu_s}:{lim.cpu_s + 5}",
                    f"--nofile={lim.open_files}", "--", *argv]
        else:
            def preexec() -> None:
                mem = lim.memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
                resource.setrlimit(resource.RLIMIT_CPU, (lim.cpu_s, lim.cpu_s + 5))
                resource.setrlimit(resource.RLIMIT_NOFILE, (lim.open_files, lim.open_files))

        with open(self.log_path, "wb") as log:
            try:
                self.proc = subprocess.Popen(
                    argv, cwd=self.spec.folder, env=env,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                    start_new_session=True, preexec_fn=preexec)
            except OSError as e:
                raise ConfigError(f"bot {self.spec.name}: cannot run {self.spec.run!r} in "
                                  f"{self.spec.folder}: {e.strerror}") from None

    def poll(self) -> int | None:
        """The exit code, or None while running."""
        return None if self.proc is None else self.proc.poll()

    def kill(self) -> None:
        """Kill the bot's whole process group (SIGKILL) and reap it."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def log_tail(self) -> str:
        """The end of the bot's stderr (at most LOG_TAIL_BYTES)."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - LOG_TAIL_BYTES))
                data = f.read()
        except OSError:
            return ""
        text = data.decode("utf-8", "replace")
        return ("[...]\n" + text) if size > LOG_TAIL_BYTES else text
