"""``python -m arena.referee.healthcheck [TARGET]``: exit 0 when the server at TARGET is healthy,
else 1 with one line saying why. The referee image's ``HEALTHCHECK`` runs it.

TARGET (default: ``$MOON_HEALTHCHECK``, else ``unix:///run/moon/referee.sock``, where the
image's ``moon serve`` listens) is

- a gRPC address (``unix:///path``, ``host:port``): the standard health service
  (``grpc.health.v1.Health/Check``, the whole server) must answer ``SERVING`` — a referee,
  ``moon serve``;
- an ``http://`` or ``https://`` URL: a GET must answer 200 — the competition host,
  ``moon host run`` (``http://127.0.0.1:8000/api/status``).

Each check gives up after ``--timeout`` seconds (default 3).
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.error
import urllib.request

DEFAULT_TARGET = "unix:///run/moon/referee.sock"
"""Where the referee image's ``moon serve`` listens for bots."""


def check_grpc(address: str, timeout_s: float) -> str | None:
    """None when the gRPC server at ``address`` says SERVING, else why not."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    try:
        with grpc.insecure_channel(address) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=timeout_s)
    except grpc.RpcError as e:
        return f"{address}: {e.code().name} {e.details() or ''}".strip()
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return f"{address}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}"
    return None


def check_http(url: str, timeout_s: float) -> str | None:
    """None when a GET of ``url`` answers 200, else why not."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as reply:  # noqa: S310
            return None if reply.status == 200 else f"{url}: HTTP {reply.status}"
    except urllib.error.HTTPError as e:
        return f"{url}: HTTP {e.code}"
    except (urllib.error.URLError, OSError) as e:
        return f"{url}: {getattr(e, 'reason', e)}"


def problem(target: str, timeout_s: float = 3.0) -> str | None:
    """None when ``target`` (module docstring) is healthy, else one line why not."""
    if target.startswith(("http://", "https://")):
        return check_http(target, timeout_s)
    return check_grpc(target, timeout_s)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena.referee.healthcheck",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?",
                        default=os.environ.get("MOON_HEALTHCHECK") or DEFAULT_TARGET)
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds")
    args = parser.parse_args(argv)
    why = problem(args.target, args.timeout)
    if why:
        print(f"unhealthy: {why}", file=sys.stderr)
        return 1
    print(f"healthy: {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
