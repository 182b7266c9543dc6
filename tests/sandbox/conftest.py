"""Fixtures of the sandbox tests. Tests marked ``docker`` need a Docker engine: without one
they are skipped with the reason, unless MOON_REQUIRE_DOCKER=1 (set by .ci/run, which
starts an engine first), where a missing engine fails them instead: CI never skips them."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def docker_engine():
    """A client of a live engine with the base image imported."""
    from arena.sandbox.docker import client, engine_problem, ensure_base_image

    problem = engine_problem()
    if problem:
        if os.environ.get("MOON_REQUIRE_DOCKER") == "1":
            pytest.fail(f"MOON_REQUIRE_DOCKER=1, but {problem}", pytrace=False)
        pytest.skip(problem)
    ensure_base_image()
    return client()
