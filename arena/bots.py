"""Bot folders, their manifests, and running a bot as a local process.

A bot folder holds ``bot.toml``::

    name = "heuristic"          # required: letters, digits, '-', '_', '.'
    version = "1.0"             # optional, default "0"
    language = "python"         # informative, except "stdio": run through the stdio bridge
    run = "{python} bot.py"     # required: run from the folder; {python} is our Python
    build = "go build -o bot ." # optional: run once before the first game

Each game gets a fresh process (so a bot cannot remember a duplicate deal) in its own
process group, with the referee's address and the seat's token in ``MOON_ADDRESS`` and
``MOON_TOKEN``, and a random ``MOON_BOT_INSTANCE`` that its descendants inherit. After the
game the whole group is killed, then every process still carrying that instance marker
(one that left the group with ``setsid``). With util-linux's ``setpriv`` the bot also
gets SIGKILL if the arena itself dies (``kill -9`` of a ladder leaves no bot behind).
stderr goes through a pipe to the log file, of which only the first LOG_MAX_BYTES and the
last LOG_TAIL_BYTES are kept.

This is containment for bots you trust: a bot that clears its environment *and* leaves its
process group escapes, and local bots run as your user (they can read each other's
environment, tokens included). Untrusted bots belong in Docker (docs/sandbox.md).
"""

from __future__ import annotations

import difflib
import os
import re
import resource
import secrets
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .timecontrol import ConfigError

