"""`moon new-bot`: a new bot folder from a template, ready to build and play."""

from __future__ import annotations

from pathlib import Path

import click

from ..bots.starters import LANGUAGES, next_steps, scaffold, shown


@click.command("new-bot")
@click.argument("name")
@click.option("--lang", type=click.Choice(LANGUAGES), default="python", show_default=True,
              help="python (the SDK), node (@grpc/grpc-js), go (grpc-go), java (Maven, "
                   "grpc-java), typescript (tsc, @grpc/grpc-js), cpp (CMake, over stdio), or "
                   "stdio (any program that reads and writes JSON lines).")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="Where to make the bot's folder.")
def new_bot(name: str, lang: str, directory: Path) -> None:
    """Make a new bot folder DIR/NAME that builds and plays out of the box: a manifest
    (bot.toml), the code, and a README with the three things to change.

    \b
    Example:  moon new-bot mybot --lang go
              cd mybot && go build -o bot . && cd ..
              moon play ./mybot random heuristic
    """
    target = scaffold(name, lang, directory)
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    top = [f for f in files if "/" not in f]
    folders = sorted({f.split("/")[0] + "/" for f in files if "/" in f})
    click.echo(f"made {shown(target)} ({lang}): {', '.join(top + folders)}")
    click.echo("next (see its README.md):")
    for step in next_steps(target, lang):
        click.echo(f"  {step}")
