"""Running a competition folder: :func:`open_host` and :func:`serve` (``moon host run``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from .address import bind, parse_address  # noqa: F401 (parse_address: run.py's name too)
from .db import database_url, make_engine, migrate
from .lock import HostLock
from .service import Host
from .settings import load_settings, short_seed_warning

log = logging.getLogger("arena.host")


def open_host(folder: Path, database: str | None = None, *, recover: bool = True,
              cluster: str | None = None) -> tuple[Host, dict[str, int]]:
    """Read the competition in ``folder``, take its locks (:class:`HostLock`: one host per
    competition and per database; :meth:`Host.close` gives them back, as does the process's
    end), migrate its database, make sure the organiser has an account, and (with
    ``recover``) recover from the last stop. Returns the host and what recovery did
    (``voided`` games, ``rebuilt`` versions). With ``cluster`` (a
    Dask scheduler's address) the games are played on its workers
    (:class:`arena.cluster.DaskExecutor`, docs/distributed.md), at most
    ``[matchmaking] concurrency`` at once; the database is written here only.

    Raises:
        ConfigError: a bad setting or cluster address, another host serving this
            competition or database, an unreachable database, a missing admin token.
    """
    factory = None
    if cluster is not None:
        from ..cluster import DaskExecutor, check_address, check_cluster

        address = check_address(cluster)
        check_cluster(address)  # unreachable, or no worker: say so now, not once serving

        def factory(record_dir: Path, capacity: int) -> DaskExecutor:
            return DaskExecutor(address, record_dir, capacity=capacity, grace_s=0.0)

    settings = load_settings(folder)
    short = short_seed_warning(settings.matchmaking.seed)
    if short:
        log.warning("%s", short)
    engine = make_engine(database_url(database, folder))
    lock = HostLock(folder, engine)
    lock.acquire()  # before anything is changed: another host's games are not voided
    try:
        migrate(engine)
        host = Host(folder, settings, engine, executor_factory=factory, lock=lock)
        host.ensure_admin()
        return host, host.recover() if recover else {"voided": 0, "rebuilt": 0, "tables": 0}
    except BaseException:
        lock.release()
        engine.dispose()
        raise


def serve(host: Host, address: str | socket.socket,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Serve ``host``'s API on ``address`` (``HOST:PORT``, or a socket from :func:`bind`)
    and play its games until SIGINT/SIGTERM.

    Raises:
        ConfigError: the address cannot be bound or the server cannot start.
    """
    import uvicorn

    from .app import create_app
    from .visitors import corked_http

    sock = bind(address) if isinstance(address, str) else address
    config = uvicorn.Config(create_app(host), log_level="warning", lifespan="on",
                            access_log=False, timeout_graceful_shutdown=5,
                            http=corked_http())
    server = uvicorn.Server(config)
    bound = sock.getsockname()

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                with contextlib.suppress(BaseException):  # uvicorn logged why
                    await task
                raise ConfigError(f"cannot serve on {address}: see the lines above")
            await asyncio.sleep(0.05)
        name = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        url = f"http://{name}:{bound[1]}"
        if on_ready is not None:
            on_ready(url)
        await task

    asyncio.run(main())
