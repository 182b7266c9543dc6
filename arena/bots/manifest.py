"""Bot folders and their manifests: ``bot.toml`` read into a :class:`BotSpec`.

A bot folder holds ``bot.toml``::

    name = "heuristic"          # required: see arena.core.names (letters, digits, '-', '_', '.')
    version = "1.0"             # optional, default "0"
    language = "python"         # informative, except "stdio": run through the stdio bridge
                                # (one not in LANGUAGES is warned of: language_warning)
    run = "{python} bot.py"     # required: run from the folder; {python} is our Python
    build = "go build -o bot ." # optional: run once before the first game (through sh)
    outputs = ["bot"]           # with build: what it writes (files or folders), never
                                # part of the version, never uploaded or sent to workers

    [limits]                    # optional
    memory_mb = 4096            # address space, MiB (default 2048, at most MAX_MEMORY_MB)

``run`` is split into words like a shell would (quotes work) and executed directly, not
through a shell: no pipes, redirections, ``$VARIABLES`` or ``VAR=value`` prefixes (write
``env VAR=value prog`` or ``sh -c '...'``); ``build`` is a shell command line. How a bot
is built and run is the sandbox's (:mod:`arena.sandbox.local`, :mod:`arena.sandbox.docker`).
"""

from __future__ import annotations

import difflib
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError, ValidationInfo, field_validator

from ..core.config import Problem, Table, decode_toml, first_problem
from ..core.names import name_problem, toml_key_line
from ..errors import ConfigError

MANIFEST = "bot.toml"
STDIO = "stdio"
"""The language of a bot that reads JSON turns on stdin and writes JSON actions on stdout."""
LANGUAGES = ("python", "go", "node", "typescript", "javascript", "java", "kotlin", "cpp", "c",
             "csharp", "rust", "ruby", "php", STDIO)
"""The ``language`` values the arena knows: those of the starters (`moon new-bot --lang`),
of the example bots, and of the gRPC languages docs/protocol.md names. The language is
informative, except :data:`STDIO`; another value gets a warning
(:func:`language_warning`), never a refusal."""

DEFAULT_MEMORY_MB = 2048
"""A local bot's address-space limit (RLIMIT_AS) unless its ``bot.toml`` sets one, MiB."""
MAX_MEMORY_MB = 16384
"""The most address space a ``bot.toml`` may ask for (``[limits] memory_mb``), MiB: 16 GiB.
A JVM or a .NET runtime reserves far more address space than it uses; this bounds it."""
MIN_MEMORY_MB = 64
"""The least a ``bot.toml`` may set, MiB (below it not even an interpreter starts)."""

_RUN_KEYS = ("name", "version", "language", "run", "build", "outputs", "runner", "limits")
_DOCKER_KEYS = ("image", "dockerfile", "host_runtime")
MANIFEST_KEYS = frozenset(_RUN_KEYS + _DOCKER_KEYS)
LIMIT_KEYS = ("memory_mb",)
"""The keys of a ``bot.toml``'s ``[limits]`` table."""
SHELL_WORDS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "&>",
                         "|&", "<<", "(", ")"})
"""Words of a ``run`` command that only a shell understands (``run`` has no shell)."""
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
    outputs: tuple[str, ...] = ()
    """What ``build`` writes, relative to the folder (files, or folders with all in them):
    never part of the version (:func:`arena.bots.versions.version_files`)."""
    runner: str = "local"
    """``local`` (a process) or ``docker`` (a container)."""
    extra: dict[str, Any] = field(default_factory=dict)
    memory_mb: int | None = None
    """The address-space limit its ``bot.toml`` asks for (``[limits] memory_mb``), MiB; None
    for the runner's default (:data:`DEFAULT_MEMORY_MB`)."""

    def command(self) -> list[str]:
        """The run command as argv, with ``{python}`` filled in. A ``stdio`` bot's command
        runs under the stdio bridge (:mod:`arena.sandbox.stdio_bridge`), which speaks gRPC
        for it."""
        argv = [sys.executable if w == "{python}" else w for w in shlex.split(self.run)]
        if self.language == STDIO:
            argv = [sys.executable, "-m", "arena.sandbox.stdio_bridge", "--name", self.name,
                    "--version", self.version, "--", *argv]
        return argv


