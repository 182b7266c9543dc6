"""Run a bot in a Docker container: one fresh, locked-down container per seat and game.

Every container gets no network at all (``network_mode="none"``); the referee is reached
through its Unix socket, whose folder is bind-mounted at ``/run/moon``. The root filesystem
is read-only with a small tmpfs ``/tmp``; the bot runs as ``nobody`` (65534) with every
capability dropped and ``no-new-privileges``; memory (RAM and swap alike), CPU and the
number of processes are capped (:class:`DockerLimits`); ``docker-init`` is PID 1 and reaps.
Containers are labelled ``moon-arena=1`` (plus match, seat, bot and owner) and always
removed after the game; :func:`cleanup_stale` removes the ones a crashed runner left.

Which image:

- no ``image`` nor ``dockerfile`` in the manifest: the **base image** (:data:`BASE_IMAGE`),
  an empty root filesystem that :func:`ensure_base_image` imports from a tiny tarball built
  in memory (no registry needed). The host's runtime is bind-mounted into it read-only:
  ``/usr`` (and ``/bin``, ``/lib``... as the host has them), this Python's prefix and
  virtualenv, and the Moon SDK; the bot's folder is mounted read-only at ``/bot``. So the
  bot runs exactly as it would locally (``{python}`` is this interpreter), but sees nothing
  else of the host: not the other bots, not the project, not ``/root`` or ``/home``.
- ``image = "..."``: that image as the runtime (pulled by the build stage if the engine
  does not have it); the bot's folder is mounted read-only at ``/bot``, the working folder.
- ``dockerfile = "Dockerfile"``: built from the bot's folder by :func:`build_image`, with a
  time limit, no network by default, and its log kept; the image holds the bot, which runs
  from the image's ``WORKDIR`` (nothing of the host is mounted but the socket).

With an image of its own a bot's ``run`` is run inside it (``{python}`` is ``python3``
there); ``host_runtime = true`` mounts the host runtime into it too (the image then needs
nothing but the bot's files, and ``{python}`` is this interpreter).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import io
import logging
import os
import re
import secrets
import shlex
import socket
import stat
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import docker
import docker.errors
import docker.utils
from docker.types import LogConfig, Ulimit
from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, field_validator

from ..bots.manifest import BotSpec
from ..core.config import Table, first_problem, unknown_keys
from ..core.text import clean
from ..errors import BotError, ConfigError, InfrastructureError
from .containment import cgroup_of, runqueue_wait_s, throttled_s
from .local import LOG_TAIL_BYTES, BuildOutput

log = logging.getLogger("arena.sandbox")

LABEL = "moon-arena"
"""Every container and image the sandbox makes has this label (value ``1``)."""
BASE_IMAGE = "moon-arena/base:1"
"""The empty-rootfs image for bots that run on the host's runtime (bump the tag when
:func:`_base_tarball` changes)."""
SOCKET_DIR = "/run/moon"
"""Where the referee's socket folder is mounted inside a container."""
BOT_DIR = "/bot"
"""Where a bot's folder is mounted (unless its image was built from it)."""
OUT_OF_MEMORY = "out_of_memory"
"""The exit detail :meth:`DockerProcess.exit_detail` gives for an OOM-killed container."""

MANIFEST_KEYS = ("image", "dockerfile", "host_runtime")
"""The keys of ``bot.toml`` that this module reads (from ``BotSpec.extra``)."""


class SandboxError(InfrastructureError):
    """The sandbox itself failed (no engine, an engine error): an infrastructure fault,
    never the bot's. A game that hits it is aborted, not scored."""


class BuildError(BotError):
    """A bot's image could not be built or found; the bot is left out. ``log`` is the
    build's output (also in the message's tail); ``hint`` what to do, when it is not to
    fix the build (None)."""

    def __init__(self, bot: str, reason: str, build_log: str = "",
                 hint: str | None = None) -> None:
        self.hint = hint
        tail = clean(build_log[-2000:])
        super().__init__(f"bot {bot}: {reason}" + (f"\n{tail}" if tail.strip() else ""))
        self.bot = bot
        self.reason = reason
        self.log = build_log


