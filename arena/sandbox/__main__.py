"""``python -m arena.sandbox base-image | python-image [--force] | cleanup [--all] | check |
containment``: set-up helpers for scripts/docker-up.sh, scripts/docker-down.sh and ``make
image`` (the referee image's base, :mod:`arena.sandbox.python_image`), and a look at how
local bots are contained here."""

from __future__ import annotations

import argparse
import sys

from . import containment


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m arena.sandbox")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("base-image", help="import the base image unless the engine has it")
    py = sub.add_parser("python-image", help="import this machine's Python as an image (the "
                        "referee image's base) unless the engine has it; prints its name")
    py.add_argument("--force", action="store_true", help="import it again anyway")
    clean = sub.add_parser("cleanup", help="remove what killed runners left: local bot "
                           "processes and cgroups, sandbox containers")
    clean.add_argument("--all", action="store_true", help="every moon-arena container")
    sub.add_parser("check", help="exit 0 if a Docker engine answers")
    sub.add_parser("containment", help="say how local bots are contained on this machine")
    args = ap.parse_args(argv)
    if args.cmd == "containment":
        print(containment.mode())
        return 0
    if args.cmd == "cleanup":
        print(f"cleaned up {containment.cleanup_stale()} local bot run(s)")
    from .docker import (
        SandboxError,
        cleanup_stale,
        engine_problem,
        ensure_base_image,
    )
    try:
        if args.cmd == "base-image":
            print(f"base image: {ensure_base_image()}")
        elif args.cmd == "python-image":
            from .python_image import ensure_python_image

            print(ensure_python_image(force=args.force))
        elif args.cmd == "cleanup":
            print(f"removed {cleanup_stale(everything=args.all)} container(s)")
        else:
            problem = engine_problem()
            print(problem or "a Docker engine answers")
            return 1 if problem else 0
    except SandboxError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
