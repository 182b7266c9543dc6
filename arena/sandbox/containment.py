"""Containing a local bot and everything it starts, and cleaning up what a killed arena left.

Two ways, chosen once per arena process (:func:`mode`):

- **cgroup v2** (where the arena may write a cgroup v2 hierarchy, e.g. as root): each bot
  run gets a cgroup of its own, ``<cgroup2 mount>/moon-arena/<owner pid>-<owner start
  time>-<instance>``; the bot enters it before it runs (``/bin/sh`` writes its own pid to
  ``cgroup.procs``, then ``exec``\\s the bot), so every descendant is in it whatever it
  does (``setsid``, ``env -i``, double forks). The kill writes ``1`` to ``cgroup.kill``
  (Linux 5.14+; before that the cgroup is frozen and each of its processes killed), waits
  until the cgroup is empty and removes it. The folder names are the registry: a cgroup
  whose owner (the arena process that made it) is gone is killed and removed by
  :func:`cleanup_stale` at the next start.
- **process group and marker** (no writable cgroup v2: not root, not Linux, a container
  without its cgroup mounted, or ``MOON_CGROUP=off``): the bot, if still running, and every
  descendant it still has are stopped and killed (:func:`kill_tree`), then the bot's
  process group, then every process that still carries the run's ``MOON_BOT_INSTANCE`` in
  its environment (:func:`kill_marked`). A descendant that is an orphan by then (its parent
  exited), left the group (``setsid``) and is out of the marker's reach (``env -i``, or
  non-dumpable for an arena that is not root: its environ is root's to read) escapes
  (docs/sandbox.md, "What the fallback cannot catch"). Each run is registered as a file
  in the run folder (``$MOON_RUN_DIR``, default ``<tmp>/moon-arena-<uid>/bots``) so that
  the next start kills what a killed arena left: the processes with the marker and those
  still in the bot's process group.

``MOON_CGROUP`` chooses: unset (or ``auto``) for a cgroup where possible, ``off`` for the
process group and marker, or the path of a cgroup v2 folder the arena may write to (the
parent of the bots' cgroups, e.g. a delegated one for a user without root).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

log = logging.getLogger("arena.sandbox.containment")

CGROUP_VAR = "MOON_CGROUP"
"""``auto`` (default), ``off``, or the cgroup v2 folder to make bots' cgroups in."""
RUN_DIR_VAR = "MOON_RUN_DIR"
"""Where the process-group mode registers its bot runs (default ``<tmp>/moon-arena-<uid>``
plus ``/bots``)."""
PARENT = "moon-arena"
"""The cgroup folder, under the cgroup v2 mount, that holds one cgroup per bot run."""
_SH = "/bin/sh"
_ENTER = ('echo 0 > "$1/cgroup.procs" || { echo "moon arena: cannot enter the bot\'s '
          'cgroup $1" >&2; exit 125; }; shift; exec "$@"')
"""Run by ``/bin/sh`` before the bot: move this process into the cgroup, become the bot."""


# -- processes ------------------------------------------------------------------------------