@dataclass(frozen=True)
class DockerLimits:
    """Limits of a bot's container (and of its image build). The defaults are safe for an
    untrusted bot and roomy for an honest one."""

    memory_mb: int = 1024
    """RAM cap, MiB; swap is capped to the same total, so there is none beyond it."""
    cpus: float = 1.0
    """CPU share (``nano_cpus``): 1.0 is one core."""
    pids: int = 256
    """Processes and threads in the container (a fork bomb stops here)."""
    tmp_mb: int = 64
    """Size of the writable tmpfs at ``/tmp`` (the rest of the filesystem is read-only)."""
    open_files: int = 1024
    """RLIMIT_NOFILE."""
    log_mb: int = 1
    """Cap of the container's captured stdout+stderr (the game record keeps the tail)."""
    user: str = "65534:65534"
    """uid:gid the bot runs as (``nobody``); never root."""
    build_timeout_s: float = 600.0
    """Time limit of an image build (or pull)."""
    build_network: str = "none"
    """Network of the build's RUN steps: ``none`` (safe default) or ``bridge`` (a bot
    that downloads its dependencies while building)."""
    build_memory_mb: int = 2048
    """RAM cap of each build step."""
    build_cpu_shares: int = 256
    """CPU weight of each build step (Docker's ``cpushares``; a container's default is
    1024): under contention a build gets a quarter of what a bot's container gets, so a
    build that burns every core (a hostile one may, for its whole time limit) does not
    take the time of the games' bots, which play on the clock. With the cores idle a
    build still uses them all."""
    pull: frozenset[str] | None = None
    """The images a bot's ``image = "..."`` may make the engine pull when it lacks them:
    None, any (a local ladder: the user named them); a set, only those (the competition
    host: ``frozenset()`` by default, so it pulls nothing its organiser did not list)."""

    def __post_init__(self) -> None:
        _validate(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DockerLimits:
        """From a dict (a ladder file's ``[sandbox]`` table), the defaults for the keys it
        lacks; ``pull`` may be a list.

        Raises:
            ConfigError: unknown keys or bad values.
        """
        table = _validate({**dataclasses.asdict(cls()), **data})
        return cls(**{k: getattr(table, k) for k in data})


def _above_zero(kind: type) -> Any:
    """A number of ``kind`` (an int for a float too) above 0, never a bool."""
    kinds = (int, float) if kind is float else (kind,)

    def check(v: object, info: ValidationInfo) -> object:
        number = v if isinstance(v, kinds) and not isinstance(v, bool) else None
        if not isinstance(number, int | float) or number <= 0:
            raise ValueError(f"docker limit {info.field_name}={v!r}: must be {kind.__name__} "
                             "above 0")
        return v
    return BeforeValidator(check)


_Int = Annotated[int, _above_zero(int)]
_Float = Annotated[float, _above_zero(float)]


class _LimitsTable(Table):
    """The rules of :class:`DockerLimits` (every field given)."""

    memory_mb: _Int
    cpus: _Float
    pids: _Int
    tmp_mb: _Int
    open_files: _Int
    log_mb: _Int
    user: str
    build_timeout_s: _Float
    build_network: str
    build_memory_mb: _Int
    build_cpu_shares: _Int
    pull: frozenset[str] | None = Field(strict=False)

    @field_validator("memory_mb")
    @classmethod
    def _memory(cls, v: int) -> int:
        if v < 16:
            raise ValueError(f"docker limit memory_mb={v}: at least 16 MiB")
        return v

    @field_validator("user", mode="before")
    @classmethod
    def _user(cls, v: object) -> object:
        if not isinstance(v, str) or not re.fullmatch(r"[1-9][0-9]*(:[0-9]+)?", v):
            raise ValueError(f"docker limit user={v!r}: give a non-root 'uid:gid'")
        return v

    @field_validator("build_network", mode="before")
    @classmethod
    def _network(cls, v: object) -> object:
        if v not in ("none", "bridge", "default"):
            raise ValueError(f"docker limit build_network={v!r}: none, bridge or default")
        return v

    @field_validator("pull", mode="before")
    @classmethod
    def _pull(cls, v: object) -> object:
        if v is not None and (not isinstance(v, list | set | frozenset)
                              or not all(isinstance(x, str) for x in v)):
            raise ValueError(f"docker limit pull={v!r}: give a list of image names")
        return v


def _validate(data: dict[str, Any]) -> _LimitsTable:
    """Check whole Docker limits (every field). Raises ConfigError: the first problem."""
    try:
        return _LimitsTable.model_validate(data)
    except ValidationError as e:
        unknown = unknown_keys(e)
        if unknown:
            known = sorted(_LimitsTable.model_fields)
            raise ConfigError(f"unknown docker limit(s): {', '.join(unknown)}; "
                              f"known: {', '.join(known)}") from None
        raise ConfigError(first_problem(e).message) from None


# -- the engine -----------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _shared_client() -> docker.DockerClient:
    return docker.from_env(timeout=120, max_pool_size=64)


def client() -> docker.DockerClient:
    """A client of the engine at ``DOCKER_HOST`` (or the default socket), checked alive.

    Raises:
        SandboxError: no engine answers.
    """
    try:
        c = _shared_client()
        c.ping()
        return c
    except docker.errors.DockerException as e:
        _shared_client.cache_clear()
        where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        raise SandboxError(f"no Docker engine reachable at {where} ({e}); start one, e.g. "
                           "scripts/docker-up.sh") from None
    except Exception as e:  # noqa: BLE001 - requests/urllib3 errors of a dead socket
        _shared_client.cache_clear()
        raise SandboxError(f"the Docker engine does not answer: {e}") from None


def engine_problem() -> str | None:
    """Why Docker bots cannot run here, or None when an engine answers."""
    try:
        client()
    except SandboxError as e:
        return str(e)
    return None


def _owner() -> str:
    """``host:pid:start-time`` of this process, to tell a live runner from a dead one."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def _start_time(pid: int) -> str:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[19]  # field 22 of stat: start time in clock ticks since boot
    except (OSError, IndexError):
        return "?"


def _owner_alive(owner: str) -> bool | None:
    """Whether the runner that labelled a container still runs; None if it is not ours to
    judge (another host)."""
    host, _, rest = owner.partition(":")
    pid_s, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid_s.isdigit():
        return None
    pid = int(pid_s)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return started == "?" or _start_time(pid) == started


def cleanup_stale(everything: bool = False, c: docker.DockerClient | None = None) -> int:
    """Remove leftover sandbox containers (label ``moon-arena=1``) whose runner is gone
    (a crashed referee or ladder on this host); with ``everything``, all of them (e.g.
    before stopping the engine). Call it when a referee or ladder starts. Returns how many
    were removed.

    Raises:
        SandboxError: no engine answers.
    """
    c = c or client()
    removed = 0
    try:
        found = c.api.containers(all=True, filters={"label": f"{LABEL}=1"})
    except docker.errors.DockerException as e:
        raise SandboxError(f"cannot list containers: {e}") from None
    for info in found:
        labels = info.get("Labels") or {}
        if not everything and _owner_alive(labels.get(f"{LABEL}.owner", "")) is not False:
            continue
        with contextlib.suppress(docker.errors.NotFound):
            try:
                c.api.remove_container(info["Id"], force=True, v=True)
                removed += 1
            except docker.errors.APIError as e:
                log.warning("cannot remove stale container %s: %s", info["Id"][:12], e)
    return removed


# -- the base image -------------------------------------------------------------------------

_LINKABLE = ("bin", "lib", "lib32", "lib64", "libx32")


def _base_tarball() -> bytes:
    """A root filesystem with nothing in it but mount points, ``/etc/passwd``/``group``
    for root and nobody, and the host's ``/bin``, ``/lib``... symlinks (on a merged-/usr
    host they point into ``usr/``, which is mounted)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(name: str, kind: bytes, mode: int = 0o755, data: bytes = b"",
                link: str = "") -> None:
            ti = tarfile.TarInfo(name)
            ti.type, ti.mode, ti.linkname, ti.size = kind, mode, link, len(data)
            tar.addfile(ti, io.BytesIO(data) if data else None)

        for d in ("usr", "etc", "proc", "sys", "dev", "run", "sbin", "bot", "home"):
            add(d, tarfile.DIRTYPE)
        add("tmp", tarfile.DIRTYPE, 0o1777)
        for name in _LINKABLE:
            host = Path("/") / name
            if host.is_symlink():
                add(name, tarfile.SYMTYPE, 0o777, link=os.readlink(host))
            elif host.is_dir():
                add(name, tarfile.DIRTYPE)
        add("etc/passwd", tarfile.REGTYPE, 0o644,
            b"root:x:0:0:root:/root:/usr/sbin/nologin\n"
            b"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
        add("etc/group", tarfile.REGTYPE, 0o644, b"root:x:0:\nnogroup:x:65534:\n")
    return buf.getvalue()


def ensure_base_image(c: docker.DockerClient | None = None) -> str:
    """Import :data:`BASE_IMAGE` unless the engine has it; returns its name.

    Raises:
        SandboxError: no engine, or the import failed.
    """
    c = c or client()
    try:
        c.images.get(BASE_IMAGE)
        return BASE_IMAGE
    except docker.errors.ImageNotFound:
        pass
    repo, tag = BASE_IMAGE.rsplit(":", 1)
    try:
        c.api.import_image_from_data(_base_tarball(), repository=repo, tag=tag,
                                     changes=[f"LABEL {LABEL}=1", "WORKDIR /bot"])
        c.images.get(BASE_IMAGE)
    except docker.errors.DockerException as e:
        raise SandboxError(f"cannot import the base image {BASE_IMAGE}: {e}") from None
    return BASE_IMAGE


def host_runtime_mounts() -> dict[str, str]:
    """Host paths to bind-mount read-only (at the same path) so a bot can run on the host's
    runtime: ``/usr`` and the real ``/bin``, ``/lib``... folders, the dynamic linker's
    cache, this Python (prefix and virtualenv), the Moon SDK with its generated stubs, and
    the ``arena`` package (for the stdio bridge). Nothing else of the host: not the
    project's other files, not the other bots, not ``/home``.
    Returns ``{host path: container path}``."""
    paths = [Path("/usr")]
    paths += [Path("/") / n for n in _LINKABLE
              if (Path("/") / n).is_dir() and not (Path("/") / n).is_symlink()]
    paths += [Path(p) for p in ("/etc/ld.so.cache", "/etc/ssl/certs")]
    paths += [Path(sys.base_prefix), Path(sys.prefix)]
    for mod in ("moon_sdk",):  # its folder: the SDK's root
        found = importlib.util.find_spec(mod)
        for loc in (found.submodule_search_locations or []) if found else []:
            paths.append(Path(loc).parent)
    paths.append(Path(__file__).resolve().parents[1])  # arena/ itself, not the project
    out: dict[str, str] = {}
    for p in sorted({Path(os.path.abspath(q)) for q in paths}, key=lambda q: len(q.parts)):
        if p.exists() and not any(Path(m) == p or Path(m) in p.parents for m in out):
            out[str(p)] = str(p)
    return out


# -- manifests ------------------------------------------------------------------------------

@dataclass(frozen=True)
class DockerOptions:
    """What a manifest says about its container (``image``, ``dockerfile``,
    ``host_runtime``)."""

    image: str = ""
    dockerfile: str = ""
    host_runtime: bool = True

    @property
    def own_image(self) -> bool:
        """The bot brings its image (named or built)."""
        return bool(self.image or self.dockerfile)


def docker_options(spec: BotSpec) -> DockerOptions:
    """Read and check a bot's Docker keys.

    Raises:
        ConfigError: a bad value (the message names the bot and the key).
    """
    x = spec.extra
    for key in ("image", "dockerfile"):
        if key in x and (not isinstance(x[key], str) or not x[key].strip()):
            raise ConfigError(f"bot {spec.name}: {key!r} must be a non-empty string")
    image, dockerfile = str(x.get("image", "")), str(x.get("dockerfile", ""))
    if image and dockerfile:
        raise ConfigError(f"bot {spec.name}: give 'image' or 'dockerfile', not both")
    if dockerfile:
        path = (spec.folder / dockerfile).resolve()
        if spec.folder.resolve() not in path.parents:
            raise ConfigError(f"bot {spec.name}: dockerfile {dockerfile!r} must be inside "
                              f"the bot's folder {spec.folder}")
    host = x.get("host_runtime", not (image or dockerfile))
    if not isinstance(host, bool):
        raise ConfigError(f"bot {spec.name}: 'host_runtime' must be true or false")
    return DockerOptions(image=image, dockerfile=dockerfile, host_runtime=host)


def image_tag(spec: BotSpec) -> str:
    """The tag :func:`build_image` gives a bot's Dockerfile build (stable per folder and
    name, so a runner finds the image the build stage made)."""
    slug = re.sub(r"[^a-z0-9]+", "-", spec.name.lower()).strip("-") or "bot"
    digest = hashlib.sha1(f"{spec.folder.resolve()}\0{spec.name}".encode()).hexdigest()[:10]
    return f"moon-arena-bot/{slug}-{digest}:latest"


def image_of(spec: BotSpec) -> str:
    """The image a bot's containers run."""
    opts = docker_options(spec)
    return opts.image or (image_tag(spec) if opts.dockerfile else BASE_IMAGE)


def _abortable_api(c: docker.DockerClient, timeout_s: float
                   ) -> tuple[docker.APIClient, Callable[[], None]]:
    """A low-level client of its own, and a function that cuts its streaming responses
    from another thread (shutting the socket down wakes the blocked reader, and the engine
    cancels a build or pull whose client went away)."""
    api = docker.APIClient(**docker.utils.kwargs_from_env(), version=c.api.api_version,
                           timeout=timeout_s)
    responses: list[Any] = []
    post = api._post

    def tracking_post(*args: Any, **kwargs: Any) -> Any:
        r = post(*args, **kwargs)
        responses.append(r)
        return r

    api._post = tracking_post

    def abort() -> None:
        for r in responses:
            with contextlib.suppress(Exception):
                sock = api._get_raw_response_socket(r)
                getattr(sock, "_sock", sock).shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            api.close()

    return api, abort


def _in_thread_with_deadline(fn: Callable[[], None], timeout_s: float,
                             on_timeout: Callable[[], None]) -> bool:
    """Run ``fn`` in a thread; True if it finished within ``timeout_s`` (else call
    ``on_timeout`` to abort it)."""
    t = threading.Thread(target=fn, daemon=True, name="moon-docker-build")
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        on_timeout()
        t.join(10)
        return False
    return True


def dockerfile_images(text: str) -> list[str | None]:
    """The images a Dockerfile builds from (``FROM``, ``COPY --from``), in order, stages
    it names itself and ``scratch`` left out; ``ARG`` defaults given before are filled in,
    and an image still naming a variable is None (the build could name anything)."""
    args: dict[str, str] = {}
    stages: set[str] = set()
    out: list[str | None] = []
    for line in re.sub(r"\\\r?\n", " ", text).splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        op, rest = words[0].upper(), [w for w in words[1:] if not w.startswith("--platform")]
        if op == "ARG" and rest and "=" in rest[0]:
            k, _, v = rest[0].partition("=")
            args[k] = v.strip("\"'")
        names: list[str] = []
        if op == "FROM" and rest:
            names = [rest[0]]
            if len(rest) >= 3 and rest[1].lower() == "as":
                stages.add(rest[2].lower())
        elif op in ("COPY", "ADD"):
            names = [w.split("=", 1)[1] for w in rest if w.startswith("--from=")]
        for name in names:
            name = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), name)
            if name.lower() in stages or name.isdigit() or name == "scratch":
                continue
            out.append(None if "$" in name else name)
    return out


