"""Settings for the whole test suite."""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
FAST = (
    # the rules engine, the statistics, the layering
    "rules/", "stats/", "test_layering.py",
    # the arena's values, the referee's parts without a server, records, the docs
    "test_clock.py", "test_results.py", "test_text.py", "test_labels.py", "test_turns.py",
    "test_records.py", "test_referee.py", "test_referee_limits.py", "test_referee_paths.py",
    "test_bot_replies.py", "test_server_watchdog.py", "test_observation_reader.py",
    "test_referee_startup.py",
    "test_doctests.py", "test_sdk_docs.py", "test_codegen.py", "test_docs.py",
    "test_config_documents.py", "test_work_units.py",
    # the CLI through click's CliRunner
    "test_cli.py", "test_cli_stops.py", "test_help.py", "test_builds_seen.py",
    "ladder/test_bot_names.py",
    # ladders' and matches' policy, in process
    "ladder/test_ratings.py", "ladder/test_report.py", "ladder/test_schedule.py",
    "ladder/test_config.py", "ladder/test_match_tally.py",
    # the host's parts, in process
    "host/test_settings.py", "host/test_versions.py", "host/test_matchmaking.py",
    "host/test_submissions.py", "host/test_app_in_process.py", "host/test_recorder.py",
    "host/test_retention_logs.py", "host/test_matchmaker.py", "host/test_builds_part.py",
    "host/test_ratings_part.py", "host/test_visitors.py",
    "host/test_outage.py", "host/test_revalidate.py", "host/test_openapi.py",
    "host/test_upload_refusals.py", "host/test_final.py", "host/test_challenges.py",
    "host/test_tables.py", "host/test_phase_move.py",
    # the live game page as served, in process
    "web/test_live_served.py",
    # a person at the table: their answers, in process
    "table/test_choice.py", "table/test_play_usage.py", "table/test_web_person.py",
)
"""The fast tier (`make check`): test files (or folders, ending in /) under tests/ whose
tests run in process, in a few minutes in all on 2 cores. Their tests are marked ``fast``
unless marked ``slow``; `make test` runs the fast tier first, then everything else."""


SHARED = {
    # the Docker engine and its images; the distributions built once a session, one of them
    # run in a container
    "sandbox/": "docker", "packages/": "docker", "host/test_host_docker.py": "docker",
    "host/test_host_images.py": "docker",
    "cluster/test_cluster.py::test_a_docker_game_lands_only_on_the_worker_with_docker":
        "docker",
    # the Dask cluster of a session
    "cluster/": "cluster",
    # a pooled check over the settings of the tests before it, in the same process
    "stats/test_coverage.py": "coverage",
}
"""Tests that share one thing of the machine's (or of one process's) between them, by the
start of their id under tests/ (the first match wins): under pytest-xdist (`make test`
runs both tiers in several workers) each group's tests run in one worker, one after
another, and the groups start first; every test marked ``docker`` must be in the Docker
group."""


ONE_WORKER = (
    "e2e/test_grpcurl.py", "ladder/test_ladder_guards.py", "test_replay_html.py",
    "host/test_host_abuse.py", "host/test_host_hostile.py", "host/test_host_log_budget.py",
    "host/test_host_reported_names.py", "host/test_host_streams.py",
    "host/test_host_submit_race.py", "host/test_openapi.py",
    "web/test_final_challenges_pages.py", "web/test_page_states.py", "web/test_pages.py",
    "web/test_live_page.py", "web/test_replay_player.py",
)
"""Test files whose tests share a fixture of module scope (a host, a server, a ladder
played once): under pytest-xdist each file is one unit of work, so that its fixture is
made once, in one worker, not once in each worker that takes one of its tests. A file
with such a fixture missing here fails the collection."""

DURATIONS_KEY = "moon/durations"
"""pytest's cache key of each test's time (set-up, call and teardown) in the last run:
under xdist the units of work go out longest first."""


def shared_group(nodeid: str) -> str | None:
    """The :data:`SHARED` group of a test id (``tests/sandbox/test_x.py::test_y``), if any."""
    rel = nodeid.removeprefix("tests/")
    return next((g for start, g in SHARED.items() if rel.startswith(start)), None)


