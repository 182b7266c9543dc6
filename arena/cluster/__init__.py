"""Games on a Dask cluster: :class:`DaskExecutor`, the executor seam
(:mod:`arena.executor.local`) over Dask's distributed scheduler. docs/distributed.md says how
to start a cluster and how to size its workers.

``moon ladder run --cluster tcp://HOST:8786`` and ``moon host run --cluster ...`` use it;
without ``--cluster`` nothing changes (the local pool). It needs the ``cluster`` extra
(``pip install 'moon-arena[cluster]'``): Dask is imported only when an executor starts.

- :mod:`arena.cluster.executor`: the client side (one task per game, records written
  here, the worker resources ``seats`` and ``docker`` a game asks for).
- :mod:`arena.cluster.worker`: the task, run on a worker.
- :mod:`arena.cluster.warm`: the worker's game runner, one local pool kept for the
  worker's lifetime.
- :mod:`arena.cluster.logs`: Dask's own log lines, one line each.
- :mod:`arena.cluster.artifacts`: bot folders as content-addressed tarballs, and the
  worker's cache of them.
"""

from .executor import DOCKER, SEATS, DaskExecutor, check_address, check_cluster, resources_for

__all__ = ["DOCKER", "SEATS", "DaskExecutor", "check_address", "check_cluster",
           "resources_for"]