def build_image(spec: BotSpec, limits: DockerLimits | None = None,
                log_path: Path | None = None) -> str:
    """The build stage of a Docker bot: build its Dockerfile (or pull its image if the
    engine lacks it; or import the base image); returns the build log, which is also
    written to ``log_path`` if given.

    Raises:
        BuildError: the build failed or timed out, or the image cannot be had; the bot
            should be left out (a ladder catches it like any ConfigError).
        SandboxError: no engine answers.
        ConfigError: a bad manifest.
    """
    lim = limits or DockerLimits()
    opts = docker_options(spec)
    c = client()
    out = BuildOutput()  # kept to BUILD_LOG_CHARS: a build may print without end
    error: list[str] = []
    written = [0.0]

    def keep(text: str) -> None:
        out.add(text)
        # the log file follows the build, rewritten at most twice a second (each time whole)
        if log_path is not None and time.monotonic() - written[0] >= 0.5:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_text(out.text())
            written[0] = time.monotonic()

    if not opts.own_image:
        ensure_base_image(c)
        keep(f"using the base image {BASE_IMAGE} with the host runtime\n")
        return out.text()
    api, abort = _abortable_api(c, lim.build_timeout_s + 30)

    def consume(chunks: Any) -> None:
        try:
            for chunk in chunks:
                if "stream" in chunk:
                    keep(chunk["stream"])
                elif "status" in chunk:
                    keep(f"{chunk['status']} {chunk.get('progress', '')}".rstrip() + "\n")
                if "error" in chunk:
                    error.append(str(chunk["error"]).strip())
                    keep(f"ERROR: {chunk['error']}\n")
        except Exception as e:  # noqa: BLE001 - a dropped stream: report it as the error
            error.append(str(e))

    try:
        if opts.image:
            try:
                c.images.get(opts.image)
                keep(f"using the image {opts.image}\n")
                return out.text()
            except docker.errors.ImageNotFound:
                pass
            if lim.pull is not None and opts.image not in lim.pull:
                raise BuildError(spec.name, f"the image {opts.image} is not on this host's "
                                 "Docker engine, and the host pulls no image", out.text(),
                                 hint="ask the organiser to add it (or to list it in "
                                 "[runner] images), or name an image the host has")
            keep(f"pulling {opts.image}\n")
            repo, _, tag = opts.image.rpartition(":") if ":" in opts.image.split("/")[-1] \
                else (opts.image, "", "latest")

            def pull() -> None:
                try:
                    consume(api.pull(repo, tag=tag, stream=True, decode=True))
                except docker.errors.DockerException as e:
                    error.append(str(e))
            work = pull
            what = f"pulling the image {opts.image}"
        else:
            if lim.pull is not None:  # the engine would fetch a base image it lacks
                try:
                    text = (spec.folder / opts.dockerfile).read_text(errors="replace")
                except OSError:
                    text = ""  # the build says what is wrong with it
                for base in dockerfile_images(text):
                    if base is not None and base in lim.pull:
                        continue
                    try:
                        if base is None:
                            raise docker.errors.ImageNotFound("a variable")
                        c.images.get(base)
                    except docker.errors.ImageNotFound:
                        raise BuildError(
                            spec.name, f"{opts.dockerfile} builds from "
                            + (f"the image {base}, which is not on this host's Docker "
                               "engine" if base else "an image named by a variable")
                            + ", and the host pulls no image", out.text(),
                            hint="ask the organiser to add it, or build FROM an image the "
                            "host has") from None
            tag = image_tag(spec)
            keep(f"building {tag} from {spec.folder / opts.dockerfile}\n")

            def build() -> None:
                try:
                    consume(api.build(
                        path=str(spec.folder), dockerfile=opts.dockerfile, tag=tag, rm=True,
                        forcerm=True, pull=False, decode=True, network_mode=lim.build_network,
                        labels={LABEL: "1", f"{LABEL}.bot": spec.name},
                        container_limits={"memory": lim.build_memory_mb << 20,
                                          "memswap": lim.build_memory_mb << 20,
                                          "cpushares": lim.build_cpu_shares}))
                except docker.errors.DockerException as e:
                    error.append(str(e))
            work = build
            what = "the build"
        if not _in_thread_with_deadline(work, lim.build_timeout_s, abort):
            keep(f"ERROR: timed out after {lim.build_timeout_s:g} s\n")
            raise BuildError(spec.name, f"{what} timed out after {lim.build_timeout_s:g} s",
                             out.text())
        if error:
            raise BuildError(spec.name, f"{what} failed: {error[-1]}", out.text())
        try:
            c.images.get(image_of(spec))
        except docker.errors.ImageNotFound:
            raise BuildError(spec.name, f"{what} made no image {image_of(spec)}",
                             out.text()) from None
        return out.text()
    finally:
        with contextlib.suppress(Exception):
            api.close()
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_text(out.text())


