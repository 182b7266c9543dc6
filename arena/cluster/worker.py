"""What runs on a Dask worker: one game, as one task (:func:`play_task`).

The task gets a :class:`GameJob` — the client's :class:`~arena.executor.local.GameRequest` and,
for each bot, the version (hash) of its folder — and the bots' artifacts, by version, as
the task's Dask dependencies (the client scatters each once; Dask moves it to a worker
with the task's first game there and keeps it in that worker's memory while the run
lasts). It returns a :class:`GameOutcome`. On the worker it:

1. finds each bot's version in the worker's cache (:class:`~arena.cluster.artifacts
   .BotCache`), unpacking the artifact only when the cache lacks it, and checks its hash
   before use;
2. builds the bot there when it needs a build (its ``build`` command once per version;
   a Docker bot's image when the engine lacks it);
3. marks the game started (a Dask ``Event`` named after the game): when a worker dies,
   Dask runs its tasks again elsewhere, and a task that finds its game already started
   plays nothing: it reports the game as interrupted, which the client turns into an
   :class:`~arena.errors.InfrastructureError` (voided, replayed under another id, never
   rated);
4. plays the game with the worker's warm runner (:class:`arena.cluster.warm.WarmRunner`:
   one :class:`~arena.executor.local.LocalExecutor` for the worker's lifetime, its
   referee on a Unix socket, its fork server; fresh bot processes or containers of this
   machine for each game), aborting it if the client stops (the session's stop
   ``Event``);
5. returns the result with the record and the seat logs as bytes: the client writes
   them. Nothing of the game stays on the worker.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..bots.manifest import BotSpec
from ..errors import ArenaError, BotError, ConfigError, InfrastructureError
from ..executor.local import FinishedGame, GameRequest
from .artifacts import BotCache, default_cache

log = logging.getLogger("arena.cluster")

@dataclass(frozen=True)
class GameJob:
    """One game for a worker."""

    request: GameRequest
    """As the client made it (its bots' folders are the client's)."""
    versions: tuple[str, ...]
    """Each seat's bot version (:func:`arena.bots.versions.bot_version` of its folder, a sha256
    hex digest), seat 0 first: the artifact the seat runs."""
    started_event: str
    """The Dask Event set when the game starts (see the module's docstring)."""
    stop_event: str
    """The Dask Event the client sets when it stops: a game still playing is aborted."""
    arena_version: str = __version__
    """The client's ``arena.__version__``: a worker running another refuses the game."""


@dataclass
class GameOutcome:
    """What a worker sends back for one game."""

    worker: str
    """The worker's address."""
    finished: FinishedGame | None = None
    """The game's result (its request's bots as the worker ran them; no record path)."""
    infrastructure_error: str = ""
    """Why the game could not be played through no bot's fault (void it, replay it)."""
    config_error: str = ""
    """Why the request itself is wrong (the caller's error)."""
    record: bytes | None = None
    """The game record's JSON (:mod:`arena.records.record`), when one was written."""
    logs: dict[int, bytes] = field(default_factory=dict)
    """Each seat's log (what :class:`~arena.sandbox.local.LocalProcess` kept), by seat."""
    fetched: int = 0
    """Artifacts this game had to unpack into the worker's cache (0: every bot was there
    already)."""


_cache_lock = threading.Lock()
_caches: dict[Path, BotCache] = {}


def _cache() -> BotCache:
    root = default_cache()
    with _cache_lock:
        return _caches.setdefault(root, BotCache(root))


def prepare(spec: BotSpec, version: str, artifact: bytes, cache: BotCache
            ) -> tuple[BotSpec, int]:
    """``spec`` as it runs on this worker: its folder the cached, verified ``version``
    (unpacked from ``artifact``, a :func:`~arena.cluster.artifacts.pack_folder` tarball,
    when the cache lacks it). Returns the spec and how many artifacts were unpacked (0 or
    1).

    Raises:
        InfrastructureError: the artifact cannot be unpacked or is not ``version``, or
            the bot cannot be built here (it was built where the run started, so this
            machine lacks something: a toolchain, a Docker engine).
    """
    before = cache.fetched
    with cache.lock(version):
        folder = cache.ensure(version, lambda: artifact)
        local = dataclasses.replace(spec, folder=folder)
        try:
            if local.runner == "docker":
                _ensure_image(local)
            else:
                from ..sandbox.stamps import ensure_built

                ensure_built(local)
        except ArenaError as e:
            raise InfrastructureError(f"bot {spec.name} cannot be built on this worker: "
                                      f"{str(e).splitlines()[0]}") from None
    return local, cache.fetched - before


def _ensure_image(spec: BotSpec) -> None:
    """A Docker bot's image on this worker's engine: built (or pulled, or the base image
    imported) unless the engine has it. A Dockerfile's image is tagged after the cached
    folder, which is named by version: an image with that tag is that version's."""
    from ..sandbox import build as build_stage
    from ..sandbox.docker import BASE_IMAGE, client, image_of

    image = image_of(spec)
    if image != BASE_IMAGE:
        import docker.errors

        with contextlib.suppress(docker.errors.ImageNotFound):
            client().images.get(image)
            return
    build_stage(spec, docker_limits=None)


def _worker_address() -> str:
    with contextlib.suppress(Exception):
        from distributed import get_worker

        return str(get_worker().address)
    return "?"


def play_task(job: GameJob, artifacts: dict[str, bytes]) -> GameOutcome:
    """Play ``job`` on this worker (the Dask task of :class:`~arena.cluster.DaskExecutor`);
    ``artifacts`` holds the bots' tarballs by version (the task's dependencies).
    Never raises for the game's own outcomes: they are in the returned
    :class:`GameOutcome`."""
    from distributed import Event

    from ..sandbox.containment import cleanup_stale_once
    from .warm import warm_runner

    request = job.request
    out = GameOutcome(worker=_worker_address())
    if job.arena_version != __version__:
        out.config_error = (f"worker {out.worker} runs moon-arena {__version__}, the client "
                            f"{job.arena_version}: install the same version on every worker")
        return out
    cleanup_stale_once()  # what a killed worker of this machine left behind
    cache = _cache()
    try:
        bots = []
        for spec, version in zip(request.bots, job.versions, strict=True):
            local, fetched = prepare(spec, version, artifacts[version], cache)
            bots.append(local)
            out.fetched += fetched
    except InfrastructureError as e:
        out.infrastructure_error = f"game {request.game_id} on worker {out.worker}: {e}"
        return out
    started = Event(job.started_event)
    if started.is_set():
        out.infrastructure_error = (
            f"game {request.game_id}: the worker playing it left the cluster mid-game "
            "(it died or was stopped)")
        return out
    started.set()
    here = dataclasses.replace(request, bots=tuple(bots))
    stop = Event(job.stop_event)
    try:
        played = warm_runner().play(here, lambda: _is_set(stop))
        out.finished, out.record, out.logs = played.finished, played.record, played.logs
        if played.error is not None:
            raise played.error
    except InfrastructureError as e:
        out.infrastructure_error = f"{e} (on worker {out.worker})"
    except (ConfigError, BotError) as e:
        out.config_error = str(e)
    return out


def _is_set(stop: Any) -> bool:
    """Whether the client has stopped (the Dask Event ``stop`` is set); True when the
    scheduler does not answer: nobody would take the game's result."""
    try:
        return bool(stop.is_set())
    except Exception:
        log.warning("the scheduler does not answer: aborting the game")
        return True


__all__ = ["GameJob", "GameOutcome", "play_task", "prepare"]
