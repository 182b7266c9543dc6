"""Fixtures of the host tests: the database each end-to-end test runs on — SQLite, and a
real PostgreSQL 15 server started here (Debian's ``postgresql``). Without PostgreSQL
those runs are skipped with the reason, unless MOON_REQUIRE_POSTGRES=1 (set by .ci/run,
which installs it first): CI never skips them."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from host_support import Postgres, started_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    with started_postgres() as pg:
        yield pg


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """PostgreSQL runs the tests whose subject touches SQL (locks, constraints, queries,
    migrations, recovery); a test marked ``one_database`` (its subject is the host's
    policy: the build queue's order, a slow bot's share of the slots, forfeits) runs on
    SQLite alone."""
    kept, dropped = [], []
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is not None and spec.params.get("database") == "postgresql" \
                and item.get_closest_marker("one_database") is not None:
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> str | None:
    """None (the competition's own SQLite file) or a fresh PostgreSQL database URL."""
    if request.param == "sqlite":
        return None
    pg: Postgres = request.getfixturevalue("postgres")
    return pg.database("moon_" + secrets.token_hex(4))
