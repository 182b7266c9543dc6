"""Settings for the whole test suite."""

from __future__ import annotations

import os
import signal

import pytest

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