def start_time(pid: int) -> str:
    """The start time of ``pid`` (clock ticks since boot, field 22 of ``/proc/<pid>/stat``),
    which tells a process from a later one with the same pid; ``"?"`` if unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[19]
    except (OSError, IndexError):
        return "?"


def owner_tag() -> str:
    """``<pid>-<start time>`` of this process: the owner of the bot runs it starts."""
    return f"{os.getpid()}-{start_time(os.getpid())}"


def owner_alive(tag: str) -> bool:
    """Whether the process an :func:`owner_tag` names still runs (False for a malformed
    tag: nothing owns it)."""
    pid_s, _, started = tag.partition("-")
    if not pid_s.isdigit():
        return False
    pid = int(pid_s)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return started in ("?", "") or start_time(pid) == started


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


def _children() -> dict[int, list[int]]:
    """Every live process's children, by parent pid (field 4 of ``/proc/<pid>/stat``,
    readable whatever the process did: its group, session, environment or dumpable flag)."""
    kids: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 1 and fields[0] != "Z":
                kids.setdefault(int(fields[1]), []).append(int(p))
    return kids


def runqueue_wait_s(pid: int) -> float | None:
    """How long ``pid`` and its live descendants have been runnable but waiting for a CPU
    (a loaded machine), seconds: the second field of ``/proc/<pid>/schedstat`` (ns),
    summed. None when it cannot be read (no such process, no schedstats)."""
    kids = _children()
    total, read = 0, False
    seen: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            total += int(Path(f"/proc/{p}/schedstat").read_text().split()[1])
            read = True
        except (OSError, IndexError, ValueError):
            pass
        todo.extend(kids.get(p, ()))
    return total / 1e9 if read else None


def cgroup_of(pid: int) -> list[tuple[list[str], str]]:
    """``pid``'s cgroups, as ``/proc/<pid>/cgroup`` lists them: each line's controllers
    (``[]`` for the cgroup v2 line) and path. Empty when it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            out.append(([c for c in parts[1].split(",") if c], parts[2]))
    return out


def throttled_s(pid: int, root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """How long the CPU cgroup of ``pid`` has been throttled (its processes runnable but
    held back by its CPU quota, e.g. a container's ``--cpus``), seconds since the cgroup
    was made: ``cpu.stat``'s ``throttled_usec`` (cgroup v2) or ``throttled_time`` (v1,
    ns). None when it cannot be read."""
    candidates: list[tuple[Path, str, float]] = []
    for controllers, path in cgroup_of(pid):
        rel = path.lstrip("/")
        if not controllers:  # v2: the unified hierarchy, on its own or beside v1's
            for mount in (root, root / "unified"):
                candidates.append((mount / rel / "cpu.stat", "throttled_usec", 1e-6))
        elif "cpu" in controllers:
            for mount in (root / ",".join(controllers), root / "cpu"):
                candidates.append((mount / rel / "cpu.stat", "throttled_time", 1e-9))
    for stat_file, key, unit in candidates:
        try:
            lines = stat_file.read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value) * unit
    return None


def kill_tree(pid: int, rounds: int = 20) -> int:
    """SIGKILL ``pid`` and every descendant it still has: each is stopped first (SIGSTOP:
    a stopped process cannot fork), the tree read again until it has no new one (at most
    ``rounds`` times), then all are killed. A descendant is found by its parent whatever
    it did (``setsid``, ``env -i``, ``PR_SET_DUMPABLE`` 0); one whose parent exited before
    (it was reparented, e.g. to init) is not. Returns how many were killed.

    Raises:
        Nothing: every OS error is ignored.
    """
    stopped: set[int] = set()
    frontier = {pid}
    for _ in range(rounds):
        for p in frontier:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGSTOP)
                stopped.add(p)
        # the descendants of every stopped process that are not stopped yet (born before
        # their parent stopped, or their children since)
        kids = _children()
        found: set[int] = set()
        stack = list(stopped)
        while stack:
            for c in kids.get(stack.pop(), ()):
                if c not in stopped and c not in found:
                    found.add(c)
                    stack.append(c)
        if not found:
            break
        frontier = found
    for p in stopped:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)
    return len(stopped)


def _group_members(pgid: int) -> list[int]:
    """The pids whose process group is ``pgid`` (field 5 of ``/proc/<pid>/stat``)."""
    found = []
    with contextlib.suppress(OSError):
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
                found.append(int(p))
    return found


def kill_stale_group(pgid: int, leader_start: str) -> int:
    """SIGKILL the processes still in the process group ``pgid`` of a bot whose arena died,
    unless the number was given to another process since: a pid in use as a process group
    is never reused while the group has members, so the group is the bot's when its leader
    is gone or is still the process that started at ``leader_start``. Returns how many
    were signalled."""
    if leader_start and leader_start != "?":
        now = start_time(pgid)
        if now != "?" and now != leader_start:
            return 0  # pgid is a newer process's: not ours
    sent = 0
    for _ in range(20):
        members = [p for p in _group_members(pgid) if p != os.getpid()]
        if not members:
            break
        for p in members:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
                sent += 1
        time.sleep(0.005)
    return sent


