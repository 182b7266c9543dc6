"""`moon match A B`: is A stronger than B? Duplicate boards, an Elo difference with its
interval, and an SPRT that stops as soon as the answer is clear (docs/match.md)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from ..core.text import clean_line
from ..errors import ConfigError
from ..ladder.schedule import ScheduledGame
from ..ladder.store import GameRow, ResultsStore
from ..sandbox.containment import cleanup_stale_once
from . import stops
from .console import make_console, say_err
from .options import make_ruleset, make_time_control, ruleset_options, time_options
from .play import resolve_bot


class _LiveReporter:
    """`moon match`'s live line: games, score, Elo ± interval, LOS, LLR and its bounds."""

    def __init__(self, console: Console, a: str, b: str) -> None:
        self.console, self.a, self.b = console, a, b
        self.live: Live | None = None

    def line(self, status: object) -> Text:
        from ..ladder.match import MatchStatus, progress_line

        assert isinstance(status, MatchStatus)
        return Text(progress_line(status, self.a, self.b))

    def started(self, status: object) -> None:
        from ..ladder.match import MatchStatus

        assert isinstance(status, MatchStatus)
        if status.games:
            self.console.print(f"resuming: {status.games} game(s) recorded")
        if self.live is not None:
            self.live.update(self.line(status))

    def game_finished(self, game: ScheduledGame, row: GameRow, status: object) -> None:
        if self.live is not None:
            self.live.update(self.line(status))

    def build_note(self, line: str) -> None:
        say_err(line)

    def game_voided(self, game: ScheduledGame, error: Exception, retry: bool) -> None:
        self.console.print(f"[yellow]voided[/] {game.game_id}: {escape(clean_line(error))}"
                           + (" (played again)" if retry else ""))


@click.command()
@click.argument("bots", nargs=-1)
@click.option("--against", multiple=True, metavar="BOT",
              help="A third bot at 3-player tables (repeatable; default: the heuristic "
                   "example). Each board is played with each.")
@ruleset_options
@click.option("--games", type=int, default=None, metavar="N",
              help="Stop after N games (whole boards). With --sprt: at most N.")
@click.option("--sprt", is_flag=True,
              help="Stop when the SPRT decides (the default without --games).")
@click.option("--elo0", type=float, default=None, help="SPRT H0: A is elo0 stronger "
              "(logistic Elo) [default: 0]; implies --sprt.")
@click.option("--elo1", type=float, default=None, help="SPRT H1: A is elo1 stronger "
              "[default: 10]; implies --sprt.")
@click.option("--alpha", type=float, default=None,
              help="SPRT false-positive rate (H1 accepted when H0 holds) [default: 0.05].")
@click.option("--beta", type=float, default=None,
              help="SPRT false-negative rate (H0 accepted when H1 holds) [default: 0.05].")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Master seed of the boards.")
@click.option("--concurrency", "-j", type=int, default=1, show_default=True,
              help="Games at once.")
@click.option("--results", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Results file (SQLite); default runs/match-<A>-vs-<B>-... .sqlite. An "
                   "existing file is resumed.")
@click.option("--check/--no-check", default=True,
              help="Check each bot first with one hand against itself (default: on).")
