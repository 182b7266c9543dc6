"""A fork server for Python SDK bots: a fresh bot process per game without paying, every
game, for starting Python and importing gRPC, protobuf and the SDK.

A local bot whose ``run`` is ``{python} <script>.py`` and whose script imports
``moon_sdk`` (:func:`forkable`) can be started by forking a server process that has
already imported them (:class:`ForkServer`, one per executor, started with its first game
that has such a bot). Each game still gets its own process that never played: the child is
forked from the server, which never runs a bot, so it holds no game, no connection and no
state of another game; Python's ``random`` is reseeded in it as after any fork. The child
then does what :class:`arena.sandbox.local.LocalProcess` has done for a started process: it enters
the bot run's own cgroup (:mod:`arena.sandbox.containment`) before anything else, starts a session
of its own (its own process group), gets SIGKILL if the server dies (which itself gets
SIGKILL if the arena dies), takes the same rlimits (address space, CPU seconds, open
files), writes stdout and stderr to the seat's log pipe, gets the bot's environment
(``MOON_ADDRESS``, ``MOON_TOKEN``, ``MOON_BOT_INSTANCE``...) and working folder, and runs
the script as ``__main__`` as ``python <script>.py`` would: the same ``sys.argv``,
``sys.orig_argv``, ``__file__`` and ``sys.path[0]``; an uncaught error reported by
``sys.excepthook`` without this module's frames (a script that does not compile: the
interpreter's lines, word for word); at exit it waits for the bot's non-daemon threads and
runs its exit handlers (only the interpreter's module teardown, which costs a bot as much
CPU as its game, is skipped). Killing and cleaning up is :class:`ForkedProcess.kill`,
which is :class:`~arena.sandbox.local.LocalProcess`'s.

What differs from a started process: the hash seed (``PYTHONHASHSEED``) is the server's,
drawn at random when it starts and the same for every bot it forks (it cannot be drawn
again in a child: every string the server imported holds its hash; it is no game
information and every bot shares it); ``/proc/<pid>/environ`` of the bot process itself
shows the server's environment (``os.environ`` is the bot's), except that the child writes
its run's marker (``MOON_BOT_INSTANCE``) over the server's placeholder there
(:func:`_mark`), so that in the process-group mode, without cgroups, it and what it forks
carry the marker as a started bot's processes do; its ``/proc/<pid>/cmdline`` (what
``ps`` shows) is rewritten to ``python <script>.py`` (:func:`_retitle`). Started as a
process instead: a bot folder with a module named like one the server has imported (a
``grpc.py``...), since the server's module would win; a bot whose
environment gives a start-up variable (:data:`STARTUP_VARS`: the hash seed, the module
path, the locale, gRPC's and protobuf's options) another value than the server's, since
it would not act in a forked child.

No gRPC channel or server is ever made in the server process (gRPC is imported, not
initialised), and fork support is off (``GRPC_ENABLE_FORK_SUPPORT=false``): each child
makes its own channel. The server is single-threaded.

On by default: ``LocalExecutor(fork_server=False)``, a ladder's ``fork_server = false``,
a host's ``[runner] fork_server = false``, ``--no-fork-server`` or ``MOON_FORK_SERVER=0``
turns it off; a bot that is not a Python SDK bot always starts as a process. If the
server cannot start, bots start as processes; if it dies, its children die with it, the
executor voids their games (an infrastructure failure, never the bots') and later bots
start as processes.

Run by the arena as ``python -m arena.sandbox.forkserver <socket path>``; it exits when its
standard input closes (the arena is done or gone).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from ..bots.manifest import BotSpec
from .local import INSTANCE_VAR, LocalProcess, _LogDrain

logger = logging.getLogger("arena.sandbox.forkserver")

ENV_VAR = "MOON_FORK_SERVER"
"""``0``/``off``/``false``/``no`` turns the fork server off where nothing else says;
``1``/``on``/``true``/``yes`` or unset: on (the default)."""
_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")
STARTUP_VARS = ("PYTHON", "LC_", "LANG", "GRPC_", "PROTOCOL_BUFFERS_")
"""Prefixes of the environment variables that act when Python starts or when the server
imports gRPC and protobuf (the hash seed, the module path, the locale, gRPC's and
protobuf's options): a bot whose environment gives any of them another value than the
server's is started as a process, where they act."""
_EMULATED = ("PYTHONUNBUFFERED", "GRPC_ENABLE_FORK_SUPPORT")
"""Startup variables that may differ: the child's stdout and stderr are unbuffered anyway;
fork support is off in the server by design (it never makes a channel)."""
PRELOAD = ("grpc", "google.protobuf", "moon_sdk", "moon_sdk.bot", "moon_sdk.convert",
           "moon_sdk.rules", "moon_sdk.v1.bot_pb2", "moon_sdk.v1.bot_pb2_grpc",
           "moon_sdk.v1.game_pb2", "logging", "random", "queue")
"""What the server imports once, so that its children need not."""
_PR_SET_PDEATHSIG = 1
_ROOM = 256
"""Blank bytes at the end of the server's command line, so that a child can write its own
(``python <script>.py``, :func:`_retitle`) over it."""
PLACEHOLDER = "0" * 32
"""The server's ``MOON_BOT_INSTANCE``, as long as a run's marker (``secrets.token_hex(16)``):
each child writes its own marker over it in its start-up environment (:func:`_mark`)."""


def enabled_by_env() -> bool:
    """Whether the fork server is on where no setting says: ``MOON_FORK_SERVER`` unset or
    empty is on (the default), ``0``/``off``/``false``/``no`` off.

    Raises:
        ConfigError: any other value (the message says which are meant).
    """
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value in _OFF:
        return False
    if value in _ON or not value:
        return True
    from ..errors import ConfigError

    raise ConfigError(f"{ENV_VAR}={os.environ[ENV_VAR]!r}: use 0 to start every bot as a "
                      "process, or 1 (the default) to fork Python SDK bots")


def startup_env(env: dict[str, str]) -> dict[str, str]:
    """The variables of ``env`` that act at start-up (:data:`STARTUP_VARS`), minus the
    emulated ones."""
    return {k: v for k, v in env.items()
            if k.startswith(STARTUP_VARS) and k not in _EMULATED}


def forkable(spec: BotSpec) -> Path | None:
    """The script to run if ``spec`` (an :class:`arena.bots.manifest.BotSpec`) is a Python SDK bot
    the fork server can start, else None: a local bot (not stdio) whose ``run`` is exactly
    ``{python} <file>.py``, the file in its folder, importing ``moon_sdk``."""
    import shlex

    if spec.runner != "local" or spec.language == "stdio":
        return None
    try:
        words = shlex.split(spec.run)
    except ValueError:
        return None
    if len(words) != 2 or words[0] != "{python}" or not words[1].endswith(".py"):
        return None
    script = (spec.folder / words[1]).resolve()
    try:
        text = script.read_text(errors="replace")
    except OSError:
        return None
    if "moon_sdk" not in text:
        return None
    return script


def _local_modules(folder: Path) -> set[str]:
    """Names of the modules and packages in a bot folder (``x.py``, ``x/``)."""
    names = set()
    with contextlib.suppress(OSError):
        for p in folder.iterdir():
            if p.suffix == ".py":
                names.add(p.stem)
            elif p.is_dir() and (p / "__init__.py").exists():
                names.add(p.name)
    return names


# -- the arena's side ---------------------------------------------------------------------

class ForkServer:
    """The server process and its socket (arena side). :meth:`start` once, :meth:`spawn`
    per bot run, :meth:`close` at the end. Thread-safe: bots start from a thread pool.

    Raises (``start``):
        OSError: the server could not be started (the caller starts bots as processes).
    """

    def __init__(self) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.path = ""
        self.modules: frozenset[str] = frozenset()
        """Top-level names of the modules the server has imported."""
        self.env: dict[str, str] = {}
        """The server's start-up variables (:func:`startup_env`)."""
        self.closed = False
        """:meth:`close` was called: the arena is stopping, a spawn refused is no failure."""

    def start(self, timeout_s: float = 60.0) -> None:
        """Start the server and wait until it has imported everything (raises OSError if
        it fails or takes longer than ``timeout_s``)."""
        self._tmp = tempfile.TemporaryDirectory(prefix="moon-fork-")
        self.path = str(Path(self._tmp.name) / "fork.sock")
        env = dict(os.environ, GRPC_ENABLE_FORK_SUPPORT="false")
        env[INSTANCE_VAR] = PLACEHOLDER
        self.env = startup_env(env)
        argv = [sys.executable, "-m", "arena.sandbox.forkserver", self.path, " " * _ROOM]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, start_new_session=True)
        assert self.proc.stdout is not None
        ready: list[bytes] = []
        reader = threading.Thread(target=lambda: ready.append(self.proc.stdout.readline()),  # type: ignore[union-attr]
                                  daemon=True)
        reader.start()
        reader.join(timeout_s)
        line = ready[0] if ready else b""
        if not line.startswith(b"{"):
            self.close()
            raise OSError(f"the fork server did not start (said {line[:200]!r})")
        self.modules = frozenset(json.loads(line)["modules"])

    def usable_for(self, spec: BotSpec) -> Path | None:
        """The script to fork for ``spec``, or None to start it as a process (not a Python
        SDK bot, the server is not running, or a module of the bot's folder would be
        shadowed by one the server has imported)."""
        if not self.alive():
            return None
        script = forkable(spec)
        if script is None or _local_modules(script.parent) & self.modules:
            return None
        return script

    def alive(self) -> bool:
        """Whether the server runs (started, not closed, not dead)."""
        return self.proc is not None and self.proc.poll() is None

    def spawn(self, request: dict[str, Any], log_fd: int
              ) -> tuple[socket.socket, int, bytes]:
        """Fork a bot: ``request`` says what (see :func:`_child`), ``log_fd`` is where its
        stdout and stderr go. Returns the connection (on which its exit status comes, a
        JSON line ``{"exit": rc}``), its pid, and what came after the pid's line (a bot
        that exits at once: its exit status, in the same read).

        Raises:
            OSError: the server is gone or could not fork.
        """
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(30)
            conn.connect(self.path)
            data = json.dumps(request).encode() + b"\n"
            socket.send_fds(conn, [data], [log_fd])
            reply, rest = _read_line(conn)
            answer = json.loads(reply) if reply else {}
            if "pid" not in answer:
                raise OSError(answer.get("error") or "the fork server closed the connection")
            conn.settimeout(None)
            return conn, int(answer["pid"]), rest
        except (OSError, ValueError) as e:
            conn.close()
            raise OSError(f"fork server: {e}") from None

    def close(self) -> None:
        """Stop the server (its children are the executor's to kill). Safe to call twice."""
        self.closed = True
        proc, self.proc = self.proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                assert proc.stdin is not None
                proc.stdin.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _read_line(conn: socket.socket) -> tuple[bytes, bytes]:
    """The first line that comes on ``conn`` (stripped), and what came after it."""
    buf = b""
    while b"\n" not in buf:
        chunk = conn.recv(4096)
        if not chunk:
            break
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return line.strip(), rest