MANIFEST = "bot.toml"
STDIO = "stdio"
"""The language of a bot that reads JSON turns on stdin and writes JSON actions on stdout."""
LOG_TAIL_BYTES = 8 * 1024
"""How much of a bot's stderr a game record keeps (the end of it), bytes."""
LOG_MAX_BYTES = 1024 * 1024
"""How much of a local bot's stderr its log file keeps from the start, bytes. Past it only
the last LOG_TAIL_BYTES are kept; at the end of the game they are appended after a line
``[... N bytes of stderr dropped ...]``."""
INSTANCE_VAR = "MOON_BOT_INSTANCE"
"""The environment variable that marks every process of one local bot run (a random hex
value per :class:`LocalProcess`): :meth:`LocalProcess.kill` kills whatever still has it."""

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_RUN_KEYS = ("name", "version", "language", "run", "build", "runner")
_DOCKER_KEYS = ("image", "dockerfile", "host_runtime")
MANIFEST_KEYS = frozenset(_RUN_KEYS + _DOCKER_KEYS)
"""Every key a ``bot.toml`` may have (the Docker ones are read by :mod:`arena.sandbox`);
any other is refused, so that a misspelt key is an error, not silently ignored."""


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
        ConfigError: no such folder, no manifest, bad TOML, a missing/invalid or unknown
            field; the message names the file and the field.
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
    unknown = sorted(set(data) - MANIFEST_KEYS)
    if unknown:
        close = difflib.get_close_matches(unknown[0], MANIFEST_KEYS, n=1)
        raise ConfigError(f"{manifest}: unknown key {unknown[0]!r}"
                          + (f" (did you mean {close[0]!r}?)" if close else "")
                          + f"; a bot.toml has {', '.join(_RUN_KEYS)}, and for Docker "
                          f"{', '.join(_DOCKER_KEYS)}")
    for key in ("name", "run"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ConfigError(f"{manifest}: the field {key!r} is required (a string)")
    if not _NAME.match(data["name"]):
        raise ConfigError(f"{manifest}: name {data['name']!r} must be 1-64 letters, digits, "
                          "'-', '_' or '.'")
    if data.get("runner", "local") not in ("local", "docker"):
        raise ConfigError(f"{manifest}: runner {data['runner']!r} must be 'local' or 'docker'")
    known = set(_RUN_KEYS)
    return BotSpec(
        name=data["name"], folder=manifest.parent.resolve(), run=data["run"],
        version=str(data.get("version", "0")),
        language=str(data.get("language", "")).strip().lower(),
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


def _proc_has_env(pid: str, needle: bytes) -> bool:
    """Whether /proc/<pid>/environ holds the entry ``needle`` (False if unreadable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
    except OSError:  # gone, a kernel thread, or not ours to read
        return False
    return needle in b"\0" + data + b"\0"


def kill_marked(name: str, value: str, rounds: int = 20) -> int:
    """SIGKILL every process whose environment holds ``name=value``, our own excepted.

    Scans ``/proc/<pid>/environ`` (processes that vanish or cannot be read are skipped) and
    repeats until a scan finds nothing, at most ``rounds`` scans, since a process may fork
    while we scan. Without ``/proc`` it does nothing. A process that rewrote or cleared its
    environment (``env -i``) is not found.

    Returns:
        The number of kill signals sent (a process still dying may be signalled twice).

    Raises:
        Nothing: every OS error is ignored.
    """
    needle = b"\0" + f"{name}={value}".encode() + b"\0"
    me = os.getpid()
    sent = 0
    for _ in range(rounds):
        try:
            pids = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
        except OSError:
            return sent
        found = [int(p) for p in pids if _proc_has_env(p, needle)]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                sent += 1
            except OSError:
                pass
        time.sleep(0.005)  # let them die (a dead process's environ reads empty)
    return sent


class _LogDrain:
    """A daemon thread that drains a bot's stderr pipe into its log file, always reading
    (so the bot never blocks on a full pipe): the first ``head_bytes`` go to the file as
    they come, then only the last ``tail_bytes`` are kept in memory and written, after a
    line saying how much was dropped, when the pipe ends or :meth:`close` is called."""

    def __init__(self, fd: int, log: Any, name: str, head_bytes: int = LOG_MAX_BYTES,
                 tail_bytes: int = LOG_TAIL_BYTES) -> None:
        self.fd = fd
        self.log = log
        self.head_left = head_bytes
        self.tail_bytes = tail_bytes
        self.tail = bytearray()
        self.dropped = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"moon-log-{name}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _take(self, chunk: bytes) -> None:
        if self.head_left > 0:
            head = chunk[:self.head_left]
            self.log.write(head)
            self.log.flush()
            self.head_left -= len(head)
            chunk = chunk[len(head):]
        if chunk:
            self.tail += chunk
            over = len(self.tail) - self.tail_bytes
            if over > 0:
                del self.tail[:over]
                self.dropped += over

    def _run(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self.fd], [], [], 0.1)
                if not ready:
                    if self.stop.is_set():  # a writer we could not kill keeps the pipe open
                        break
                    continue
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    break
                self._take(chunk)
        except (OSError, ValueError):
            pass
        finally:
            try:
                if self.tail:
                    if self.dropped:
                        self.log.write(f"\n[... {self.dropped} bytes of stderr dropped "
                                       "...]\n".encode())
                    self.log.write(bytes(self.tail))
                self.log.close()
            except OSError:
                pass
            os.close(self.fd)

    def close(self, timeout_s: float = 2.0) -> None:
        """Wait up to ``timeout_s`` for the pipe's end (every writer gone), then stop
        reading anyway; the thread is gone when this returns (or stuck in a disk write)."""
        self.thread.join(timeout_s)
        if self.thread.is_alive():
            self.stop.set()
            self.thread.join(timeout_s)


class LocalProcess:
    """A bot process for one game, in its own process group.

    Use :meth:`start`, then :meth:`poll`/:meth:`wait`; :meth:`kill` ends the whole group
    and every process that still carries this run's ``MOON_BOT_INSTANCE``. stderr goes
    through a pipe to ``log_path``, capped (LOG_MAX_BYTES from the start, LOG_TAIL_BYTES
    from the end); stdout is discarded unless it's a stdio bot.
    """

    def __init__(self, spec: BotSpec, address: str, token: str, log_path: Path,
                 limits: Limits | None = None, env: dict[str, str] | None = None) -> None:
        self.spec = spec
        self.address = address
        self.token = token
        self.log_path = log_path
        self.limits = limits or Limits()
        self.env = env or {}
        self.instance = secrets.token_hex(16)
        """This run's MOON_BOT_INSTANCE."""
        self.proc: subprocess.Popen[bytes] | None = None
        self._drain: _LogDrain | None = None

    def start(self) -> None:
        """Start the process.

        Raises:
            ConfigError: the run command cannot be started (not found, not executable).
        """
        env = dict(os.environ)
        env.update(self.env)
        env.update(MOON_ADDRESS=self.address, MOON_TOKEN=self.token,
                   MOON_BOT_NAME=self.spec.name, PYTHONUNBUFFERED="1")
        env[INSTANCE_VAR] = self.instance
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
        setpriv = shutil.which("setpriv")
        if setpriv:  # util-linux: if the arena dies (even kill -9), the bot is killed too
            argv = [setpriv, "--pdeathsig", "KILL", "--", *argv]

        log = open(self.log_path, "wb")  # noqa: SIM115 - the drain thread closes it
        read_fd, write_fd = os.pipe()
        try:
            self.proc = subprocess.Popen(
                argv, cwd=self.spec.folder, env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=write_fd,
                start_new_session=True, preexec_fn=preexec)
        except OSError as e:
            log.close()
            os.close(read_fd)
            raise ConfigError(f"bot {self.spec.name}: cannot run {self.spec.run!r} in "
                              f"{self.spec.folder}: {e.strerror}") from None
        finally:
            os.close(write_fd)
        self._drain = _LogDrain(read_fd, log, self.spec.name)
        self._drain.start()

    def poll(self) -> int | None:
        """The exit code, or None while running."""
        return None if self.proc is None else self.proc.poll()

    def kill(self) -> None:
        """Kill the bot's whole process group and then every process that still carries
        its ``MOON_BOT_INSTANCE`` (SIGKILL), reap it, and finish its log (waits at most
        about 5 s for the reaping and 4 s for the log). Safe to call twice.

        Raises:
            Nothing: processes already gone are ignored.
        """
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        kill_marked(INSTANCE_VAR, self.instance)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        if self._drain is not None:
            self._drain.close()

    def log_tail(self) -> str:
        """The end of the bot's stderr (at most LOG_TAIL_BYTES bytes, decoded as UTF-8;
        complete once :meth:`kill` has returned). Never raises: "" if there is no log."""
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
