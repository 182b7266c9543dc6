"""The `moon` command: one module per subcommand, thin bodies that call library code.

Domain errors (bad config, unknown bot, corrupt record) become `click.ClickException`s at
this edge, so the user sees one clear line, never a traceback.
"""

from __future__ import annotations

import logging

import click

from .. import __version__
from .host import host
from .play import play
from .replay import replay
from .serve import serve
from .submit import submit


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="moon")
@click.option("-v", "--verbose", count=True, help="More logging (-vv for debug).")
def main(verbose: int) -> None:
    """Moon Arena: referee, games, ladders and records for Moon bots."""
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(verbose, 2)]
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")


main.add_command(serve)
main.add_command(play)
main.add_command(replay)
main.add_command(host)
main.add_command(submit)


def _register_optional() -> None:
    # Commands from later modules register themselves if present.
    from importlib import import_module

    for module, name in (("ladder", "ladder"), ("new_bot", "new_bot")):
        try:
            mod = import_module(f"{__name__}.{module}")
        except ModuleNotFoundError:
            continue
        main.add_command(getattr(mod, name))


_register_optional()