# -- the process ----------------------------------------------------------------------------

def share_socket(path: str) -> None:
    """Let the container's unprivileged user reach the referee's socket: its folder
    becomes traversable (0711) and the socket connectable (0666). The join token, not the
    file mode, is what guards a seat."""
    sock = Path(path)
    with contextlib.suppress(OSError):
        d = sock.parent
        d.chmod(stat.S_IMODE(d.stat().st_mode) | 0o711)
        sock.chmod(0o666)


def container_config(spec: BotSpec, address: str, token: str, limits: DockerLimits,
                     *, match_id: str = "", seat: int = 0,
                     env: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``containers.create`` arguments for one seat (pure: no engine needed).

    Raises:
        SandboxError: the referee is not on a Unix socket.
        ConfigError: a bad manifest.
    """
    if not address.startswith("unix://"):  # the runner's set-up, not the bot's fault
        raise SandboxError(f"bot {spec.name}: a Docker bot has no network, so the referee "
                           f"must serve on a Unix socket (got {address!r})")
    sock = address[len("unix://"):]
    opts = docker_options(spec)
    if opts.host_runtime:
        argv = spec.command()  # with the stdio bridge for a stdio bot
    elif spec.language == "stdio":
        raise ConfigError(f"bot {spec.name}: a stdio bot in an image of its own needs "
                          "host_runtime = true (the stdio bridge is the arena's)")
    else:
        argv = ["python3" if w == "{python}" else w for w in shlex.split(spec.run)]
    volumes: dict[str, dict[str, str]] = {
        str(Path(sock).parent): {"bind": SOCKET_DIR, "mode": "ro"}}
    if opts.host_runtime:
        volumes.update({h: {"bind": b, "mode": "ro"} for h, b in host_runtime_mounts().items()})
    if not opts.dockerfile:
        volumes[str(spec.folder.resolve())] = {"bind": BOT_DIR, "mode": "ro"}
    environment = dict(env or {})
    environment.update(MOON_ADDRESS=f"unix://{SOCKET_DIR}/{Path(sock).name}",
                       MOON_TOKEN=token, MOON_BOT_NAME=spec.name, PYTHONUNBUFFERED="1",
                       PYTHONDONTWRITEBYTECODE="1", HOME="/tmp")
    mem = f"{limits.memory_mb}m"
    cfg: dict[str, Any] = dict(
        image=image_of(spec), command=argv, environment=environment, volumes=volumes,
        network_mode="none", mem_limit=mem, memswap_limit=mem,
        nano_cpus=int(limits.cpus * 1e9), pids_limit=limits.pids, read_only=True,
        tmpfs={"/tmp": f"rw,nosuid,nodev,size={limits.tmp_mb}m,mode=1777"},
        user=limits.user, cap_drop=["ALL"], security_opt=["no-new-privileges"], init=True,
        ulimits=[Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files)],
        log_config=LogConfig(type="json-file",
                             config={"max-size": f"{limits.log_mb}m", "max-file": "1"}),
        labels={LABEL: "1", f"{LABEL}.match": match_id, f"{LABEL}.seat": str(seat),
                f"{LABEL}.bot": spec.name, f"{LABEL}.owner": _owner()},
        name=f"moon-{re.sub(r'[^A-Za-z0-9_.-]', '-', match_id or 'game')}-s{seat}-"
             f"{secrets.token_hex(3)}",
        stdin_open=False, detach=True)
    if not opts.dockerfile:
        cfg["working_dir"] = BOT_DIR
    return cfg


class DockerProcess:
    """A bot in a fresh container for one game; the same interface as
    :class:`arena.sandbox.local.LocalProcess` (``start``/``poll``/``kill``/``log_tail``/
    ``cpu_wait_s``) plus :meth:`exit_detail`.

    ``start`` and ``kill`` talk to the engine and block (run them in a thread from async
    code); ``poll`` does not: a thread waits for the container's end.
    """

    def __init__(self, spec: BotSpec, address: str, token: str, log_path: str | Path,
                 limits: DockerLimits | None = None, env: dict[str, str] | None = None,
                 *, match_id: str = "", seat: int = 0) -> None:
        self.spec = spec
        self.address = address
        self.token = token
        self.log_path = log_path
        self.limits = limits or DockerLimits()
        self.env = env or {}
        self.match_id = match_id
        self.seat = seat
        self.container_id: str | None = None
        self._rc: int | None = None
        self._oom = False
        self._waiter: threading.Thread | None = None
        self._lock = threading.Lock()
        self._removed = False
        self._cpu_pid: int | None = None
        self._cpu_wait0 = 0.0

    def start(self) -> None:
        """Create and start the container.

        Raises:
            BotError: the bot's image is missing or cannot run (the bot's fault).
            SandboxError: the engine failed (not the bot's fault: abort the game).
        """
        cfg = container_config(self.spec, self.address, self.token, self.limits,
                               match_id=self.match_id, seat=self.seat, env=self.env)
        c = client()
        if cfg["image"] == BASE_IMAGE:
            ensure_base_image(c)
        else:
            try:
                c.images.get(cfg["image"])
            except docker.errors.ImageNotFound:
                raise BotError(f"bot {self.spec.name}: no image {cfg['image']} on the "
                                  "engine: build it first (arena.sandbox.build)") from None
        share_socket(self.address[len("unix://"):])
        os.makedirs(os.path.dirname(self.log_path) or ".", exist_ok=True)
        try:
            container = c.containers.create(**{k: v for k, v in cfg.items() if k != "detach"})
        except docker.errors.ImageNotFound as e:
            raise BotError(f"bot {self.spec.name}: {e}") from None
        except docker.errors.DockerException as e:
            raise SandboxError(f"bot {self.spec.name}: cannot create its container: {e}"
                               ) from None
        self.container_id = container.id
        try:
            c.api.start(container.id)
        except docker.errors.APIError as e:
            why = str(e.explanation or e)
            self._write_log(f"cannot start the container: {why}\n".encode())
            self._remove(c)
            # the run command is missing from the image, or not executable: the bot's fault
            if (e.status_code or 500) < 500 or any(
                    s in why.lower() for s in ("executable file not found", "no such file",
                                               "permission denied")):
                raise BotError(f"bot {self.spec.name}: cannot run {self.spec.run!r} in "
                               f"its container: {why}") from None
            raise SandboxError(f"bot {self.spec.name}: cannot start its container: {why}"
                               ) from None
        except docker.errors.DockerException as e:
            self._remove(c)
            raise SandboxError(f"bot {self.spec.name}: cannot start its container: {e}"
                               ) from None
        self._waiter = threading.Thread(target=self._wait, args=(c, container.id),
                                        daemon=True, name=f"moon-wait-{container.id[:12]}")
        self._waiter.start()
        self._watch_cpu_wait(c, container.id)

    def _watch_cpu_wait(self, c: docker.DockerClient, cid: str) -> None:
        """Find the container's first process on this machine (its pid as the engine
        reports it, checked: that process's cgroup names the container) and read its CPU
        wait now, the zero of :meth:`cpu_wait_s`. Left unmeasured when the engine runs
        elsewhere (another machine, another pid namespace) or the container has ended."""
        with contextlib.suppress(Exception):
            pid = int(c.api.inspect_container(cid)["State"].get("Pid") or 0)
            if pid > 0 and any(cid in path for _, path in cgroup_of(pid)):
                zero = self._raw_cpu_wait(pid)
                if zero is not None:
                    self._cpu_pid, self._cpu_wait0 = pid, zero

    @staticmethod
    def _raw_cpu_wait(pid: int) -> float | None:
        waited = runqueue_wait_s(pid)
        if waited is None:
            return None
        return waited - (throttled_s(pid) or 0.0)

    def cpu_wait_s(self) -> float | None:
        """How long (seconds) the container's processes have waited for a CPU since it
        started (:meth:`start` returned), as a local bot's are measured: the run-queue
        wait of its process tree (:func:`arena.sandbox.containment.runqueue_wait_s`, from
        its first process as this machine's ``/proc`` shows it), less the time its cgroup
        was throttled at its CPU limit (``cpus``: the bot's own budget, not the host's
        slowness). None before its start, after its end, or when unmeasured (an engine
        on another machine or in another pid namespace)."""
        if self._cpu_pid is None:
            return None
        now = self._raw_cpu_wait(self._cpu_pid)
        return None if now is None else max(0.0, now - self._cpu_wait0)

    def _wait(self, c: docker.DockerClient, cid: str) -> None:
        while True:
            try:
                rc = int(c.api.wait(cid, timeout=None)["StatusCode"])
                break
            except docker.errors.NotFound:
                rc = -1
                break
            except Exception:  # noqa: BLE001 - the connection broke: look again
                time.sleep(0.5)
                try:
                    state = c.api.inspect_container(cid)["State"]
                except docker.errors.NotFound:
                    rc = -1
                    break
                except Exception:  # noqa: BLE001
                    continue
                if not state.get("Running"):
                    rc = int(state.get("ExitCode", -1))
                    break
        oom = False
        with contextlib.suppress(Exception):
            oom = bool(c.api.inspect_container(cid)["State"].get("OOMKilled"))
        with self._lock:
            self._oom = oom
            self._rc = rc

    def poll(self) -> int | None:
        """The container's exit code, or None while it runs (never blocks)."""
        with self._lock:
            return self._rc

    def exit_detail(self) -> str:
        """``"out_of_memory"`` when the container was OOM-killed, else ``""``."""
        with self._lock:
            return OUT_OF_MEMORY if self._oom else ""

    def kill(self) -> None:
        """Kill the container (SIGKILL to everything in it), keep its output in
        ``log_path``, and remove it. Safe to call twice, or before :meth:`start`."""
        if self.container_id is None or self._removed:
            return
        try:
            c = client()
        except SandboxError:
            log.warning("container %s left behind: no engine (cleanup_stale removes it)",
                        self.container_id[:12])
            return
        cid = self.container_id
        with contextlib.suppress(docker.errors.APIError):
            c.api.kill(cid)  # 409 if it already stopped
        if self._waiter is not None:
            self._waiter.join(15)
        try:
            self._write_log(c.api.logs(cid, stdout=True, stderr=True))
        except docker.errors.DockerException as e:
            self._write_log(f"[cannot read the container's output: {e}]\n".encode())
        self._remove(c)

    def _remove(self, c: docker.DockerClient) -> None:
        assert self.container_id is not None
        for attempt in range(5):
            try:
                c.api.remove_container(self.container_id, force=True, v=True)
                self._removed = True
                return
            except docker.errors.NotFound:
                self._removed = True
                return
            except docker.errors.APIError as e:
                if attempt == 4:
                    log.warning("cannot remove container %s: %s", self.container_id[:12], e)
                time.sleep(0.2 * (attempt + 1))

    def _write_log(self, data: bytes) -> None:
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(self.log_path) or ".", exist_ok=True)
            with open(self.log_path, "wb") as f:
                f.write(data)

    def log_tail(self) -> str:
        """The end of the container's stdout and stderr (at most LOG_TAIL_BYTES)."""
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
