"""`moon replay show|verify|html FILE`: read game records."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.text import clean, clean_line
from ..errors import RecordError
from ..records.printing import print_game
from ..records.record import read_record, verify_record
from ..web.replay import render_html
from .console import make_console


@click.group()
def replay() -> None:
    """Show, verify or export game records."""


@replay.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--plays/--no-plays", default=True, show_default=True,
              help="Show every trick.")
@click.option("--logs", is_flag=True,
              help="Also print the end of every bot's output (stdout and stderr).")
def show(file: Path, plays: bool, logs: bool) -> None:
    """Print a record as a readable hand-by-hand story (a damaged record: what it holds,
    and what is damaged).

    \b
    Example:  moon replay show runs/records/MATCH.json
              moon replay show runs/records/MATCH.json --no-plays --logs
    """
    record = read_record(file)
    print_game(make_console(), record, plays=plays)
    if logs:
        for seat, text in sorted(record.logs.items()):
            click.echo(f"\n--- seat {clean_line(seat)} output (the end) ---\n"
                       f"{clean(text).rstrip()}")


@replay.command()
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def verify(files: tuple[Path, ...]) -> None:
    """Re-simulate records with the engine and report every disagreement
    (exit 1 if any record disagrees).

    \b
    Example:  moon replay verify runs/records/*.json
    """
    bad = 0
    for f in files:
        try:
            problems = verify_record(read_record(f))
        except RecordError as e:  # this file cannot be read; the others still are
            bad += 1
            click.echo(f"{f}: cannot be read: {e}")
            continue
        if problems:
            bad += 1
            click.echo(f"{f}: {len(problems)} disagreement(s)")
            for p in problems:
                click.echo(f"  - {p}")
        else:
            click.echo(f"{f}: ok")
    if bad:
        raise click.ClickException(f"{bad} of {len(files)} record(s) disagree with the engine "
                                   "or cannot be read")


@replay.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write [default: the record's path with .html].")
@click.option("--logs", is_flag=True, help="Include the bots' logs (escaped, in <pre>).")
def html(file: Path, output: Path | None, logs: bool) -> None:
    """Write a record as one self-contained HTML page that steps through the game hand by
    hand and trick by trick (no network, no external files).

    \b
    Example:  moon replay html runs/records/MATCH.json
              moon replay html runs/records/MATCH.json --output game.html --logs
    """
    out = output or file.with_suffix(".html")
    if out.resolve() == file.resolve():
        raise click.ClickException(f"{out} is the record itself: give another --output")
    page = render_html(read_record(file), logs=logs)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as e:
        raise click.ClickException(f"cannot write {out}: {e.strerror}") from None
    click.echo(f"wrote {out}")