def load_bot(path: str | Path) -> BotSpec:
    """Read a bot folder (or its ``bot.toml``).

    Raises:
        ConfigError: no such folder, no manifest, not TOML (or not UTF-8, or nested too
            deeply to parse), a missing/invalid or unknown field (a name that
            :func:`arena.core.names.check_name` refuses, a ``run`` with shell syntax, limits
            above the arena's maximum); one line naming the file, the line and the field.
    """
    p = Path(path)
    manifest = p if p.name == MANIFEST else p / MANIFEST
    if not manifest.parent.is_dir():
        raise ConfigError(f"bot {str(path)!r}: no such folder")
    if not manifest.is_file():
        raise ConfigError(f"bot {str(path)!r}: no {MANIFEST} in {manifest.parent} "
                          "(see the README's 'Write a bot', or `moon new-bot`)")
    try:
        raw = manifest.read_bytes()
    except OSError as e:
        raise ConfigError(f"{manifest}: cannot be read: {e}") from None
    text, data = decode_toml(raw, manifest)
    try:
        m = _Manifest.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_manifest_problem(first_problem(e), manifest, text)) from None
    return BotSpec(
        name=m.name, folder=manifest.parent.resolve(), run=m.run, version=str(m.version),
        language=m.language.strip().lower(), build=m.build, outputs=m.outputs,
        runner=m.runner, extra={k: v for k, v in data.items() if k not in _RUN_KEYS},
        memory_mb=m.limits.memory_mb if m.limits else None,
    )


def _manifest_problem(problem: Problem, manifest: Path, text: str) -> str:
    """The one line of a refused ``bot.toml``: its file and line, then what is wrong."""
    table, key = ("limits", str(problem.loc[1])) if problem.loc[0] == "limits" \
        and len(problem.loc) > 1 else ("", str(problem.loc[0]))
    line = toml_key_line(text, key, table)
    where = f"{manifest}:{line}" if line else str(manifest)
    if problem.kind == "missing":
        return f"{manifest}: the field {key!r} is required (a string)"
    if problem.kind == "extra_forbidden" and table:
        return (f"{where}: unknown key {key!r} in [limits]; known: "
                f"{', '.join(LIMIT_KEYS)}")
    if problem.kind == "extra_forbidden":
        close = difflib.get_close_matches(key, MANIFEST_KEYS, n=1)
        return (f"{where}: unknown key {key!r}"
                + (f" (did you mean {close[0]!r}?)" if close else "")
                + f"; a bot.toml has {', '.join(_RUN_KEYS)}, and for Docker "
                f"{', '.join(_DOCKER_KEYS)}")
    return f"{where}: {problem.message}"


class _Limits(Table):
    """A ``bot.toml``'s ``[limits]``."""

    memory_mb: int | None = None

    @field_validator("memory_mb", mode="before")
    @classmethod
    def _memory(cls, mb: object) -> object:
        if not isinstance(mb, int) or isinstance(mb, bool) or mb < MIN_MEMORY_MB:
            raise ValueError(f"memory_mb = {mb!r}: must be a whole number of MiB from "
                             f"{MIN_MEMORY_MB} to {MAX_MEMORY_MB}")
        if mb > MAX_MEMORY_MB:
            raise ValueError(f"memory_mb = {mb} is above the arena's maximum of "
                             f"{MAX_MEMORY_MB} MiB of address space; ask for less (a JVM "
                             "needs far less with -Xmx, see docs/sandbox.md)")
        return mb


