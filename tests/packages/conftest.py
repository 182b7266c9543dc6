"""Fixtures of the packaging tests: the distributions, built once per session, and (for the
referee image, marker ``docker``) a Docker engine, as tests/sandbox has it: without one the
image tests are skipped with the reason, unless MOON_REQUIRE_DOCKER=1 (CI)."""

from __future__ import annotations

import os

import pytest
from packages_support import Dists, build_dists


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """The sdists and wheels of every distribution (tools/dist.py, as `make dist`), and the
    wheelhouse of their dependencies."""
    return build_dists(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def docker_engine():
    """A client of a live engine."""
    from arena.sandbox.docker import client, engine_problem

    problem = engine_problem()
    if problem:
        if os.environ.get("MOON_REQUIRE_DOCKER") == "1":
            pytest.fail(f"MOON_REQUIRE_DOCKER=1, but {problem}", pytrace=False)
        pytest.skip(problem)
    return client()
