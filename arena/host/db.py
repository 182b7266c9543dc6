"""The host's database: an engine for a URL (SQLite by default, PostgreSQL for a real
deployment) and the schema brought up to date by the Alembic migrations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

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


def make_engine(url: str) -> Engine:
    """An engine for ``url``. SQLite runs in WAL mode with foreign keys on and waits up to
    30 s for a lock, so that the API's threads and the game writer share the file."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(conn: Any, _record: Any) -> None:
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


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
