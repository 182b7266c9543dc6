"""Fixtures of the cluster tests: a real Dask cluster on this machine (a ``dask scheduler``
and ``dask worker`` processes on 127.0.0.1, started and stopped here). Without Dask's
distributed they are skipped with the reason, unless MOON_REQUIRE_CLUSTER=1 (set by
.ci/run): then they fail, so CI never skips them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_support import Cluster, need_dask

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A scheduler and two workers (``w1``, ``w2``) of 3 seats each, no ``docker``."""
    need_dask()
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.start()
        c.add_worker("w1", "seats=3")
        c.add_worker("w2", "seats=3")
        yield c
    finally:
        c.stop()


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A scheduler without workers, for a test to add its own (and kill them)."""
    need_dask()
    c = Cluster(tmp_path / "cluster")
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture
def sleepy(tmp_path: Path) -> Path:
    """A copy of tests/cluster/bots/sleepy to change: ``delay`` (seconds a decision) and
    ``variant`` (written to stderr at start)."""
    folder = tmp_path / "sleepy"
    shutil.copytree(HERE / "bots" / "sleepy", folder)
    return folder
