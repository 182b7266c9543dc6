"""The ladder file: TOML, validated with errors that name the line.

Example (``ladders/demo.toml``)::

    [ladder]
    preset = "moon3"          # ruleset preset; players follow from it
    boards = 4                # seeded deals, each played in every seating
    seed = 1                  # the master seed: boards derive from it
    concurrency = 2           # games at once
    options = { min_bid = 4 } # ruleset overrides (docs/rules.md option names)
    # cluster = "tcp://10.0.0.5:8786"  # play on a Dask cluster (docs/distributed.md)

    [time_control]            # optional, milliseconds
    decision_ms = 2000

    [[bots]]
    path = "heuristic"        # an example bot by name, or a bot folder relative to this file
    [[bots]]
    path = "../mybot"
    runner = "local"                      # or "docker"
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from moon_sdk.rules import DEAL_VERSION, Ruleset, RulesetError
from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ..bots.manifest import BotSpec, load_bot
from ..bots.resources import example_bot_names, find_bot_folder
from ..bots.versions import SHORT, bot_version
from ..core.config import Problem, Table, decode_toml, first_problem, problems
from ..core.names import name_problem
from ..core.timecontrol import TimeControl
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits

_T = TypeVar("_T", bound=BaseModel)

LADDER_KEYS = {"name", "preset", "boards", "seed", "concurrency", "options", "results",
               "gauntlet", "check", "max_forfeits", "on_change",
               "cluster", "fork_server"}
ON_CHANGE = ("refuse", "new-version", "replace")
"""What a run does with a bot whose code changed since its games in the results file:
stop with a message (the default); enter the new code as a new version, rated separately
beside the old (``name@version`` each); or rate the new code only, the old version's games
kept in the file but out of the ratings (docs/ladder.md, "Growing a ladder, and new
versions")."""
BOT_KEYS = {"path", "runner", "name"}


@dataclass(frozen=True)
class LadderConfig:
    """A validated ladder."""

    name: str
    preset: str
    ruleset: Ruleset
    boards: int
    seed: int
    concurrency: int
    time_control: TimeControl
    bots: tuple[BotSpec, ...]
    results: Path | None = None
    docker_limits: DockerLimits | None = None
    """Limits of the bots run with ``runner = "docker"`` (the ``[sandbox]`` table)."""
    source: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    check: bool = True
    """Play each bot's admission check (one hand against itself) before the ladder."""
    max_forfeits: int = 0
    """Drop a bot once it has forfeited this many games (0: never)."""
    fork_server: bool | None = None
    """Fork Python SDK bots from a server that has imported gRPC and the SDK
    (:mod:`arena.sandbox.forkserver`; still a fresh process per bot and game); False: start
    every bot as a process; None: as ``MOON_FORK_SERVER`` says (unset: on, the default;
    ``0``: off)."""
    gauntlet: tuple[str, ...] = ()
    """Names of the challengers: only games with one of them are played (empty: every
    group, a round robin). Not part of :meth:`identity`: a gauntlet's games are games of
    the round robin (see :mod:`arena.ladder.schedule`)."""
    joined: tuple[str, ...] = ()
    """Challengers given as folders that are not bots of the ladder file: they joined
    ``bots`` for this run (by default the run's results go to a file of their own)."""
    versions: dict[str, str] = field(default_factory=dict)
    """Each bot's version by name: the first :data:`arena.bots.versions.SHORT` hex digits of its
    folder's content hash (:func:`arena.bots.versions.bot_version`), taken when the ladder is
    loaded. Recorded with every game; a bot's games are keyed by name and version."""
    on_change: str = "refuse"
    """What to do when a bot's code changed since its games in the results file (one of
    :data:`ON_CHANGE`)."""
    cluster: str | None = None
    """A Dask scheduler's address (``tcp://HOST:PORT``): the games are played on its
    workers (docs/distributed.md); None: on this machine. Not part of :meth:`settings`."""

    def settings(self) -> dict[str, Any]:
        """What every game of one results file must share: the rules, the master seed, the
        time control and how boards are dealt (:func:`settings_of`). Bots and boards are not
        among them: a ladder grows by both."""
        return settings_of(self.ruleset, self.seed, self.time_control)

    def identity(self) -> str:
        """A hash of :meth:`settings`: two ladders with the same identity may share a
        results file (not the bots, ``boards`` nor ``concurrency``: a ladder may grow by
        bots and boards and be resumed)."""
        return identity_of(self.settings())


def settings_of(ruleset: Ruleset, seed: int, time_control: TimeControl) -> dict[str, Any]:
    """The settings that fix what a board deals and how its games are played, as stored in
    a results file (``meta["settings"]``): ``ruleset`` (its options), ``seed``,
    ``time_control`` (milliseconds), ``deal_version`` (the rules engine's dealing) and
    ``board_seeds`` (how board seeds derive from the master seed)."""
    return {
        "ruleset": ruleset.to_dict(), "seed": seed,
        "time_control": dict(time_control.__dict__),
        "deal_version": DEAL_VERSION,  # the same seeds deal other tiles in another
        "board_seeds": 2,  # keyed BLAKE2b (1: SplitMix64, before 2026-11-30)
    }


def identity_of(settings: dict[str, Any]) -> str:
    """A short hash of :func:`settings_of` (16 hex digits)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def version_of(spec: BotSpec) -> str:
    """A bot's version: the first :data:`arena.bots.versions.SHORT` hex digits of its folder's
    content hash.

    Raises:
        ConfigError: the folder cannot be read.
    """
    try:
        return bot_version(spec.folder)[:SHORT]
    except OSError as e:
        raise ConfigError(f"bot {spec.name!r}: cannot read its folder {spec.folder} to take "
                          f"its version: {e}") from None


def available_cores() -> float:
    """How many CPU cores this process may use: the CPUs it may run on
    (``os.sched_getaffinity``), fewer when its cgroup has a CPU quota (cgroup v2
    ``cpu.max``, v1 ``cpu.cfs_quota_us``). Raises nothing."""
    try:
        cores = float(len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cores = float(os.cpu_count() or 1)
    quota = _cgroup_cpu_quota()
    return min(cores, quota) if quota else cores


def _cgroup_cpu_quota() -> float | None:
    """The CPU quota of this process's cgroup, in cores, or None (no quota, unreadable)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, where = line.split(":", 2)
        try:
            if controllers == "":  # cgroup v2
                text = (Path("/sys/fs/cgroup") / where.lstrip("/") / "cpu.max").read_text()
                limit, period = text.split()[:2]
                if limit != "max":
                    return int(limit) / int(period)
            elif "cpu" in controllers.split(","):
                base = Path("/sys/fs/cgroup") / controllers / where.lstrip("/")
                limit_us = int((base / "cpu.cfs_quota_us").read_text())
                if limit_us > 0:
                    return limit_us / int((base / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            continue
    return None


def concurrency_warning(cfg: LadderConfig, cores: float | None = None) -> str | None:
    """One line of warning when ``cfg.concurrency`` games at once would keep more bots
    thinking than there are cores (``cores``, default :func:`available_cores`); None when
    they fit.

    A game's bots take turns (docs/rules.md, "Bidding" and "Play": one seat acts at a
    time), so while one thinks the others wait for their turn and use no CPU: the games
    keep ``concurrency`` bots thinking at once, not ``concurrency × players``. Up to one a
    core, each has a core to itself and its decisions take what they would alone. Past
    that, each gets ``cores / concurrency`` of a core, and since the decision clock
    (``decision_ms`` plus the ``bank_ms`` bank) counts wall time, a decision that needs
    ``x`` ms of CPU takes ``x × concurrency / cores`` ms on it: healthy bots may lose on
    time. (Starting a game's bots is a short burst of all of them at once, under the far
    longer ``startup_ms``.)"""
    cores = available_cores() if cores is None else cores
    if cfg.concurrency <= max(cores, 1.0):
        return None
    fits = max(1, int(cores))
    slower = cfg.concurrency / cores
    return (f"concurrency {cfg.concurrency} on {cores:g} core(s): {cfg.concurrency} bots "
            f"think at once (one a game), up to {slower:.3g}x slower than alone, and may lose "
            f"on time ({cfg.time_control.decision_ms} ms a decision); use concurrency {fits} "
            f"(-j {fits}) or give more time")


def _line_of(text: str, table: str, key: str, index: int = 0) -> int | None:
    """1-based line of ``key = ...`` inside ``[table]`` (or the ``index``-th
    ``[[table]]``), or of the table header when ``key`` is empty."""
    current, seen = "", -1
    header = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?")
    for n, line in enumerate(text.splitlines(), 1):
        m = header.match(line)
        if m:
            current = m.group(1)
            if current == table:
                seen += 1
                if not key and seen == index:
                    return n
            continue
        if current == table and seen == index and key and re.match(
                rf"^\s*{re.escape(key)}\s*=", line):
            return n
    return None


def _where(path: Path, text: str, table: str, key: str = "", index: int = 0) -> str:
    line = _line_of(text, table, key, index) or _line_of(text, table, "", index)
    return f"{path}:{line}" if line else str(path)


def load_ladder(path: str | Path, overrides: dict[str, Any] | None = None) -> LadderConfig:
    """Read and validate a ladder file; ``overrides`` (from CLI flags) replace
    ``[ladder]`` keys.

    Raises:
        ConfigError: bad TOML (or not UTF-8, or nested too deeply to parse), unknown keys,
            bad values, unknown bots; the message names the file and line.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise ConfigError(f"cannot read ladder file {p}: {e.strerror}") from None
    text, data = decode_toml(raw, p)
    return ladder_from_dict(data, p, text, overrides)


def _whole(lo: int, hi: int) -> Any:
    """A whole number from ``lo`` to ``hi`` (never a bool)."""
    def check(v: object, info: ValidationInfo) -> object:
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise ValueError(f"{info.field_name} = {v!r}: must be a whole number from {lo} "
                             f"to {hi}")
        return v
    return BeforeValidator(check)


def _flag(v: object, info: ValidationInfo) -> object:
    """``v`` if it is true, false or unset (None). Raises ValueError: anything else."""
    if v is not None and not isinstance(v, bool):
        raise ValueError(f"{info.field_name} = {v!r}: must be true or false")
    return v


class _LadderTable(Table):
    """``[ladder]``, the flags over it (not ``options``: they add to the file's)."""

    name: str | None = None
    preset: Any = "moon3"
    """Checked by the ruleset (:meth:`Ruleset.from_dict`)."""
    boards: Annotated[int, _whole(1, 100_000)] = 4
    seed: Annotated[int, _whole(0, 2**63 - 1)] = 1
    concurrency: Annotated[int, _whole(1, 64)] = 1
    max_forfeits: Annotated[int, _whole(0, 1_000_000)] = 0
    check: Annotated[bool, BeforeValidator(_flag)] = True
    fork_server: Annotated[bool | None, BeforeValidator(_flag)] = None
    options: dict[str, Any] = {}
    results: Any = None
    """A path relative to the file; another value is ignored."""
    gauntlet: tuple[str, ...] = ()
    on_change: str = "refuse"
    cluster: Any = None
    """Checked by :func:`arena.cluster.executor.check_address`."""

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, v: object) -> object:
        problem = name_problem(v)
        if problem:
            raise ValueError(f"ladder name {problem}")
        return v

    @field_validator("options", mode="before")
    @classmethod
    def _options(cls, v: object) -> object:
        if not isinstance(v, dict):
            raise ValueError("options must be a table of ruleset options, e.g. options = "
                             "{ min_bid = 3 }")
        return v

    @field_validator("gauntlet", mode="before")
    @classmethod
    def _gauntlet(cls, v: object) -> object:
        v = [v] if isinstance(v, str) else v
        if not isinstance(v, list | tuple) or not all(isinstance(g, str) for g in v):
            raise ValueError('gauntlet must list the challengers by bot name, e.g. '
                             'gauntlet = ["mybot"]')
        return tuple(v)

    @field_validator("on_change", mode="before")
    @classmethod
    def _on_change(cls, v: object) -> object:
        if v not in ON_CHANGE:
            raise ValueError(f"on_change = {v!r}: use " + " or ".join(repr(x) for x in ON_CHANGE))
        return v


class _BotEntry(Table):
    """A ``[[bots]]`` entry."""

    path: str
    runner: str | None = None
    """None: as the bot's ``bot.toml`` says."""
    name: str | None = None

    @field_validator("runner", mode="before")
    @classmethod
    def _runner(cls, v: object) -> object:
        if v not in ("local", "docker"):
            raise ValueError(f"runner {v!r}: use 'local' or 'docker'")
        return v

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, v: object) -> object:
        problem = name_problem(v)
        if problem:
            raise ValueError(f"name {problem}")
        return v


class _LadderFile(Table):
    """A ladder file's tables (each checked on its own, in this order)."""

    ladder: dict[str, Any] = {}
    time_control: dict[str, Any] = {}
    sandbox: dict[str, Any] | None = None
    bots: list[Any] = Field([], validate_default=True)

    @field_validator("ladder", "time_control", "sandbox", mode="before")
    @classmethod
    def _table(cls, v: object, info: ValidationInfo) -> object:
        if not isinstance(v, dict):
            raise ValueError(f"[{info.field_name}] must be a table")
        return v

    @field_validator("bots", mode="before")
    @classmethod
    def _bots(cls, v: object) -> object:
        if not isinstance(v, list) or len(v) < 2:
            raise ValueError("a ladder needs at least 2 [[bots]] entries, each with a path to "
                             "a bot folder")
        return v


def _validated(model: type[_T], data: object, where: Callable[[Problem], str],
               unknown: Callable[[str], str]) -> _T:
    """``data`` checked by ``model``.

    Raises:
        ConfigError: ``<where>: <what is wrong>``, ``unknown(key)`` for an unknown key.
    """
    try:
        return model.model_validate(data)
    except ValidationError as e:
        problem = first_problem(e)
        what = unknown(problem.key) if problem.kind == "extra_forbidden" else problem.message
        raise ConfigError(f"{where(problem)}: {what}") from None


def _bot_entry(data: object, i: int, where: Callable[[str], str]) -> _BotEntry:
    """The ``i``-th ``[[bots]]`` entry, checked; ``where(key)`` is its key's file and line.

    Raises:
        ConfigError: no ``path``, an unknown key or a bad value.
    """
    try:
        return _BotEntry.model_validate(data)
    except ValidationError as e:
        found = problems(e)
        if any(p.loc in ((), ("path",)) for p in found):
            raise ConfigError(f"{where('path')}: bot {i + 1} needs path = \"<bot folder>\"") \
                from None
        p = first_problem(e)
        if p.kind == "extra_forbidden":
            raise ConfigError(f"{where(p.key)}: unknown key {p.key!r} for a bot; known: "
                              f"{', '.join(sorted(BOT_KEYS))}") from None
        raise ConfigError(f"{where(p.key)}: {p.message}") from None


def ladder_from_dict(data: dict[str, Any], path: Path, text: str = "",
                     overrides: dict[str, Any] | None = None) -> LadderConfig:
    """Validate a parsed ladder (see :func:`load_ladder`)."""
    doc = _validated(
        _LadderFile, data, lambda p: _where(path, text, p.key),
        lambda key: (f"unknown table {key!r}; a ladder file has [ladder], [time_control], "
                     "[sandbox] and [[bots]]"))
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    flags.pop("time_control", None)  # flags for other tables, not [ladder] keys

    def origin(key: str) -> str:
        """Where a [ladder] key's value came from: its flag, or the file and line."""
        if key in flags:
            return "--option" if key == "options" else f"--{key.replace('_', '-')}"
        return _where(path, text, "ladder", key)

    lad = _validated(
        _LadderTable, {**doc.ladder, **{k: v for k, v in flags.items() if k != "options"}},
        lambda p: origin(p.key),
        lambda key: f"unknown key {key!r} in [ladder]; known: {', '.join(sorted(LADDER_KEYS))}")
    options = {**lad.options, **(flags.get("options") or {})}  # -o NAME=VALUE over the file's
    try:
        ruleset = Ruleset.from_dict({"preset": lad.preset, **options})
    except (RulesetError, TypeError) as e:
        raise ConfigError(f"{origin('options' if options else 'preset')}: {e}") from None
    flagged_tc = (overrides or {}).get("time_control") or {}
    try:
        tc = TimeControl.from_dict({**doc.time_control, **flagged_tc})
    except (ConfigError, TypeError) as e:
        named = re.search(r"time control (\w+)=", str(e))  # the key at fault, if named
        key = named.group(1) if named and named.group(1) in doc.time_control else ""
        where = "the time control flags" if flagged_tc and (not key or key in flagged_tc) \
            else _where(path, text, "time_control", key)
        raise ConfigError(f"{where}: {e}") from None

    docker_limits = None
    if doc.sandbox is not None:
        from ..sandbox.docker import DockerLimits
        try:
            docker_limits = DockerLimits.from_dict(doc.sandbox)
        except ConfigError as e:
            raise ConfigError(f"{_where(path, text, 'sandbox')}: {e}") from None
    bots: list[BotSpec] = []
    for i, b in enumerate(doc.bots):
        where = _where(path, text, "bots", "path", i)
        entry = _bot_entry(b, i, functools.partial(_where, path, text, "bots", index=i))
        try:
            folder = find_bot_folder(entry.path, path.parent).resolve()
            spec = load_bot(folder)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None
        spec = dataclasses.replace(spec, name=entry.name or spec.name,
                                   runner=entry.runner or spec.runner)
        if any(x.name == spec.name for x in bots):
            raise ConfigError(f"{where}: two bots are named {spec.name!r}; give one a "
                              "different name = \"...\"")
        bots.append(spec)
    base = Path.cwd() if "gauntlet" in flags else path.parent
    known = {b.name for b in bots}
    gauntlet = [_challenger(g, bots, base, origin("gauntlet")) for g in lad.gauntlet]
    joined = tuple(b.name for b in bots if b.name not in known)
    cluster = lad.cluster
    if cluster is not None:
        from ..cluster.executor import check_address

        cluster = check_address(cluster, origin("cluster"))
    return LadderConfig(
        name=lad.name or path.stem, preset=lad.preset, ruleset=ruleset, boards=lad.boards,
        seed=lad.seed, concurrency=lad.concurrency, time_control=tc, bots=tuple(bots),
        results=(path.parent / lad.results) if isinstance(lad.results, str) else None,
        docker_limits=docker_limits,
        source=str(path), gauntlet=tuple(dict.fromkeys(gauntlet)), check=lad.check,
        max_forfeits=lad.max_forfeits, joined=joined,
        versions={b.name: version_of(b) for b in bots}, on_change=lad.on_change,
        cluster=cluster, fork_server=lad.fork_server)


def _challenger(value: str, bots: list[BotSpec], base: Path, where: str) -> str:
    """The name of the gauntlet challenger ``value``: a bot of the ladder by name, or a bot
    folder (its ``bot.toml`` too) relative to ``base``, or an example bot's name
    (:func:`arena.bots.resources.find_bot_folder`): a bot of the ladder if it is one's
    folder, else that bot, added to ``bots``.

    Raises:
        ConfigError: neither a bot of the ladder nor a bot folder, a bad bot folder, or a
            bot whose name another bot of the ladder has.
    """
    names = [b.name for b in bots]
    if value in names:
        return value
    try:
        folder = find_bot_folder(value, base).resolve()
    except ConfigError:
        known = example_bot_names()
        raise ConfigError(f"{where}: gauntlet challenger {value!r} is neither a bot of this "
                          f"ladder ({', '.join(names)}) nor a bot folder nor an example bot "
                          f"({', '.join(known) or 'none'})") from None
    same = next((b for b in bots if b.folder.resolve() == folder), None)
    if same is not None:
        return same.name
    try:
        spec = load_bot(folder)
    except ConfigError as e:
        raise ConfigError(f"{where}: gauntlet challenger {value!r}: {e}") from None
    if spec.name in names:
        raise ConfigError(f"{where}: gauntlet challenger {value!r} is named {spec.name!r}, "
                          "like another bot of this ladder from another folder; give it "
                          "another name in its bot.toml, or add it to the ladder file as a "
                          "[[bots]] entry with name = \"...\"")
    bots.append(spec)
    return spec.name