@click.option("--fork-server/--no-fork-server", default=None,
              help="Fork Python SDK bots from a warm server, a fresh process per game all "
                   "the same (default: on, unless MOON_FORK_SERVER=0); --no-fork-server "
                   "starts each bot as a process.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True, help="The final output: the figures, or an export.")
@click.option("--show", is_flag=True,
              help="Play nothing: show what the results file holds.")
@time_options
def match(bots: tuple[str, ...], against: tuple[str, ...], preset: str,
          options: tuple[str, ...], games: int | None, sprt: bool, elo0: float | None,
          elo1: float | None, alpha: float | None, beta: float | None, seed: int,
          concurrency: int, results: Path | None, check: bool, fork_server: bool | None,
          fmt: str, show: bool,
          **tc: int | None) -> None:
    """Play bot A against bot B on duplicate boards and say which is stronger.

    A and B are bot folders or example bot names (two versions of one bot are two
    folders). Live: games, A's score, the Elo difference with its 95% interval, LOS, and
    the SPRT's log-likelihood ratio against its bounds. Stopped and run again, it resumes.

    \b
    Example:  moon match ./mybot ./mybot-old                 (SPRT, elo0=0 elo1=10)
              moon match ./mybot heuristic --games 600 --preset moon4
              moon match ./mybot heuristic --elo0 0 --elo1 20 -j 2
              moon match --results runs/m.sqlite --show --format json
    """
    from ..ladder.match import (
        THIRD,
        export_match,
        make_match,
        progress_line,
        status_of,
        verdict_line,
    )
    from ..stats.match import SPRT

    test = None
    explicit = sprt or any(x is not None for x in (elo0, elo1, alpha, beta))
    if explicit or games is None:
        try:
            test = SPRT(0.0 if elo0 is None else elo0, 10.0 if elo1 is None else elo1,
                        0.05 if alpha is None else alpha, 0.05 if beta is None else beta)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--elo0/--elo1/--alpha/--beta"
                                     ) from None
    out = make_console(stderr=fmt != "table")  # an export alone on stdout
    if show and not bots:
        if results is None:
            raise click.UsageError("--show needs the match's bots or its --results file")
        _show(ResultsStore(results), test if explicit else None, fmt, out)
        return
    if len(bots) != 2:
        raise click.UsageError("give two bots, A and B (folders or example bot names)")
    a, b = (resolve_bot(x) for x in bots)
    ruleset = make_ruleset(preset, options)
    thirds = [resolve_bot(x) for x in against] or ([resolve_bot(THIRD)]
                                                   if ruleset.players == 3 else [])
    if against and ruleset.players != 3:
        raise click.BadParameter(f"{preset} has {ruleset.players} players: a third bot "
                                 "sits only at 3-player tables", param_hint="--against")
    cfg = make_match(a, b, thirds, ruleset, preset, seed, make_time_control(**tc),
                     concurrency=concurrency, games=games, sprt=test, check=check,
                     fork_server=fork_server)
    if results is None:
        va, vb = (cfg.versions[s.name] for s in (cfg.a, cfg.b))
        results = Path("runs") / f"match-{preset}-{cfg.a.name}-{va}-vs-{cfg.b.name}-{vb}.sqlite"
    if show:
        if not results.exists():
            raise ConfigError(f"{results}: no such results file; play the match first")
        _show(ResultsStore(results), test if explicit else None, fmt, out)
        return
    if concurrency < 1:
        raise click.BadParameter(f"{concurrency}: must be at least 1", param_hint="-j")
    from ..ladder.config import concurrency_warning
    from ..ladder.match import open_match, run_match

    crowded = concurrency_warning(cfg.as_ladder())
    if crowded:
        out.print(f"[yellow]warning[/]: {escape(crowded)}")
    names = {cfg.a.name: "A", cfg.b.name: "B"}
    out.print(" · ".join(f"{names.get(s.name, 'third')} = {escape(cfg.entry(s))}"
                         for s in (cfg.a, cfg.b, *cfg.thirds)) + f" · {preset}, seed {seed}")
    cleanup_stale_once()  # bots and cgroups a killed earlier run left behind
    store = open_match(cfg, results)
    reporter = _LiveReporter(out, cfg.a.name, cfg.b.name)
    try:
        with Live(Text("starting"), console=out, transient=True,
                  refresh_per_second=4) as reporter.live:
            stops.run(run_match(cfg, store, results, reporter))
    except KeyboardInterrupt:
        kept = len(store.done_ids())
        store.close()
        stops.stopped(stops.results_kept(kept, results))
    status = status_of(store, test)
    if fmt != "table":
        click.echo(export_match(store, status, fmt), nl=False)
    out.print(escape(progress_line(status, cfg.a.name, cfg.b.name)))
    out.print(escape(verdict_line(status, cfg.a.name, cfg.b.name)))
    out.print(f"results: {escape(str(results))}")
    store.close()


def _show(store: ResultsStore, test: object, fmt: str, out: Console) -> None:
    from ..ladder.match import export_match, progress_line, status_of, verdict_line
    from ..stats.match import SPRT

    status = status_of(store, test if isinstance(test, SPRT) else None)
    meta = store.meta()
    a, b = str(meta.get("a", "A")), str(meta.get("b", "B"))
    if fmt != "table":
        click.echo(export_match(store, status, fmt), nl=False)
    else:
        out.print(escape(clean_line(progress_line(status, a, b))))
    out.print(escape(clean_line(verdict_line(status, a, b))))
    store.close()