def work_unit(nodeid: str) -> str:
    """The unit of work of a test under xdist: its :data:`SHARED` group, its file (one of
    :data:`ONE_WORKER`), or the test alone."""
    group = shared_group(nodeid)
    if group is not None:
        return group
    file = nodeid.split("::", 1)[0]
    return file if file.removeprefix("tests/") in ONE_WORKER else nodeid


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: without xdist, never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's load balancing over :func:`work_unit`'s units, in the order the workers
    collected them (:func:`pytest_collection_modifyitems`: longest first), not xdist's
    order by the count of tests (xdist's own ``--dist loadgroup`` reads ``xdist_group``
    marks through a node attribute that pytest 9.2 no longer has)."""
    from xdist.scheduler import LoadScopeScheduling

    class SharedScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False
    return SharedScheduling(config, log)


PER_MODULE = frozenset({"browser"})
"""Fixtures of module scope that may be made in each worker that takes a test of their
file: a headless Chromium (seconds to start, nothing shared). It stays of module scope:
Playwright's sync API runs its own event loop while it is open, so a browser kept for a
worker's whole session made the next one (tests/web's and tests/table's each have one)
fail with "using Playwright Sync API inside the asyncio loop"."""


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        defs and defs[-1].scope == "module" and name not in PER_MODULE
        for name, defs in info.name2fixturedefs.items())


def _longest_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sort ``items`` by their unit of work's time in the last run (the cache), longest
    first; units of no known time keep their order, the :data:`SHARED` groups first."""
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    took: dict[str, float] = cache.get(DURATIONS_KEY, {}) if cache is not None else {}
    total: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        unit = work_unit(item.nodeid)
        total[unit] = total.get(unit, 0.0) + float(took.get(item.nodeid, 0.0))
        first.setdefault(unit, i)

    def key(item: pytest.Item) -> tuple[float, bool, int]:
        unit = work_unit(item.nodeid)
        return -total[unit], shared_group(item.nodeid) is None, first[unit]

    items.sort(key=key)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the fast tier's tests ``fast`` (:data:`FAST`); under xdist, put the units of
    work longest first (:func:`_longest_first`).

    Raises:
        pytest.UsageError: a test marked ``docker`` outside the Docker group, or a test of
            a fixture of module scope in a file outside :data:`ONE_WORKER`.
    """
    for item in items:
        rel = Path(item.path).resolve().relative_to(TESTS).as_posix()
        if any(rel == f or (f.endswith("/") and rel.startswith(f)) for f in FAST) \
                and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.fast)
        if item.get_closest_marker("docker") is not None \
                and shared_group(f"tests/{rel}::{item.name}") != "docker":
            raise pytest.UsageError(f"{item.nodeid} is marked docker: add it to the Docker "
                                    "group of tests/conftest.py's SHARED")
        if _uses_a_module_fixture(item) and rel not in ONE_WORKER \
                and shared_group(f"tests/{rel}::{item.name}") is None:
            raise pytest.UsageError(f"{item.nodeid} uses a fixture of module scope: add "
                                    f"{rel} to tests/conftest.py's ONE_WORKER")
    if hasattr(config, "workerinput"):  # an xdist worker: every worker sorts alike
        _longest_first(config, items)


_TOOK: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each test's time (set-up, call, teardown) for :data:`DURATIONS_KEY`."""
    _TOOK[report.nodeid] = _TOOK.get(report.nodeid, 0.0) + report.duration


def _own_containment() -> Path | None:
    """Under xdist, this worker's bot runs in a run registry and a cgroup parent of their
    own, as the environment of every arena its tests start: an arena cleans up at its start
    what killed arenas left (and says so in a line), and a test that kills one on purpose
    must find its leftovers for its own next start, not see another worker's start take
    them, or add its line to another test's output. The cgroup parent made, if any."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return None
    from arena.sandbox import containment

    own = f"{containment.PARENT}-tests-{worker}-{os.getpid()}"
    os.environ[containment.RUN_DIR_VAR] = os.path.join(tempfile.gettempdir(), own, "bots")
    mount = containment.cgroup2_mount()
    if mount is None or os.environ.get(containment.CGROUP_VAR, "auto") not in ("", "auto"):
        return None
    os.environ[containment.CGROUP_VAR] = str(mount / own)
    return mount / own


_CGROUPS = _own_containment()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Keep the tests' times in the cache (:data:`DURATIONS_KEY`; by the controller under
    xdist, which hears every worker's reports); kill what this worker's bots left in its
    cgroup parent and remove it."""
    config = session.config
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    if _TOOK and cache is not None and not hasattr(config, "workerinput"):
        cache.set(DURATIONS_KEY, {**cache.get(DURATIONS_KEY, {}), **_TOOK})
    if _CGROUPS is None or not _CGROUPS.is_dir():
        return
    from arena.sandbox import containment

    for cg in [c for c in _CGROUPS.iterdir() if c.is_dir()]:
        containment.kill_cgroup(cg)
        containment._remove_cgroup(cg, 5.0)
    with contextlib.suppress(OSError):
        _CGROUPS.rmdir()


# Tests press Ctrl-C on the processes they start (SIGINT) and expect what a user sees. A shell
# that starts a job in the background without job control (`.ci/run &`, nohup) makes it
# ignore SIGINT, and every process it starts inherits that: a Python child would then never
# see the Ctrl-C. Taking SIGINT back in the test process gives its children the default.
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def docker_engine():
    """A client of a live Docker engine with the sandbox's base image imported. Tests that
    use it (marked ``docker``) are skipped with the reason when there is no engine, unless
    MOON_REQUIRE_DOCKER=1 (set by .ci/run, which starts an engine first): there a missing
    engine fails them instead, so CI never skips them."""
    from arena.sandbox.docker import client, engine_problem, ensure_base_image

    problem = engine_problem()
    if problem:
        if os.environ.get("MOON_REQUIRE_DOCKER") == "1":
            pytest.fail(f"MOON_REQUIRE_DOCKER=1, but {problem}", pytrace=False)
        pytest.skip(problem)
    ensure_base_image()
    return client()
