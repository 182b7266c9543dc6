"""Fixtures of the packaging tests: the distributions, built once per session, and (for the
referee image, marker ``docker``) the suite's ``docker_engine`` (tests/conftest.py)."""

from __future__ import annotations

import pytest
from packages_support import Dists, build_dists


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """The sdists and wheels of every distribution (tools/dist.py, as `make dist`), and the
    wheelhouse of their dependencies."""
    return build_dists(tmp_path_factory.mktemp("dist"))
