"""The host's database: an engine for a URL (SQLite by default, PostgreSQL for a real
deployment) and the schema brought up to date by the Alembic migrations.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session

from ..errors import ConfigError

MIGRATIONS = Path(__file__).resolve().parent / "alembic"


def database_url(url: str | None, folder: Path) -> str:
    """The SQLAlchemy URL to use: ``url`` as given (``postgresql://`` gets the psycopg 3
    driver), or the competition folder's ``host.sqlite``.

    Raises:
        ConfigError: a URL SQLAlchemy cannot parse, or a database it does not serve here.
    """
    if not url:
        return f"sqlite:///{(folder / 'host.sqlite').resolve()}"
    try:
        u = make_url(url)
    except ArgumentError:
        raise ConfigError(f"--database {url!r}: not a database URL (try "
                          "postgresql://USER@HOST:PORT/DB or sqlite:///FILE)") from None
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    if u.get_backend_name() not in ("sqlite", "postgresql"):
        raise ConfigError(f"--database {url!r}: only SQLite and PostgreSQL are supported")
    return u.render_as_string(hide_password=False)


SQLITE_CACHE_KIB = 256
"""SQLite's page cache per connection, KiB (SQLite's default is 2,000). In WAL mode a
connection's cache is emptied whenever another one has written (the host writes every
game), so a large cache saves little; but a query that reads a whole table (the status's
count of finished rated games reads every game's row) fills it for the moment, and with
SQLite's default that moment's memory grew with the games, in each thread that ran such a
query (0.3 MB per 1,000 games each, up to 2 MB): the host's memory grew with its games."""


def make_engine(url: str) -> Engine:
    """An engine for ``url``. SQLite runs in WAL mode with foreign keys on and waits up to
    30 s for a lock, so that the API's threads and the game writer share the file; its page
    cache is :data:`SQLITE_CACHE_KIB` per connection."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(conn: Any, _record: Any) -> None:
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


T = TypeVar("T")


def read_once(url: str, read: Callable[[Session], T]) -> T:
    """What ``read`` returns from a session on an engine of its own for ``url``, disposed
    after: the host's worker processes read so, apart from the server's pools."""
    engine = make_engine(url)
    try:
        with Session(engine) as s:
            return read(s)
    finally:
        engine.dispose()


WEB_POOL = 8
"""Database connections the API and the pages may hold at once (PostgreSQL), in a pool of
their own: more than :data:`arena.host.visitors.VisitorLimits.in_flight`, and apart from
the games' (the writer's, the builds', the batch fit's), so a crowd of visitors never keeps
a game's result waiting for a connection."""


def web_engine(engine: Engine) -> Engine:
    """The engine the API and the pages read through: for PostgreSQL one of its own on the
    same database with :data:`WEB_POOL` connections, which waits at most 5 s for one (then
    the request is answered 503, never 500); SQLite's own engine (its readers never block
    its writer, WAL)."""
    if engine.url.get_backend_name() != "postgresql":
        return engine
    return create_engine(engine.url, pool_pre_ping=True, pool_size=WEB_POOL,
                         max_overflow=0, pool_timeout=5)


def migrate(engine: Engine) -> None:
    """Create or upgrade the schema to the newest migration (Alembic ``upgrade head``).

    Raises:
        ConfigError: the database cannot be reached or migrated.
    """
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except Exception as e:  # the driver's own errors: say which database and why
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"database {engine.url.render_as_string(hide_password=True)}: "
                          f"cannot migrate the schema: {first}") from None
