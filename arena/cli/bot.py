"""`moon bot check`: the conformance check a bot author runs before entering a bot."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import click

from . import stops
from .options import TIME_FIELDS, make_time_control, time_options

CHECK_FAILED_EXIT = 1
"""`moon bot check`'s exit code when an item failed."""
_MARKS = {"pass": "ok  ", "fail": "FAIL", "warn": "warn", "skip": "skip"}


@click.group()
def bot() -> None:
    """Work on a bot folder."""


@bot.command()
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--players", type=click.Choice(["3", "4", "both"]), default="both",
              show_default=True, help="Which player counts the hands against itself use "
                                      "(the whole game is for the first).")
@click.option("--seed", type=int, default=1, show_default=True,
              help="The first game's deal (each game adds one).")
@click.option("--records", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the games' records, logs and the build log in this folder "
                   "[default: a temporary folder, removed when the check passes, kept and "
                   "named when it fails].")
@time_options
def check(folder: Path, players: str, seed: int, records: Path | None, **tc: Any) -> None:
    """Check the bot in FOLDER the way a competition's validation gate does: read its
    bot.toml, build it, then play it under the real time control — one hand against
    itself with 3 and with 4 players (every phase; the dealer forced to bid; its first
    answer refused on purpose, which it must survive by answering the next turn), a hand
    under no trumps and one under doubles as trumps (named by a scripted seat that shoots
    the moon), a hand whose bid it wins (scripted seats pass), a dropped stream it must
    rejoin (with its token), and a whole game against the example bots random and
    heuristic.

    Prints one line per item, and for each problem one line saying what went wrong and
    what to do (the rule's section for an illegal action, the time for a timeout, the end
    of the bot's output for a crash, once). When the bot cannot finish its hand against
    itself, the checks after it are skipped. Nothing is written to the current folder:
    the records and logs go to a temporary folder, removed when the check passes and kept
    (its path printed) when it fails, or to --records. Exit code 0 when nothing failed, 1
    otherwise.

    \b
    Example:  moon new-bot mybot && moon bot check ./mybot
    """
    from moon_sdk.rules import Ruleset

    from ..bots.manifest import load_bot
    from ..bots.resources import resource_dir
    from ..check.conformance import check_folder
    from ..core.text import clean_line
    from ..sandbox.containment import cleanup_stale_once
    from .console import say_err

    time_control = make_time_control(**{k: tc[k] for k in TIME_FIELDS})
    presets = {"3": ["moon3"], "4": ["moon4"], "both": ["moon3", "moon4"]}[players]
    rulesets = [(p, Ruleset.preset(p)) for p in presets]
    examples = resource_dir("example_bots")
    opponents = [load_bot(examples / name) for name in ("random", "heuristic")]
    cleanup_stale_once()
    work = records if records is not None else Path(tempfile.mkdtemp(prefix="moon-check-"))
    keep = records is not None
    stops.saying("stopped: the check did not finish, so it says nothing about the bot"
                 + (f"; the records so far are in {clean_line(str(records))}" if keep else
                    "; nothing was kept (its temporary folder is removed)"))
    try:
        report = stops.run(check_folder(folder, opponents=opponents, rulesets=rulesets,
                                        tc=time_control, work=work, seed=seed,
                                        say=say_err))
        keep = keep or (not report.passed and any(work.iterdir()))
    finally:
        if not keep:  # passed, nothing written, or no verdict (interrupted, no engine)
            shutil.rmtree(work, ignore_errors=True)
    shown: set[tuple[str, ...]] = set()  # the same output twice is said once
    for item in report.items:
        click.echo(f"{_MARKS[item.status]} {clean_line(item.name)}")
        if item.problem:
            click.echo(f"     {clean_line(item.problem)}")
        if item.tail and item.tail in shown:
            click.echo("     the end of its output: the same as above")
        elif item.tail:
            shown.add(item.tail)
            click.echo("     the end of its output:")
            for line in item.tail:
                click.echo(f"     | {clean_line(line)}")
        if item.status != "pass" and item.record is not None:
            click.echo(f"     record: {item.record} (`moon replay show --logs` shows it)")
    first = report.first_failure
    if first is None:
        click.echo(f"{clean_line(report.bot)}: passed")
        return
    if work.is_dir() and any(work.iterdir()):
        kept = "" if records is not None else " (a temporary folder, kept because the check " \
            "failed: remove it when done; --records DIR puts them where you say)"
        click.echo(f"records and logs: {clean_line(str(work))}{kept}")
    click.echo(f"{clean_line(report.bot)}: FAILED: {clean_line(first.name)}", err=True)
    raise SystemExit(CHECK_FAILED_EXIT)
