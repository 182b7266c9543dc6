"""Fixtures of the host tests: the database each end-to-end test runs on — SQLite, and a
real PostgreSQL 15 server started here (Debian's ``postgresql``). Without PostgreSQL
those runs are skipped with the reason, unless MOON_REQUIRE_POSTGRES=1 (set by .ci/run,
which installs it first): CI never skips them."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest
from host_support import Postgres, postgres_problem


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    problem = postgres_problem()
    if problem:
        if os.environ.get("MOON_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"MOON_REQUIRE_POSTGRES=1, but {problem}", pytrace=False)
        pytest.skip(problem)
    pg = Postgres()
    pg.start()
    try:
        yield pg
    finally:
        pg.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> str | None:
    """None (the competition's own SQLite file) or a fresh PostgreSQL database URL."""
    if request.param == "sqlite":
        return None
    pg: Postgres = request.getfixturevalue("postgres")
    return pg.database("moon_" + secrets.token_hex(4))
