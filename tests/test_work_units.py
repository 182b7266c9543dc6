"""How the suite's tests go out to pytest-xdist's workers (tests/conftest.py): a file with a
fixture of module scope as one unit, a shared group as one, any other test alone; units
longest first by the last run's times."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

SUITE = Path(__file__).resolve().parent / "conftest.py"


@pytest.fixture
def suite(request: pytest.FixtureRequest) -> ModuleType:
    """tests/conftest.py as pytest loaded it (`import conftest` may find another folder's)."""
    return next(p for p in request.config.pluginmanager.get_plugins()
                if isinstance(p, ModuleType) and Path(p.__file__ or "").resolve() == SUITE)


def test_a_file_of_one_worker_a_group_and_a_test_alone(suite: ModuleType) -> None:
    work_unit = suite.work_unit
    assert work_unit("tests/host/test_host_hostile.py::test_names[x]") \
        == "tests/host/test_host_hostile.py"
    assert work_unit("tests/sandbox/test_docker_games.py::test_a") == "docker"
    assert work_unit("tests/host/test_host_fairness.py::test_a[sqlite]") \
        == "tests/host/test_host_fairness.py::test_a[sqlite]"


class Cache:
    def __init__(self, key: str, took: dict[str, float]) -> None:
        self.key, self.took = key, took

    def get(self, key: str, default: Any) -> Any:
        return self.took if key == self.key else default


def ids(suite: ModuleType, took: dict[str, float] | None, nodeids: list[str]) -> list[str]:
    items: list[Any] = [SimpleNamespace(nodeid=n) for n in nodeids]
    cache = None if took is None else Cache(suite.DURATIONS_KEY, took)
    suite._longest_first(SimpleNamespace(cache=cache), items)
    return [i.nodeid for i in items]


HOSTILE = "tests/host/test_host_hostile.py"
NODES = ["tests/e2e/test_a.py::test_short", f"{HOSTILE}::test_one", f"{HOSTILE}::test_two",
         "tests/e2e/test_b.py::test_long", "tests/sandbox/test_x.py::test_docker"]


def test_units_go_longest_first_and_a_file_stays_whole_and_in_order(suite: ModuleType
                                                                   ) -> None:
    # the file's two tests add up (3 + 4 = 7 s): after the 9 s test, before the group's 5 s
    took = {NODES[0]: 1.0, NODES[1]: 3.0, NODES[2]: 4.0, NODES[3]: 9.0, NODES[4]: 5.0}
    assert ids(suite, took, NODES) == [NODES[3], NODES[1], NODES[2], NODES[4], NODES[0]]


def test_without_times_the_groups_go_first_and_the_rest_keep_their_order(suite: ModuleType
                                                                        ) -> None:
    for took in (None, {}):
        assert ids(suite, took, NODES) == [NODES[4], *NODES[:4]]


def test_the_file_list_names_files_that_exist(suite: ModuleType) -> None:
    for rel in suite.ONE_WORKER:
        assert (SUITE.parent / rel).is_file(), rel
