"""The `moon` command: one module per subcommand, thin bodies that call library code.

Every command is registered here, explicitly. A command module imports only click, rich
and light arena modules at its top; what needs a third-party package beyond those
(scipy for ratings, grpc for a referee, ...) is imported inside the command, so that a
missing package is a clear one-line error when that command runs, never a command that
silently disappears.

Errors become one line in one place, :class:`ArenaGroup`: an
:class:`~arena.errors.ArenaError` (bad config, a bot that cannot build, a corrupt record,
an infrastructure failure) prints ``Error: <its message>`` and exits 1; a usage error
(a bad flag or argument) is click's own, naming the flag, exit 2. No traceback reaches
a user. SIGINT (Ctrl-C) and SIGTERM stop any command with one line saying what was kept
and what goes on, exit 130 (:mod:`arena.cli.stops`).
"""

from __future__ import annotations

import logging
from typing import Any

import click

from .. import __version__
from ..errors import ArenaError
from .bot import bot
from .challenge import challenge
from .host import host
from .ladder import ladder
from .match import match
from .new_bot import new_bot
from .play import play
from .replay import replay
from .serve import serve
from .stops import handling, stopped
from .submit import submit

PACKAGES = {"scipy": "scipy", "numpy": "numpy", "openskill": "openskill", "docker": "docker",
            "grpc": "grpcio", "grpc_health": "grpcio-health-checking",
            "grpc_reflection": "grpcio-reflection", "google": "protobuf", "rich": "rich"}
"""Top-level module → the distribution that provides it (where the names differ, or to
say so), for the missing-package message. A module not listed is named as it is."""
HOST_EXTRA = frozenset({"fastapi", "starlette", "uvicorn", "multipart", "python_multipart",
                        "sqlalchemy", "alembic", "psycopg"})
"""Modules that come with ``moon-arena[host]`` (the competition host), not with the arena
itself."""


def missing_package_message(command: str, module: str) -> str:
    """The one line for a command that needs a package that is not installed.

    Args:
        command: the command as typed (``"moon ladder"``).
        module: the module that could not be imported (``ModuleNotFoundError.name``).
    """
    top = module.split(".")[0]
    if top in HOST_EXTRA:
        return (f"{command} needs the competition host's packages ({top!r} is not installed "
                "here): pip install 'moon-arena[host]'")
    dist = PACKAGES.get(top, top)
    return (f"{command} needs the Python package {dist!r}, which is not installed here: "
            f"install it (pip install {dist}), or reinstall moon-arena with its dependencies")


class ArenaGroup(click.Group):
    """A click group that turns the arena's errors into one line, in one place (in the
    manner of pip-tools, which raises its domain errors as ``click.ClickException``):

    - :class:`~arena.errors.ArenaError` → ``Error: <message>``, exit 1;
    - :class:`ModuleNotFoundError` of a third-party package (not of ``arena`` or
      ``moon_sdk``, which would be a bug and keeps its traceback) → which package the
      command needs and how to install it, exit 1;
    - ``KeyboardInterrupt`` (SIGINT or SIGTERM, :mod:`arena.cli.stops`) → the one line of
      what the stop kept and what goes on, exit 130.
    """

    def main(self, *args: Any, **kw: Any) -> Any:
        """Run the command line with SIGINT and SIGTERM handled (:func:`stops.handling`)."""
        with handling():
            return super().main(*args, **kw)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; translate the errors above (click's own pass through)."""
        try:
            return super().invoke(ctx)
        except ArenaError as e:
            raise click.ClickException(str(e)) from None
        except KeyboardInterrupt:
            stopped()
        except ModuleNotFoundError as e:
            name = e.name or ""
            if not name or name.split(".")[0] in ("arena", "moon_sdk"):
                raise
            command = " ".join(filter(None, (ctx.command_path, ctx.invoked_subcommand)))
            raise click.ClickException(missing_package_message(command, name)) from None


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="moon")
@click.option("-v", "--verbose", count=True, help="More logging (-vv for debug).")
def main(verbose: int) -> None:
    """Moon Arena: referee, games, ladders and records for Moon bots."""
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(verbose, 2)]
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")


# Every command, explicitly: one whose package is missing still shows in --help and says
# what it needs when it runs.
main.add_command(serve)
main.add_command(play)
main.add_command(replay)
main.add_command(ladder)
main.add_command(match)
main.add_command(new_bot)
main.add_command(host)
main.add_command(submit)
main.add_command(challenge)
main.add_command(bot)
