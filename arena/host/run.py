"""Running a competition folder: :func:`open_host` and :func:`serve` (``moon host run``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from .db import database_url, make_engine, migrate
from .service import Host
from .settings import load_settings

log = logging.getLogger("arena.host")


def parse_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` as a pair.

    Raises:
        ConfigError: not ``HOST:PORT`` with a port 0..65535.
    """
    hostname, sep, port = address.rpartition(":")
    if not sep or not hostname or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"--address {address!r}: write HOST:PORT, e.g. 127.0.0.1:8000")
    return hostname.strip("[]"), int(port)


def open_host(folder: Path, database: str | None = None, *, recover: bool = True,
              cluster: str | None = None) -> tuple[Host, dict[str, int]]:
    """Read the competition in ``folder``, migrate its database, make sure the organiser
    has an account, and (with ``recover``) recover from the last stop. Returns the host
    and what recovery did (``voided`` games, ``rebuilt`` versions). With ``cluster`` (a
    Dask scheduler's address) the games are played on its workers
    (:class:`arena.cluster.DaskExecutor`, docs/distributed.md), at most
    ``[matchmaking] concurrency`` at once; the database is written here only.

    Raises:
        ConfigError: a bad setting or cluster address, an unreachable database, a missing
            admin token.
    """
    factory = None
    if cluster is not None:
        from ..cluster import DaskExecutor, check_address, check_cluster

        address = check_address(cluster)
        check_cluster(address)  # unreachable, or no worker: say so now, not once serving

        def factory(record_dir: Path, capacity: int) -> DaskExecutor:
            return DaskExecutor(address, record_dir, capacity=capacity, grace_s=0.0)

    settings = load_settings(folder)
    engine = make_engine(database_url(database, folder))
    migrate(engine)
    host = Host(folder, settings, engine, executor_factory=factory)
    host.ensure_admin()
    return host, host.recover() if recover else {"voided": 0, "rebuilt": 0}


def serve(host: Host, address: str, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve ``host``'s API on ``address`` and play its games until SIGINT/SIGTERM."""
    import uvicorn

    from .app import create_app

    name, port = parse_address(address)
    config = uvicorn.Config(create_app(host), host=name, port=port, log_level="warning",
                            lifespan="on", access_log=False, timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                await task
                raise ConfigError(f"cannot serve on {address} (in use?)")
            await asyncio.sleep(0.05)
        sockets = [s for srv in server.servers for s in srv.sockets]
        bound = sockets[0].getsockname() if sockets else (name, port)
        url = f"http://{bound[0]}:{bound[1]}"
        if on_ready is not None:
            on_ready(url)
        await task

    asyncio.run(main())