class _Manifest(Table):
    """A ``bot.toml``: its fields in the order their problems are reported."""

    name: str
    run: str
    build: str = ""
    language: str = ""
    runner: str = "local"
    version: str | int | float = "0"
    limits: _Limits | None = None
    outputs: tuple[str, ...] = ()
    image: Any = None
    """The Docker keys: read by :func:`arena.sandbox.docker.docker_options`."""
    dockerfile: Any = None
    host_runtime: Any = None

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, v: object) -> object:
        problem = name_problem(v)
        if problem:
            raise ValueError(f"name {problem}")
        return v

    @field_validator("run", mode="before")
    @classmethod
    def _run(cls, v: object) -> object:
        if not isinstance(v, str) or not v.strip():
            raise ValueError("the field 'run' must be a non-empty string")
        problem = run_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("build", "language", "runner", mode="before")
    @classmethod
    def _string(cls, v: object, info: ValidationInfo) -> object:
        if not isinstance(v, str):
            raise ValueError(f"the field {info.field_name!r} must be a string (in quotes), "
                             f"not {v!r}"[:300])
        if info.field_name == "runner" and v not in ("local", "docker"):
            raise ValueError(f"runner {v!r} must be 'local' or 'docker'")
        return v

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, v: object) -> object:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise ValueError(f"the field 'version' must be a string such as \"1.0\", "
                             f"not {v!r}"[:300])
        return v

    @field_validator("limits", mode="before")
    @classmethod
    def _table(cls, v: object) -> object:
        if not isinstance(v, dict):
            raise ValueError("limits must be a table, e.g. [limits] then memory_mb = 4096")
        return v

    @field_validator("outputs", mode="before")
    @classmethod
    def _outputs(cls, value: object, info: ValidationInfo) -> tuple[str, ...]:
        """The paths ``build`` writes, relative to the folder, without a trailing ``/``:
        a list of relative paths in the folder, never ``bot.toml``, only with a build."""
        example = 'e.g. outputs = ["bot"] or outputs = ["build/"]'
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"outputs must be a list of paths in quotes, {example}, "
                             f"not {value!r}"[:300])
        if not info.data.get("build"):
            raise ValueError("outputs lists what the 'build' command writes, and this "
                             "bot.toml has no build: remove outputs, or add the build")
        out: list[str] = []
        for v in value:
            rel = v.strip().strip("/")
            parts = rel.split("/")
            if (not rel or v.strip().startswith("/") or ".." in parts or "." in parts
                    or "" in parts):
                raise ValueError(f"outputs entry {v!r} must be a path inside the bot's "
                                 f"folder, relative to it ({example})")
            if rel == MANIFEST:
                raise ValueError(f"outputs cannot hold {MANIFEST} (the build must not "
                                 "write the manifest)")
            out.append(rel)
        return tuple(out)


def language_warning(spec: BotSpec) -> str | None:
    """A one-line warning for a ``language`` the arena does not know (a typo such as
    "pyton", or "stdi0" for "stdio", which would run the bot without the stdio bridge),
    naming the known ones (:data:`LANGUAGES`) and that the language is informative only;
    None for a known language or none at all. `moon bot check` shows it as a ``warn``
    item, a competition host in the version's build and validation log.

    >>> from pathlib import Path
    >>> print(language_warning(BotSpec("b", Path("/nowhere"), "./bot", language="pyton"))
    ...       .split(";")[0])
    bot.toml: language 'pyton' is unknown (did you mean 'python'?)
    >>> language_warning(BotSpec("b", Path("/nowhere"), "./bot", language="rust")) is None
    True
    """
    lang = spec.language
    if not lang or lang in LANGUAGES:
        return None
    try:
        line = toml_key_line((spec.folder / MANIFEST).read_text(), "language")
    except (OSError, UnicodeDecodeError):
        line = None
    close = difflib.get_close_matches(lang, LANGUAGES, n=1)
    return (f"{MANIFEST}{f':{line}' if line else ''}: language {lang!r} is unknown"
            + (f" (did you mean {close[0]!r}?)" if close else "")
            + f"; it is informative only, except {STDIO!r} (run through the stdio bridge), "
            f"so the bot runs as its 'run' says; known: {', '.join(LANGUAGES)}")


def run_problem(run: str) -> str | None:
    """Why a ``run`` command cannot work as written, or None. ``run`` is not given to a
    shell: it is split into words (:func:`shlex.split`) and executed, so shell syntax in it
    (a pipe, a redirection, ``&&``, a ``VAR=value`` prefix, ``$VAR``) would reach the program
    as arguments, or name a program that does not exist."""
    try:
        words = shlex.split(run)
    except ValueError as e:
        return f"run = {run!r}: cannot be split into words ({e})"
    fix = (f"run is not passed to a shell; write run = \"sh -c '{run}'\", or put the "
           "command in a script")
    shell = [w for w in words if w in SHELL_WORDS or re.fullmatch(r"[0-9]?[<>].*", w)]
    if shell:
        return f"run = {run!r} has the shell syntax {shell[0]!r}: {fix}"
    if words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        return (f"run = {run!r} starts with the variable {words[0]!r}: write run = "
                f"\"env {run}\" (run is not passed to a shell)")
    if any(w.startswith("$") for w in words):
        return f"run = {run!r} uses a shell variable: {fix}"
    return None


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

    memory_mb: int = DEFAULT_MEMORY_MB
    """Address-space limit, MiB; a bot's ``[limits] memory_mb`` replaces it."""
    cpu_s: int = 600
    """CPU seconds for the whole game."""
    open_files: int = 256


__all__ = ["LANGUAGES", "MANIFEST", "STDIO", "BotSpec", "Limits", "language_warning", "load_bot",
           "missing_command", "run_problem"]