# -- cgroups --------------------------------------------------------------------------------

def cgroup2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (``/sys/fs/cgroup``, or
    ``/sys/fs/cgroup/unified`` on a hybrid system), from ``/proc/self/mountinfo``."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup2":
            return Path(left.split()[4].replace("\\040", " "))
    return None


@functools.lru_cache(maxsize=8)
def _cgroup_parent(setting: str) -> tuple[Path | None, str]:
    """(the folder to make bots' cgroups in, or None; a sentence saying which way bots are
    contained and why). Probes once per setting: makes a cgroup, moves a ``/bin/sh`` into
    it, removes it."""
    fallback = "process group + MOON_BOT_INSTANCE scan"
    if setting == "off":
        return None, f"{fallback} ({CGROUP_VAR}=off)"
    if setting and setting != "auto":
        parent = Path(setting)
    else:
        mount = cgroup2_mount()
        if mount is None:
            return None, f"{fallback} (no cgroup v2 hierarchy is mounted)"
        parent = mount / PARENT
    if not os.path.exists(_SH):
        return None, f"{fallback} (no {_SH} to enter a cgroup with)"
    probe = parent / f"{owner_tag()}-probe-{threading.get_ident()}"
    try:
        parent.mkdir(exist_ok=True)
        probe.mkdir()
    except OSError as e:
        return None, f"{fallback} (cannot make a cgroup in {parent}: {e.strerror})"
    try:
        if not (probe / "cgroup.procs").exists():
            return None, f"{fallback} ({parent} is not a cgroup v2 folder)"
        if not (probe / "cgroup.kill").exists() and not (probe / "cgroup.freeze").exists():
            return None, f"{fallback} (the kernel's cgroups have neither cgroup.kill nor " \
                "cgroup.freeze)"
        try:
            done = subprocess.run([_SH, "-c", _ENTER, "moon-probe", str(probe), "true"],
                                  capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"{fallback} (cannot enter a cgroup: {e})"
        if done.returncode != 0:
            why = done.stderr.decode(errors="replace").strip().splitlines()
            return None, f"{fallback} (cannot move a process into a cgroup of {parent}" \
                + (f": {why[0]}" if why else "") + ")"
        kill = "cgroup.kill" if (probe / "cgroup.kill").exists() else "cgroup.freeze"
        return parent, f"cgroup v2: one cgroup per bot run under {parent} (killed with {kill})"
    finally:
        _remove_cgroup(probe, 2.0)


def mode() -> str:
    """How local bots are contained in this process, as a sentence (for logs and
    ``python -m arena.sandbox containment``)."""
    return _cgroup_parent(os.environ.get(CGROUP_VAR, "").strip())[1]


def cgroup_parent() -> Path | None:
    """The folder bots' cgroups are made in, or None for the process-group mode."""
    return _cgroup_parent(os.environ.get(CGROUP_VAR, "").strip())[0]


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


# A cgroup is named by text here (os.path), not by a Path: pathlib interns every part of a
# path it builds, and every bot run's cgroup has a new name (a host that runs for weeks
# would keep growing the interpreter's table of interned strings).

def _populated(cg: str | Path) -> bool:
    try:
        for line in _read(os.path.join(cg, "cgroup.events")).splitlines():
            key, _, value = line.partition(" ")
            if key == "populated":
                return value.strip() != "0"
    except OSError:
        return False
    return False


def _procs(cg: str | Path) -> list[int]:
    try:
        return [int(p) for p in _read(os.path.join(cg, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return []


def kill_cgroup(cg: str | Path) -> None:
    """SIGKILL every process in the cgroup ``cg`` (a folder; ``cgroup.kill``; without it:
    freeze, kill each process, thaw). Raises nothing."""
    try:
        _write(os.path.join(cg, "cgroup.kill"), "1")
        return
    except FileNotFoundError:
        if not os.path.exists(cg):
            return
    except OSError as e:
        log.warning("cannot kill cgroup %s: %s", cg, e.strerror)
    with contextlib.suppress(OSError):
        _write(os.path.join(cg, "cgroup.freeze"), "1")
    for _ in range(50):
        pids = _procs(cg)
        if not pids:
            break
        for p in pids:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
        time.sleep(0.01)
    with contextlib.suppress(OSError):
        _write(os.path.join(cg, "cgroup.freeze"), "0")


def _remove_cgroup(cg: str | Path, timeout_s: float) -> bool:
    """Wait (up to ``timeout_s``) for ``cg`` to be empty and remove it; True if it is
    gone."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            os.rmdir(cg)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            pass
        if time.monotonic() >= deadline:
            log.warning("cgroup %s is not empty yet; the next start removes it", cg)
            return False
        if not _populated(cg):
            time.sleep(0.002)
        else:
            time.sleep(0.01)


# -- the run registry (process-group mode) --------------------------------------------------

def run_dir() -> Path | None:
    """The folder of registered bot runs (made on first use, ``0700``), or None when it
    cannot be made or is not ours."""
    base = os.environ.get(RUN_DIR_VAR) or os.path.join(
        tempfile.gettempdir(), f"moon-arena-{os.getuid()}", "bots")
    d = Path(base)
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        if d.stat().st_uid != os.getuid():
            return None
    except OSError:
        return None
    return d


class Containment:
    """How one local bot run is held: its cgroup (cgroup mode) or its registry entry
    (process-group mode). Use :meth:`wrap` for the argv, :meth:`started` once it runs,
    :meth:`kill` and then :meth:`release` after the game.

    ``instance`` is the run's MOON_BOT_INSTANCE value; ``marker`` the variable's name.
    """

    def __init__(self, instance: str, marker: str) -> None:
        self.instance = instance
        self.marker = marker
        self.cgroup: str | None = None
        """The run's cgroup folder (cgroup mode)."""
        self.entry: str | None = None
        """The run's registry file (process-group mode)."""
        self.pid = 0
        self.start = ""
        """The bot's start time (:func:`start_time`), to know its pid is still its own."""

    def wrap(self, argv: list[str]) -> list[str]:
        """The argv that runs ``argv`` contained: in a new cgroup (made now) if cgroups can
        be used, else unchanged (and the run is registered). Raises nothing: a cgroup that
        cannot be made falls back to the process-group mode."""
        cg = self.prepare()
        return argv if cg is None else [_SH, "-c", _ENTER, "moon-cgroup", str(cg), *argv]

    def prepare(self) -> str | None:
        """Make the run's cgroup and return it (the bot must enter it before it runs: write
        ``0`` to its ``cgroup.procs``), or None in the process-group mode (the run is
        registered). Raises nothing: a cgroup that cannot be made falls back to the
        process-group mode."""
        cleanup_stale_once()
        parent = cgroup_parent()
        if parent is not None:
            cg = os.path.join(parent, f"{owner_tag()}-{self.instance}")
            try:
                os.mkdir(cg)
                self.cgroup = cg
                return cg
            except OSError as e:
                log.warning("cannot make cgroup %s (%s): this bot is contained by its "
                            "process group and marker only", cg, e.strerror)
        d = run_dir()
        if d is not None:
            self.entry = os.path.join(d, f"{owner_tag()}-{self.instance}.json")
            self._register()
        return None

    def _register(self) -> None:
        if self.entry is None:
            return
        data = {"instance": self.instance, "marker": self.marker, "pgid": self.pid,
                "start": start_time(self.pid) if self.pid else ""}
        with contextlib.suppress(OSError):
            tmp = self.entry[:-len(".json")] + ".tmp"
            _write(tmp, json.dumps(data))
            os.replace(tmp, self.entry)

    def started(self, pid: int) -> None:
        """The bot runs as ``pid`` (its own process group's leader)."""
        self.pid = pid
        self.start = start_time(pid)
        self._register()

    def kill(self) -> None:
        """SIGKILL the bot's process group, its cgroup (every descendant) and every process
        with its marker; without a cgroup, first the bot and every descendant it still has
        (:func:`kill_tree`). Raises nothing."""
        if self.pid and self.cgroup is None and self.start not in ("", "?") \
                and start_time(self.pid) == self.start:  # still the bot (not reaped)
            kill_tree(self.pid)  # its descendants by parentage, whatever they did
        if self.pid:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
        if self.cgroup is not None:
            kill_cgroup(self.cgroup)
        kill_marked(self.marker, self.instance)

    def release(self, timeout_s: float = 2.0) -> None:
        """After :meth:`kill` and reaping the bot: remove its cgroup (waiting up to
        ``timeout_s`` for the last processes to go) and its registry entry. Safe to call
        twice."""
        if self.cgroup is not None and _remove_cgroup(self.cgroup, timeout_s):
            self.cgroup = None
        if self.entry is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.entry)
            self.entry = None


# -- leftovers of a killed arena ------------------------------------------------------------

_RUN_NAME = re.compile(r"^(\d+)-(\d+|\?)-[0-9A-Za-z_]+(?:-\d+)?(?:\.json)?$")
"""A bot run's cgroup or registry entry, as :class:`Containment` names it:
``<owner pid>-<owner start time>-<instance>`` (a probe's instance is ``probe-<thread>``),
``.json`` for an entry."""


def run_owner(name: str) -> str | None:
    """The :func:`owner_tag` in the name of a bot run's cgroup or registry entry, or None
    for a name this module did not make (which is never cleaned up: it may be another
    program's, or a parent of other runs)."""
    m = _RUN_NAME.match(name)
    return f"{m[1]}-{m[2]}" if m else None


def cleanup_stale() -> int:
    """Kill and remove what arenas that died (``kill -9``) left on this machine: the
    cgroups under ``moon-arena/`` (and under ``$MOON_CGROUP``) and the registered runs
    whose owner process is gone — its pid no longer runs, or runs a later process (the
    start time in the name differs) — with every process in them. Runs of live arenas are
    not touched, nor anything whose name this module did not give (:func:`run_owner`).
    Returns how many bot runs were cleaned up. Raises nothing."""
    cleaned = 0
    parents = {p for p in (cgroup_parent(),) if p is not None}
    mount = cgroup2_mount()
    if mount is not None and (mount / PARENT).is_dir():
        parents.add(mount / PARENT)
    for parent in parents:
        try:
            children = [c for c in parent.iterdir() if c.is_dir()]
        except OSError:
            continue
        for cg in children:
            owner = run_owner(cg.name)
            if owner is None or owner_alive(owner):
                continue
            kill_cgroup(cg)
            _remove_cgroup(cg, 2.0)
            cleaned += 1
    d = run_dir()
    if d is not None:
        for entry in d.glob("*.json"):
            owner = run_owner(entry.name)
            if owner is None or owner_alive(owner):
                continue
            try:
                data = json.loads(entry.read_text())
            except (OSError, ValueError):
                data = {}
            if isinstance(data, dict) and data.get("instance"):
                kill_marked(str(data.get("marker") or "MOON_BOT_INSTANCE"),
                            str(data["instance"]))
                if isinstance(data.get("pgid"), int) and data["pgid"] > 1:
                    kill_stale_group(data["pgid"], str(data.get("start") or ""))
            with contextlib.suppress(OSError):
                entry.unlink()
            cleaned += 1
    if cleaned:
        log.warning("cleaned up %d bot run(s) left by an arena that was killed", cleaned)
    return cleaned


_once = threading.Lock()
_done = False


def cleanup_stale_once() -> None:
    """:func:`cleanup_stale`, the first time it is called in this process (every start of a
    local bot calls it, so `moon play`, a ladder, a host all clean up when they start)."""
    global _done
    with _once:
        if _done:
            return
        _done = True
        log.info("bot containment: %s", mode())
        cleanup_stale()
