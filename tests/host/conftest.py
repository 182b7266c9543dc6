"""Fixtures of the host tests: the database a test of the host's SQL runs on (the
``database`` fixture) — SQLite, and a real PostgreSQL 15 server started here (Debian's
``postgresql``). Without PostgreSQL those runs are skipped with the reason, unless
MOON_REQUIRE_POSTGRES=1 (set by .ci/run, which installs it first): CI never skips them.

Which tests run on PostgreSQL, and why: those whose SQL could differ between the two.

- The host's parts in process, each query of theirs a fraction of a second: the build
  queue (test_builds_part.py), the matchmaker's claims (test_matchmaker.py), the recorder
  (test_recorder.py), the ratings (test_ratings_part.py), the final (test_final.py),
  challenges and their quota (test_challenges.py), moderation (test_host_moderation.py),
  the phases (test_host_phases.py), the API and pages through TestClient
  (test_app_in_process.py). Between them they run every statement the long flows below
  run on a database (a statement log of both, compared: all 167; the last one missing, the
  batch fit's write of a version's rating and rating_low alone, is test_ratings_part.py's
  bound that stays open).
- Tests whose subject is the database: concurrency and locks (test_host_lock.py, names
  and registrations sent at once, the submission race), the database's outage, the
  migrations, the restart and its recovery, raw and page queries (test_page_queries.py,
  the leaderboard's tally), NUL characters (which PostgreSQL refuses), quotas.
- One long flow end to end, on PostgreSQL alone (marked ``postgres_only``):
  test_host_final.py, a whole competition through a real `moon host run` by itself with
  real bots (registration, the season with its challenges, the disabled bot and
  participant and its placement series, the freeze, the final with a restart mid-final and
  the embargo's crawl, the end, the export and a void). Its statements are the parts'
  above, and each of its parts is checked on both databases by its own test (the final,
  its boards and the export: test_final.py; the phases and a freeze:
  test_host_phases.py; the restart: test_host_restart.py; a void and a disable:
  test_host_moderation.py; challenges: test_host_challenges.py), but a real host on
  PostgreSQL is more than its statements (its processes and connections across restarts,
  the batch worker's fits, the export's reads while it serves), and one flow that goes
  through every phase shows that on PostgreSQL for the price of one run (about 2 min),
  not one a flow.
- The crowd (test_host_crowd.py), on PostgreSQL alone (``postgres_only``): a real host
  under 32 visitors at once, whose failure mode is the pages' pool of connections running
  dry (8, apart from the games'), a pool PostgreSQL alone has (on SQLite the pages read
  through the host's one engine, whose readers never wait for its writer: WAL).

A test marked ``one_database`` runs on SQLite alone: its subject is the host's policy
(the build queue's order, a slow bot's share of the slots, forfeits, one address's limit
behind a proxy), or it is another long flow through a real `moon host run` with real bots
(the e2e competition, no two games of one set at once) whose queries the parts above run
on PostgreSQL in process, in seconds, not minutes, and whose host on PostgreSQL the flow
above has shown."""

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
    migrations, recovery, the parts in process); a test marked ``one_database`` (the
    host's policy, or a long flow whose queries the parts run: the module's docstring)
    runs on SQLite alone, one marked ``postgres_only`` (the one long flow on a real
    server) on PostgreSQL alone."""
    kept, dropped = [], []
    for item in items:
        spec = getattr(item, "callspec", None)
        database = spec.params.get("database") if spec is not None else None
        if (database == "postgresql" and item.get_closest_marker("one_database")) or \
                (database == "sqlite" and item.get_closest_marker("postgres_only")):
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
