"""Running a bot as a local process, and building it there.

Each game gets a fresh process (so a bot cannot remember a duplicate deal) with the
referee's address and the seat's token in ``MOON_ADDRESS`` and ``MOON_TOKEN``, and a
random ``MOON_BOT_INSTANCE`` that its descendants inherit. It is contained as
:mod:`arena.sandbox.containment` says: in a cgroup of its own where the arena may make one
(then every descendant dies with it after the game), else by its process group and that
marker. With util-linux's ``setpriv`` the bot also gets SIGKILL if the arena itself dies;
what its descendants left then is cleaned up when an arena next starts. stdout and stderr
go through one pipe to the log file, of which only the first LOG_MAX_BYTES and the last
LOG_TAIL_BYTES are kept (a stdio bot's stdout is the protocol: only its stderr is kept).

This is containment for bots you trust: local bots run as your user (they can read each
other's environment, tokens included). Untrusted bots belong in Docker (docs/sandbox.md).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import fcntl
import os
import re
import resource
import secrets
import select
import shutil
import signal
import subprocess
import sys
import termios
import threading
from pathlib import Path
from typing import Any

from ..bots.manifest import MAX_MEMORY_MB, BotSpec, Limits, missing_command
from ..core.text import clean
from ..errors import BotError
from .containment import Containment, kill_marked, runqueue_wait_s

LOG_TAIL_BYTES = 8 * 1024
"""How much of a bot's output a game record keeps (the end of it), bytes."""
LOG_MAX_BYTES = 1024 * 1024
"""How much of a local bot's output (stdout and stderr) its log file keeps from the start,
bytes. Past it only the last LOG_TAIL_BYTES are kept; at the end of the game they are
appended after a line ``[... N bytes of output dropped ...]``."""
BUILD_LOG_CHARS = 256 * 1024
"""How much of a build's output is kept (:class:`BuildOutput`), characters: its first
quarter and its last three quarters."""


