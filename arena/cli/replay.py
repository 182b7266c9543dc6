"""`moon replay show|verify|html FILE`: read game records."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from ..records import RecordError, load_record, verify_record
from ..replay_html import render_html
from ..report import print_game
from ..text import clean, clean_line


@click.group()
def replay() -> None:
    """Show, verify or export game records."""


def _load(path: Path) -> dict[str, object]:
    try:
        return load_record(path)
    except RecordError as e:
        raise click.ClickException(str(e)) from None


@replay.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--plays/--no-plays", default=True, show_default=True,
              help="Show every trick.")
@click.option("--logs", is_flag=True,
              help="Also print the end of every bot's output (stdout and stderr).")
def show(file: Path, plays: bool, logs: bool) -> None:
    """Print a record as a readable hand-by-hand story."""
    record = _load(file)
    try:
        print_game(Console(), record, plays=plays)  # type: ignore[arg-type]
        if logs:
            for seat, text in sorted((record.get("logs") or {}).items()):  # type: ignore[union-attr]
                click.echo(f"\n--- seat {clean_line(seat)} output (the end) ---\n"
                           f"{clean(text).rstrip()}")
    except MALFORMED as e:
        raise click.ClickException(_malformed(file, e)) from None


MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What reading a damaged record's fields raises (its envelope is checked on loading)."""


def _malformed(file: Path, e: Exception) -> str:
    return (f"{file}: the record has a missing or malformed field ({type(e).__name__}: {e}); "
            "the file is damaged")


@replay.command()
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def verify(files: tuple[Path, ...]) -> None:
    """Re-simulate records with the engine and report every disagreement
    (exit 1 if any record disagrees)."""
    bad = 0
    for f in files:
        try:
            problems = verify_record(load_record(f))
        except RecordError as e:
            bad += 1
            click.echo(f"{f}: cannot be read: {e}")
            continue
        except MALFORMED as e:
            bad += 1
            click.echo(f"{f}: cannot be read: {_malformed(f, e)}")
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
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write [default: the record's path with .html].")
@click.option("--logs", is_flag=True, help="Include the bots' logs (escaped, in <pre>).")
def html(file: Path, output: Path | None, logs: bool) -> None:
    """Write a record as one self-contained HTML page that steps through the game hand by
    hand and trick by trick (no network, no external files)."""
    out = output or file.with_suffix(".html")
    if out.resolve() == file.resolve():
        raise click.ClickException(f"{out} is the record itself: give another -o/--output")
    try:
        page = render_html(_load(file), logs=logs)
    except MALFORMED as e:
        raise click.ClickException(_malformed(file, e)) from None
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as e:
        raise click.ClickException(f"cannot write {out}: {e.strerror}") from None
    click.echo(f"wrote {out}")