class _ForkedChild:
    """A forked bot seen from the arena, like a :class:`subprocess.Popen`: its ``pid``,
    and its ``returncode`` (negative: killed by that signal) once the server reported it
    (``poll``, ``wait``). A server that died without saying counts as SIGKILL (its
    children get SIGKILL when it dies)."""

    def __init__(self, conn: socket.socket, pid: int, buf: bytes = b"") -> None:
        self.conn = conn
        self.pid = pid
        self.returncode: int | None = None
        self._lock = threading.Lock()
        self._buf = buf  # what the server said after the pid (its exit, if that quick)

    def _read(self, timeout_s: float) -> None:
        import select

        with self._lock:
            if self.returncode is not None:
                return
            if b"\n" not in self._buf:
                ready, _, _ = select.select([self.conn], [], [], timeout_s)
                if not ready:
                    return
                try:
                    chunk = self.conn.recv(4096)
                except OSError:
                    chunk = b""
                self._buf += chunk
                if not chunk and b"\n" not in self._buf:
                    self.returncode = -signal.SIGKILL
            if b"\n" in self._buf:
                try:
                    self.returncode = int(json.loads(self._buf.split(b"\n")[0])["exit"])
                except (ValueError, KeyError, TypeError):
                    self.returncode = -signal.SIGKILL
            if self.returncode is not None:
                self.conn.close()

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        self._read(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit code.

        Raises:
            subprocess.TimeoutExpired: not ended within ``timeout`` seconds.
        """
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = 1.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            self._read(min(left, 1.0))
        return self.returncode


class ForkedProcess(LocalProcess):
    """A :class:`~arena.sandbox.local.LocalProcess` forked by a :class:`ForkServer` instead of
    started: the same environment, limits, log, containment, ``poll``, ``kill``."""

    def __init__(self, server: ForkServer, script: Path, *args: Any,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.server = server
        self.script = script

    def start(self) -> None:
        """Fork the bot; if the server cannot, start it as a process
        (:meth:`LocalProcess.start`).

        Raises:
            BotError: the bot cannot be started as a process either.
        """
        env = self.environment()
        if startup_env(env) != self.server.env:  # they would not act in a forked child
            logger.info("bot %s: its environment sets start-up variables otherwise than "
                        "the fork server's; starting it as a process", self.spec.name)
            super().start()
            return
        os.makedirs(os.path.dirname(self.log_path) or ".", exist_ok=True)
        cgroup = self.containment.prepare()
        lim = self.limits
        import shlex

        argv0 = shlex.split(self.spec.run)[1]  # as written: what sys.argv[0] would be
        folder = os.path.abspath(self.spec.folder)
        request = {"script": os.path.join(folder, argv0), "path0": str(self.script.parent),
                   "argv0": argv0, "cwd": folder, "env": env,
                   "cgroup": cgroup or "", "memory_mb": lim.memory_mb,
                   "cpu_s": lim.cpu_s, "open_files": lim.open_files}
        log = open(self.log_path, "wb")  # noqa: SIM115 - the drain thread closes it
        read_fd, write_fd = os.pipe()
        try:
            conn, pid, said = self.server.spawn(request, write_fd)
        except OSError as e:  # the server's failure, never the bot's: start it as a process
            log.close()
            os.close(read_fd)
            os.close(write_fd)
            self.containment.release()
            # a bot starting as the arena stops finds the server closed on purpose: no
            # warning (the game is being stopped; its bot still starts, as a process)
            log_as = logger.info if self.server.closed else logger.warning
            log_as("bot %s: %s; starting it as a process", self.spec.name, e)
            super().start()
            return
        os.close(write_fd)
        self.proc = _ForkedChild(conn, pid, said)  # type: ignore[assignment]
        self.containment.started(pid)
        self._drain = _LogDrain(read_fd, log, self.spec.name)
        self._drain.start()



# -- the server's side --------------------------------------------------------------------

def _set_pdeathsig() -> None:
    """SIGKILL this process when its parent dies (Linux; nothing elsewhere)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _stat_field(index: int) -> int:
    """Field ``index`` (1-based, as ``man 5 proc`` counts) of ``/proc/self/stat``."""
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return int(fields[index - 3])  # the split starts at field 3, after the name


def _retitle(argv: list[str]) -> bool:
    """Write ``argv`` over this process's command line (the memory that
    ``/proc/<pid>/cmdline`` shows, ``arg_start``..``arg_end``), NUL-padded, so that ``ps``
    shows a forked bot as the started one would be shown. False if it does not fit."""
    import ctypes

    new = b"".join(a.encode() + b"\0" for a in argv)
    try:
        start, end = _stat_field(48), _stat_field(49)
    except (OSError, ValueError, IndexError):
        return False
    if len(new) > end - start:
        return False
    ctypes.memmove(start, new + b"\0" * (end - start - len(new)), end - start)
    return True


def _mark(instance: str) -> bool:
    """Write ``instance`` over :data:`PLACEHOLDER` in this process's start-up environment
    block, the memory that ``/proc/<pid>/environ`` shows (``env_start``..``env_end`` of
    ``/proc/self/stat``): then this process, and what it forks without executing anything,
    carries its run's marker there as a started bot does, for the process-group mode's
    scan (:func:`arena.sandbox.containment.kill_marked`). False if it could not (no placeholder,
    another length)."""
    import ctypes

    key = f"{INSTANCE_VAR}={PLACEHOLDER}".encode()
    if len(instance) != len(PLACEHOLDER):
        return False
    try:
        start, end = _stat_field(50), _stat_field(51)
        block = b"\0" + ctypes.string_at(start, end - start)
    except (OSError, ValueError, IndexError):
        return False
    at = block.find(b"\0" + key + b"\0")
    if at < 0:
        return False
    ctypes.memmove(start + at + len(INSTANCE_VAR) + 1, instance.encode(), len(instance))
    return True


def _child(req: dict[str, Any], log_fd: int) -> None:
    """In the forked child: become the bot run (see the module doc). Returns when the
    script may run; exits (125) if the child cannot be contained."""
    os.setsid()
    _mark(str(req["env"].get(INSTANCE_VAR, "")))
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    cgroup = req.get("cgroup")
    if cgroup:
        try:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write("0")
        except OSError as e:
            os.write(2, f"moon arena: cannot enter the bot's cgroup {cgroup}: {e}\n".encode())
            os._exit(125)
    _set_pdeathsig()
    if os.getppid() != req["server_pid"]:  # the server died before the death signal was set
        os._exit(125)
    import resource

    mem = int(req["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (int(req["cpu_s"]), int(req["cpu_s"]) + 5))
    files = int(req["open_files"])
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
    os.closerange(3, 65536)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    import io

    # the server's own standard streams are pipes too: their encodings are a started bot's
    out, err = sys.__stdout__, sys.__stderr__
    sys.stdout = io.TextIOWrapper(open(1, "wb", buffering=0, closefd=False),  # noqa: SIM115
                                  write_through=True, encoding=getattr(out, "encoding", None),
                                  errors=getattr(out, "errors", None))
    sys.stderr = io.TextIOWrapper(open(2, "wb", buffering=0, closefd=False),  # noqa: SIM115
                                  write_through=True, encoding=getattr(err, "encoding", None),
                                  errors="backslashreplace")
    inp = sys.__stdin__
    sys.stdin = open(0, closefd=False, encoding=getattr(inp, "encoding", None),  # noqa: SIM115
                     errors=getattr(inp, "errors", None))
    sys.argv = [req["argv0"]]
    sys.orig_argv = [sys.executable, req["argv0"]]
    _retitle(sys.orig_argv)
    sys.path[0] = req["path0"]
    import random

    random.seed()


def serve(path: str) -> dict[str, Any] | None:
    """The server's loop. Returns None in the server when the arena is done (stdin
    closed); in a forked child, returns the request of the bot to run."""
    for name in PRELOAD:
        __import__(name)
    import gc

    gc.collect()
    gc.freeze()  # children's collections then skip (and do not copy) the server's objects
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    rfd, wfd = os.pipe()
    os.set_blocking(rfd, False)
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(rfd, selectors.EVENT_READ, "child")
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    children: dict[int, socket.socket] = {}
    modules = sorted({m.split(".")[0] for m in sys.modules})
    sys.stdout.write(json.dumps({"modules": modules}) + "\n")
    sys.stdout.flush()
    me = os.getpid()
    while True:
        for key, _ in sel.select():
            what = key.data
            if what == "stdin":
                if not os.read(sys.stdin.fileno(), 4096):
                    return None
            elif what == "child":
                with contextlib.suppress(OSError):
                    while os.read(rfd, 4096):
                        pass
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    conn = children.pop(pid, None)
                    if conn is not None:
                        with contextlib.suppress(OSError):
                            conn.sendall(json.dumps(
                                {"exit": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
                        conn.close()
            elif what == "accept":
                conn, _ = listener.accept()
                try:
                    conn.settimeout(10)
                    msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 1)
                    while not msg.endswith(b"\n"):
                        more = conn.recv(1 << 20)
                        if not more:
                            break
                        msg += more
                    req: dict[str, Any] = json.loads(msg)
                    req["server_pid"] = me
                    if len(fds) != 1:
                        raise ValueError("no log file descriptor")
                except (OSError, ValueError) as e:
                    with contextlib.suppress(OSError):
                        conn.sendall(json.dumps({"error": str(e)}).encode() + b"\n")
                    conn.close()
                    continue
                try:
                    pid = os.fork()
                except OSError as e:
                    os.close(fds[0])
                    with contextlib.suppress(OSError):
                        conn.sendall(json.dumps({"error": f"fork: {e}"}).encode() + b"\n")
                    conn.close()
                    continue
                if pid == 0:  # the child: leave the server behind
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    sel.close()
                    listener.close()
                    conn.close()
                    for c in children.values():
                        c.close()
                    os.close(rfd)
                    os.close(wfd)
                    _child(req, fds[0])
                    return req
                os.close(fds[0])
                children[pid] = conn
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")


def _run_main(script: str) -> None:
    """Run ``script`` as ``python <script>`` would: compiled on its own (no future flag
    of this module), as the ``__main__`` module with ``__file__`` the script's absolute
    path while ``sys.argv[0]`` stays as written (``runpy.run_path`` would set both to one
    path)."""
    import builtins
    import importlib.machinery
    import types

    loader = importlib.machinery.SourceFileLoader("__main__", script)
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=script, __cached__=None, __loader__=loader,
                         __spec__=None, __package__=None, __builtins__=builtins)
    sys.modules["__main__"] = main
    with open(script, "rb") as f:
        source = f.read()
    exec(compile(source, script, "exec", dont_inherit=True), main.__dict__)


def _from_script(tb: Any, script: str) -> Any:
    """``tb`` from the script's first frame on: without this module's and runpy's frames,
    as ``python <script>`` would report it (None for an error in compiling the script
    itself, which the interpreter reports without a traceback)."""
    while tb is not None and tb.tb_frame.f_code.co_filename != script:
        tb = tb.tb_next
    return tb


def main() -> None:
    """``python -m arena.sandbox.forkserver <socket>``: serve; in a forked child, run the bot."""
    _set_pdeathsig()
    req = serve(sys.argv[1])
    if req is None:
        return
    import atexit
    import threading

    code: Any = 0
    script = req["script"]
    try:
        _run_main(script)
    except SystemExit as e:
        code = e.code
    except BaseException as e:  # noqa: BLE001 - as the interpreter would: report, exit 1
        tb = _from_script(e.__traceback__, script)
        sys.excepthook(type(e), e.with_traceback(tb), tb)  # the hook shows e's own
        code = 1
    # End as the interpreter would (wait for the bot's non-daemon threads, run the exit
    # handlers, flush), minus tearing down every module the server imported, which costs
    # a bot as much CPU as its game.
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main()