class BuildOutput:
    """A build's output as it comes, kept to at most ``limit`` characters whatever the build
    prints: the first quarter of them and the last three quarters, with a line saying how
    much was left out between. A build that prints without end (``yes`` for ten minutes)
    costs the host no more memory than this.

    Thread-safe: the pipes of a local build are read by two threads.
    """

    def __init__(self, limit: int = BUILD_LOG_CHARS) -> None:
        self.limit = limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self.dropped = 0
        """Characters left out so far."""
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        """Keep ``text`` (the next piece of output)."""
        with self._lock:
            room = self.limit // 4 - self._head_len
            if room > 0:
                self._head.append(text[:room])
                self._head_len += len(text[:room])
                text = text[room:]
            if not text:
                return
            self._tail.append(text)
            self._tail_len += len(text)
            keep = self.limit - self.limit // 4
            if self._tail_len > 2 * keep:  # trim now and then, not at every piece
                self._trim(keep)

    def _trim(self, keep: int) -> None:
        whole = "".join(self._tail)
        over = max(0, len(whole) - keep)
        self.dropped += over
        self._tail = [whole[over:]]
        self._tail_len = len(whole) - over

    def text(self) -> str:
        """What is kept, in order (with the line saying what was left out, if anything)."""
        with self._lock:
            self._trim(self.limit - self.limit // 4)
            gap = (f"\n[... {self.dropped} characters of output left out ...]\n"
                   if self.dropped else "")
            return "".join(self._head) + gap + "".join(self._tail)


SETTLE_S = 1.0
"""How long the crash detail of a bot that exited waits for its output to be read."""
MEMORY_TROUBLE = re.compile(r"memory|allocat|reserve|address space|initialization of VM",
                            re.IGNORECASE)
"""Output of a bot that failed for want of address space (Python's ``MemoryError``, a JVM's
"Could not allocate compressed class space", .NET's "GC heap initialization failed",
"Cannot allocate memory"): the crash detail then says where the limit is set."""
INSTANCE_VAR = "MOON_BOT_INSTANCE"
"""The environment variable that marks every process of one local bot run (a random hex
value per :class:`LocalProcess`): :meth:`LocalProcess.kill` kills whatever still has it."""


_BUILDS: set[Containment] = set()
"""The builds running now (:func:`run_build_command`), killed when the arena exits."""
_BUILDS_LOCK = threading.Lock()


@atexit.register
def _kill_builds() -> None:
    """At exit, kill every build still running, with all it started: a build runs in a
    thread of its own (the host's), which an exiting interpreter abandons."""
    with _BUILDS_LOCK:
        running = list(_BUILDS)
    for c in running:
        c.kill()
        c.release(timeout_s=0.5)


def _drain_text(pipe: Any, kept: BuildOutput) -> None:
    """Read a text pipe to its end into ``kept``."""
    with contextlib.suppress(OSError, ValueError):
        while chunk := pipe.read(1 << 16):
            kept.add(chunk)


def run_build_command(spec: BotSpec, timeout_s: float = 600.0) -> str:
    """Run the bot's build command (if any) in its folder with ``/bin/sh``; returns the
    build log (its stdout, then its stderr).

    The build is held like a bot run (:class:`arena.sandbox.containment.Containment`: its own
    process group, a cgroup where one can be made, the ``MOON_BOT_INSTANCE`` marker): when
    it ends, times out, or the arena exits while it runs, everything it started is killed,
    so a build's leftovers never outlive it (a killed arena's are cleaned up at its next
    start).

    Raises:
        BotError: the build failed or timed out after ``timeout_s`` seconds (the message
            ends with the log's tail).
    """
    if not spec.build:
        return ""
    instance = f"build_{secrets.token_hex(8)}"
    held = Containment(instance, INSTANCE_VAR)
    env = dict(os.environ)
    env[INSTANCE_VAR] = instance
    with _BUILDS_LOCK:
        _BUILDS.add(held)
    try:
        proc = subprocess.Popen(held.wrap(["/bin/sh", "-c", spec.build]), cwd=spec.folder,
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True)
        held.started(proc.pid)
        # read as it comes, kept to BUILD_LOG_CHARS: a build that prints without end must
        # not fill the arena's memory (communicate() would keep every byte)
        kept = (BuildOutput(), BuildOutput())
        readers = [threading.Thread(target=_drain_text, args=(pipe, k), daemon=True)
                   for pipe, k in zip((proc.stdout, proc.stderr), kept, strict=True)]
        for r in readers:
            r.start()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            held.kill()  # the whole build, so its pipes close
            proc.wait()
            raise BotError(f"bot {spec.name}: build timed out after {timeout_s:.0f} s") \
                from None
        finally:
            # the build's processes go first, so that its pipes close and the readers end
            # with what it wrote (still in the pipes): a build stopped mid-way (Ctrl-C) or
            # one that left a process holding them would make each join wait its 10 s
            held.kill()
            for r, pipe in zip(readers, (proc.stdout, proc.stderr), strict=True):
                r.join(10)
                if pipe is not None and not r.is_alive():  # never close one being read
                    with contextlib.suppress(OSError):
                        pipe.close()
    finally:
        held.kill()  # what the build left running in the background
        held.release()
        with _BUILDS_LOCK:
            _BUILDS.discard(held)
    stdout, stderr = (k.text() for k in kept)
    out = stdout + stderr
    if proc.returncode != 0:
        raise BotError(f"bot {spec.name}: build failed (exit {proc.returncode}):\n"
                       f"{clean(out[-2000:])}")
    return out


class _LogDrain:
    """A daemon thread that drains a bot's output pipe into its log file, always reading
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
        self.total = 0
        """Bytes read so far."""
        self.lock = threading.Lock()
        """Held while a read is being counted (see :meth:`nothing_written`)."""
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

    FINAL_BYTES = 4 * LOG_MAX_BYTES
    """After :meth:`close`, at most this much more is read (what the bot's processes wrote
    before they died), so a writer that survived cannot keep the drain going."""

    def _run(self) -> None:
        after_stop = 0
        try:
            while True:
                stopping = self.stop.is_set()
                ready, _, _ = select.select([self.fd], [], [], 0 if stopping else 0.1)
                if not ready:
                    if stopping:  # what is left was read: do not wait for the pipe's end
                        break
                    continue
                with self.lock:
                    chunk = os.read(self.fd, 1 << 16)
                    self.total += len(chunk)
                if not chunk:
                    break
                self._take(chunk)
                if stopping:
                    after_stop += len(chunk)
                    if after_stop > self.FINAL_BYTES:
                        break
        except (OSError, ValueError):
            pass
        finally:
            try:
                if self.tail:
                    if self.dropped:
                        self.log.write(f"\n[... {self.dropped} bytes of output dropped "
                                       "...]\n".encode())
                    self.log.write(bytes(self.tail))
                self.log.close()
            except OSError:
                pass
            with self.lock:
                os.close(self.fd)
                self.fd = -1

    def nothing_written(self) -> bool:
        """True if nothing at all has come through the pipe yet (nothing read, nothing
        waiting in it). Once every writer has exited this is final."""
        with self.lock:
            if self.total or self.fd < 0:
                return self.total == 0
            try:
                waiting = fcntl.ioctl(self.fd, termios.FIONREAD, b"\0\0\0\0")
            except OSError:
                return False
            return int.from_bytes(waiting, sys.byteorder) == 0

    def close(self, timeout_s: float = 2.0) -> None:
        """Read what is in the pipe now, then stop: call it once the bot's processes are
        dead. It does not wait for the pipe's end, which a process that escaped the kill
        may hold open. The thread is gone when this returns (or stuck in a disk write)."""
        self.stop.set()
        self.thread.join(timeout_s)


class LocalProcess:
    """A bot process for one game, contained as :mod:`arena.sandbox.containment` says (a cgroup of
    its own, or its process group and instance marker).

    Use :meth:`start`, then :meth:`poll`/:meth:`wait`; :meth:`kill` ends the bot and every
    process it started. stdout and stderr go through one pipe to ``log_path`` (interleaved
    as written), capped (LOG_MAX_BYTES from the start, LOG_TAIL_BYTES from the end). A stdio
    bot's command is the stdio bridge, whose stdout is unused: the bot's own stdout is the
    protocol, its stderr is the bridge's.
    """

    def __init__(self, spec: BotSpec, address: str, token: str, log_path: str | Path,
                 limits: Limits | None = None, env: dict[str, str] | None = None) -> None:
        self.spec = spec
        self.address = address
        self.token = token
        self.log_path = log_path
        base = limits or Limits()
        self.limits = dataclasses.replace(base, memory_mb=spec.memory_mb) \
            if spec.memory_mb else base
        self.env = env or {}
        self.instance = secrets.token_hex(16)
        """This run's MOON_BOT_INSTANCE."""
        self.containment = Containment(self.instance, INSTANCE_VAR)
        self.proc: subprocess.Popen[bytes] | None = None
        self._drain: _LogDrain | None = None

    def environment(self) -> dict[str, str]:
        """The bot's environment: the arena's, the extra ``env``, the referee's address,
        the seat's token, the bot's name and the run's instance marker."""
        env = dict(os.environ)
        env.update(self.env)
        env.update(MOON_ADDRESS=self.address, MOON_TOKEN=self.token,
                   MOON_BOT_NAME=self.spec.name, PYTHONUNBUFFERED="1")
        env[INSTANCE_VAR] = self.instance
        return env

    def start(self) -> None:
        """Start the process.

        Raises:
            BotError: the run command cannot be started (not found, not executable).
        """
        env = self.environment()
        os.makedirs(os.path.dirname(self.log_path) or ".", exist_ok=True)
        lim = self.limits
        argv = self.spec.command()
        problem = missing_command(self.spec)
        if problem:
            raise BotError(problem)
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
        argv = self.containment.wrap(argv)  # into a cgroup of its own, where possible

        log = open(self.log_path, "wb")  # noqa: SIM115 - the drain thread closes it
        read_fd, write_fd = os.pipe()
        try:
            self.proc = subprocess.Popen(
                argv, cwd=self.spec.folder, env=env,
                stdin=subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
                start_new_session=True, preexec_fn=preexec)
        except OSError as e:
            log.close()
            os.close(read_fd)
            self.containment.release()
            raise BotError(f"bot {self.spec.name}: cannot run {self.spec.run!r} in "
                           f"{self.spec.folder}: {e.strerror}") from None
        finally:
            os.close(write_fd)
        self.containment.started(self.proc.pid)
        self._drain = _LogDrain(read_fd, log, self.spec.name)
        self._drain.start()

    def cpu_wait_s(self) -> float | None:
        """How long (seconds) the bot's processes have waited for a CPU since it started
        (:func:`arena.sandbox.containment.runqueue_wait_s`); None before its start or when
        unmeasured."""
        return None if self.proc is None else runqueue_wait_s(self.proc.pid)

    def poll(self) -> int | None:
        """The exit code, or None while running."""
        return None if self.proc is None else self.proc.poll()

    def exit_detail(self) -> str:
        """What more to say of a bot that has exited, for the crash fault's detail: that it
        wrote nothing at all (an empty log tells nothing), that it was killed by a signal,
        or where the address-space limit is set when its output speaks of memory. ""
        when there is nothing to add. Waits at most :data:`SETTLE_S` for the bot's last
        output to be read (call it off the event loop); never raises."""
        if self.proc is None or self.proc.returncode is None:
            return ""
        rc = self.proc.returncode
        if rc != 0 and self._drain is not None:
            # its last words may still be in the pipe, the drain thread not yet run (a
            # loaded machine): the pipe ends at once unless a process that escaped holds it
            self._drain.thread.join(SETTLE_S)
        parts = []
        if rc < 0:
            with contextlib.suppress(ValueError):
                name = signal.Signals(-rc).name
                parts.append(f"killed by {name}" + (
                    f" (its CPU time limit is {self.limits.cpu_s} s)"
                    if name == "SIGXCPU" else ""))
        if self._drain is not None and self._drain.nothing_written():
            parts.append("no output on stderr or stdout")
        elif rc != 0 and MEMORY_TROUBLE.search(self.log_tail()):
            parts.append(f"its address space is limited to {self.limits.memory_mb} MiB: "
                         f"a bot that needs more sets [limits] memory_mb in its bot.toml "
                         f"(at most {MAX_MEMORY_MB})")
        return "; ".join(parts)

    def kill(self) -> None:
        """Kill the bot and every process it started (its cgroup, else its process group
        and every process that still carries its ``MOON_BOT_INSTANCE``; SIGKILL), reap it,
        remove its cgroup and finish its log (reading what is in the pipe, not waiting for
        a writer that escaped). Waits at most about 5 s for the reaping, 2 s for the cgroup
        to empty and 2 s for the log. Safe to call twice.

        Raises:
            Nothing: processes already gone are ignored.
        """
        if self.proc is None:
            return
        self.containment.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.containment.release()
        if self._drain is not None:
            self._drain.close()

    def log_tail(self) -> str:
        """The end of the bot's output (at most LOG_TAIL_BYTES bytes, decoded as UTF-8;
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


__all__ = ["BUILD_LOG_CHARS", "INSTANCE_VAR", "LOG_TAIL_BYTES", "BuildOutput", "LocalProcess",
           "run_build_command", "kill_marked"]
