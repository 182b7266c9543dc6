"""Moon Arena: the referee server, match runner, ladder, ratings, sandbox runners, records
and the `moon` CLI. The rules themselves live in :mod:`moon_sdk.rules`."""

__version__ = "0.1.0"

import os as _os

# Bots are started with fork+exec while gRPC threads run; gRPC's fork handlers are not
# needed for that and only log warnings.
_os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
