"""`moon ladder run|show`: duplicate ladders with ratings and resumable results."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from moon_sdk.rules import PRESETS
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ..core.labels import fit_width, unique_labels
from ..core.text import clean, clean_line
from ..ladder.config import (
    ON_CHANGE,
    LadderConfig,
    concurrency_warning,
    ladder_from_dict,
    load_ladder,
)
from ..ladder.runner import Reporter, RunSummary
from ..ladder.schedule import ScheduledGame
from ..ladder.sets import game_entries
from ..ladder.store import GameRow, ResultsStore
from ..sandbox.containment import cleanup_stale_once
from . import stops
from .console import make_console, say_err
from .options import parse_options, time_options
from .play import resolve_bot

if TYPE_CHECKING:  # imported where used: scipy and openskill only when a command needs them
    from ..executor.local import FinishedGame
    from ..ladder.ratings import LiveRatings


@click.group()
def ladder() -> None:
    """Run a ladder among bots, or show one's results."""


def _config(file: Path | None, bots: tuple[str, ...], overrides: dict[str, Any]) -> LadderConfig:
    """The ladder from its file, or from ``--bot`` folders.

    Raises:
        ConfigError: a bad ladder file or flag value (the message names it).
        click.UsageError: neither a file nor two bots.
    """
    if file is not None and bots:
        raise click.UsageError(
            f"--bot makes a ladder without a file: {file}'s bots are its [[bots]] entries; "
            "add one there, or play a bot against them with --gauntlet BOT")
    if file is not None:
        return load_ladder(file, overrides)
    if len(bots) < 2:
        raise click.UsageError("give a ladder file, or at least two --bot folders")
    specs = [resolve_bot(b) for b in bots]  # folders, or example bot names
    data = {"ladder": {"name": "-".join(s.name for s in specs)[:64]},
            "bots": [{"path": str(s.folder)} for s in specs]}
    return ladder_from_dict(data, Path("--bot"), overrides=overrides)


LIVE_CAPTION = ("live view: OpenSkill, updated as each game finishes, ordered by μ − 3σ (a "
                "cautious figure that rises as σ, its uncertainty, shrinks); the final "
                "leaderboard after the run replaces it")


def _live_table(live: LiveRatings, width: int) -> Table:
    """The live view, bots labelled distinctly within ``width`` columns."""
    t = Table(title="live ratings (OpenSkill)", title_justify="left", caption=LIVE_CAPTION,
              caption_justify="left")
    for c in ("bot", "μ", "σ", "μ − 3σ", "games"):
        t.add_column(c, justify="left" if c == "bot" else "right", no_wrap=True)
    rows = live.table()
    names = [b for b, *_ in rows]
    full = unique_labels(names)
    room = fit_width(width, 3 * 6 + 5, 5, max((len(x) for x in full), default=1))
    for (b, mu, sigma, cons), label in zip(rows, unique_labels(names, room), strict=True):
        t.add_row(escape(label), f"{mu:.1f}", f"{sigma:.1f}", f"{cons:.1f}",
                  str(live.games.get(b, 0)))
    return t


PLAIN_EVERY_S = 5.0
"""When the output is not a terminal (a CI log, ``| tee``, `make demo` piped), where the
progress bar cannot redraw itself: a plain progress line at most this often (seconds),
and after the last game."""


def _clock(seconds: float) -> str:
    """``seconds`` as ``1:02:03`` or ``2:03`` (whole seconds)."""
    m, sec = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def progress_line(done: int, total: int, before: int, elapsed_s: float) -> str:
    """The plain progress line: games done of the total, the rate of this run's games, the
    time since the first game and the time left at that rate.

    >>> progress_line(30, 144, 0, 120.0)
    'games 30/144 (21%), 15.0/min, 2:00 elapsed, about 7:36 left'
    >>> progress_line(144, 144, 100, 59.0)
    'games 144/144 (100%), 44.7/min, 0:59 elapsed, about 0:00 left'
    """
    played = done - before
    per_min = played / elapsed_s * 60 if elapsed_s > 0 else 0.0
    left = f"about {_clock((total - done) / per_min * 60)} left" if per_min else "time left: ?"
    return (f"games {done}/{total} ({round(done * 100 / max(total, 1))}%), {per_min:.1f}/min, "
            f"{_clock(elapsed_s)} elapsed, {left}")


class _LiveReporter(Reporter):
    """`moon ladder run`'s view of a run: the bots left out as they are, a progress bar
    over the games this run can play (with games per minute), and the live ratings; when
    the output is not a terminal, a plain line every :data:`PLAIN_EVERY_S` seconds too."""

    def __init__(self, console: Console, live: LiveRatings, results: Path) -> None:
        self.console = console
        self.ratings = live
        self.results = results
        self.live: Live | None = None
        self.progress = Progress(TextColumn("[bold]games"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                                 TextColumn("ETA"), TimeRemainingColumn(), console=console)
        self.task = self.progress.add_task("games", total=None, rate="")
        self.start = 0.0
        self.played = 0
        self.plain = not console.is_terminal
        self.total = 0
        self.before = 0
        self.last_line = 0.0

    def view(self) -> Group:
        """The progress bar above the live ratings."""
        return Group(self.progress, _live_table(self.ratings, self.console.width))

    def bot_left_out(self, bot: str, why: str) -> None:
        self.console.print(f"[red]left out[/] {escape(clean_line(bot))}: {escape(clean(why))}")

    def bot_output(self, bot: str, lines: list[str], record: Path | None) -> None:
        more = f" (more: `moon replay show --logs {record}`)" if record else ""
        self.console.print(f"the end of its output{escape(more)}:", highlight=False)
        for line in lines:
            self.console.print(f"  | {escape(clean_line(line))}", highlight=False)

    def build_note(self, line: str) -> None:
        say_err(line)

    def planned(self, summary: RunSummary) -> None:
        # the bar counts what this run can play: games with a bot left out are not coming
        self.progress.update(self.task, total=summary.already_done + summary.to_play,
                             completed=summary.already_done)
        self.start = self.last_line = time.monotonic()
        self.total = summary.already_done + summary.to_play
        self.before = summary.already_done
        if summary.already_done:
            self.console.print(f"resuming {escape(str(self.results))}: "
                               f"{summary.already_done} of {summary.scheduled} games done")
        if self.plain:
            self.console.print(f"playing {summary.to_play} game(s); a progress line every "
                               f"{PLAIN_EVERY_S:g} s", highlight=False)

    def game_finished(self, game: ScheduledGame, finished: FinishedGame, row: GameRow) -> None:
        self.played += 1
        self.ratings.update(row)
        per_min = self.played / max(1e-9, time.monotonic() - self.start) * 60
        self.progress.update(self.task, advance=1, rate=f"{per_min:.1f}/min")
        if self.live is not None:
            self.live.update(self.view())
        self._plain_line()

    def game_skipped(self, game: ScheduledGame, why: str) -> None:
        self.progress.update(self.task, advance=1)
        self._plain_line()

    def _plain_line(self) -> None:
        """Where the bar cannot redraw itself: the plain line, if it is time for one."""
        if not self.plain:
            return
        now = time.monotonic()
        done = int(self.progress.tasks[0].completed)
        if now - self.last_line >= PLAIN_EVERY_S or done >= self.total:
            self.last_line = now
            self.console.print(progress_line(done, self.total, self.before, now - self.start),
                               highlight=False)


@ladder.command()
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False,
                                                         path_type=Path))
@click.option("--results", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Results file (SQLite); default runs/<ladder name>.sqlite. "
                   "An existing file is resumed.")
@click.option("--bot", "bots", multiple=True,
              help="A bot folder or an example bot's name (repeatable), for a ladder without "
                   "a file; with a FILE, use --gauntlet.")
@click.option("--boards", type=int, default=None, help="Number of boards (seeded deals).")
@click.option("--concurrency", "-j", type=int, default=None, help="Games at once.")
@click.option("--seed", type=int, default=None, help="Master seed of the boards.")
@click.option("--preset", default=None, type=click.Choice(list(PRESETS)),
              help="Ruleset preset [default: the ladder file's, else moon3].")
@click.option("--check/--no-check", default=None,
              help="Check each bot first with one hand against itself; a bot that forfeits "
                   "it is left out (default: on).")
@click.option("--fork-server/--no-fork-server", default=None,
              help="Fork Python SDK bots from a warm server, a fresh process per game all "
                   "the same (default: on, unless MOON_FORK_SERVER=0); --no-fork-server "
                   "starts each bot as a process.")
@click.option("--max-forfeits", type=int, default=None, metavar="N",
              help="Drop a bot once it has forfeited N games (default 0: never).")
@click.option("--gauntlet", "gauntlet", multiple=True, metavar="BOT",
              help="A challenger (repeatable): a bot of the ladder by name, or a bot folder "
                   "(added to the ladder's bots for this run); only the games with a "
                   "challenger in them are played, against the rest as a pool.")
@click.option("--option", "-o", "options", multiple=True, metavar="NAME=VALUE",
              help="Override a ruleset option of the ladder, e.g. -o min_bid=3.")
@click.option("--on-change", type=click.Choice(ON_CHANGE), default=None,
              help="When a bot's code changed since its games in the results file: refuse "
                   "to run (default), enter it as a new version rated separately "
                   "(name@version), or replace the old version in the ratings.")
@click.option("--cluster", default=None, metavar="tcp://HOST:PORT",
              help="Play the games on the workers of this Dask scheduler "
                   "(docs/distributed.md); games at once follow the workers' seats unless "
                   "-j is given. Needs moon-arena[cluster].")
@time_options
@click.option("--bootstrap", type=int, default=200, show_default=True,
              help="Bootstrap resamples for the rating intervals.")
def run(file: Path | None, results: Path | None, bots: tuple[str, ...], boards: int | None,
        concurrency: int | None, seed: int | None, preset: str | None, check: bool | None,
        fork_server: bool | None, max_forfeits: int | None, gauntlet: tuple[str, ...],
        options: tuple[str, ...], on_change: str | None, cluster: str | None, bootstrap: int,
        **tc: int | None) -> None:
    """Play a ladder (resuming RESULTS if it exists) and print the leaderboard.

    \b
    Example:  moon ladder run ladders/demo.toml
              moon ladder run --bot ./mybot --bot heuristic --bot random -j 2
              moon ladder run ladders/demo.toml --gauntlet random --results runs/g.sqlite
              moon ladder run ladders/demo.toml --gauntlet ./mybot
              moon ladder run ladders/demo.toml --cluster tcp://10.0.0.5:8786
    """
    cfg = _config(file, bots, {"boards": boards, "concurrency": concurrency, "seed": seed,
                               "preset": preset, "gauntlet": list(gauntlet) or None,
                               "check": check, "max_forfeits": max_forfeits,
                               "fork_server": fork_server,
                               "on_change": on_change,
                               "cluster": cluster,
                               "options": parse_options(options) or None,
                               "time_control": {k: v for k, v in tc.items() if v is not None}
                               or None})
    if results is None and cfg.joined:  # another ladder: the ladder file's and more bots
        results = Path("runs") / f"{cfg.name}-gauntlet-{'-'.join(cfg.joined)}.sqlite"
    if results is None:
        results = cfg.results or Path("runs") / f"{cfg.name}.sqlite"
    from ..ladder.ratings import LiveRatings
    from ..ladder.report import build_report, print_report
    from ..ladder.runner import open_store, records_dir, run_ladder

    console = make_console()
    executor = None
    if cfg.cluster:  # the workers' seats say how many bots run at once, not this machine
        from ..cluster import DaskExecutor

        executor = DaskExecutor(cfg.cluster, records_dir(results), capacity=concurrency,
                                players=cfg.ruleset.players)
    crowded = None if cfg.cluster else concurrency_warning(cfg)
    if crowded:
        console.print(f"[yellow]warning[/]: {escape(crowded)}")
    cleanup_stale_once()  # bots and cgroups a killed earlier run left behind
    store = open_store(cfg, results)
    live = LiveRatings([b.name for b in cfg.bots])
    current = {(b.name, cfg.versions.get(b.name, "")) for b in cfg.bots}
    for g in store.games():
        if set(game_entries(g)) <= current:  # the live view: this run's bots only
            live.update(g)
    reporter = _LiveReporter(console, live, results)
    # where the output is not a terminal (a CI log, `| tee`) the plain lines are the whole
    # view: a live display there prints only its last frame, once, as it stops (a bar and a
    # table the leaderboard below replaces, and the stop's line glued to its last line)
    view: AbstractContextManager[Live | None] = (
        nullcontext() if reporter.plain
        else Live(reporter.view(), console=console, transient=False, refresh_per_second=4))
    try:
        with view as reporter.live:
            summary = stops.run(run_ladder(cfg, store, results, reporter, executor))
    except KeyboardInterrupt:
        kept = len(store.done_ids())
        store.close()
        stops.stopped(stops.results_kept(kept, results))
    console.print()
    if summary.voided:
        console.print(f"{summary.voided} game(s) voided by infrastructure faults and replayed")
    for name, why in summary.dropped_bots.items():
        console.print(f"[red]dropped[/] {escape(clean_line(name))}: {escape(clean_line(why))}")
    if summary.skipped_games:
        console.print(f"{summary.skipped_games} game(s) with a dropped bot not played; run "
                      "again (after fixing it, or with a higher --max-forfeits) to play them")
    print_report(console, build_report(store, bootstrap=bootstrap),
                 live_note=not reporter.plain)
    console.print(f"results: {escape(str(results))}")
    store.close()
    if summary.scheduled and not summary.played and not summary.already_done:
        raise click.ClickException(
            "no game could be played"
            + (f": left out {', '.join(summary.skipped_bots)}" if summary.skipped_bots else "")
            + "; fix those bots (the reasons are above) or add others")


@ladder.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True,
              help="Tables for people; CSV (one row per bot) or JSON (everything) for tools, "
                   "with names never cut.")
@click.option("--bootstrap", type=int, default=200, show_default=True,
              help="Bootstrap resamples for the rating intervals.")
@click.option("--reveal-seed", is_flag=True,
              help="Include the master seed even though the ladder is not finished (it "
                   "gives away every deal of the ladder).")
def show(results: Path, fmt: str, bootstrap: int, reveal_seed: bool) -> None:
    """Show a ladder's leaderboard, cross-table and per-bot statistics.

    The master seed is left out of the exports while the ladder is not finished (every
    scheduled game played), unless --reveal-seed.

    \b
    Example:  moon ladder show runs/demo.sqlite
              moon ladder show runs/demo.sqlite --format csv > demo.csv
    """
    if results.suffix == ".toml":
        raise click.ClickException(f"{results} is a ladder file; `moon ladder show` reads its "
                                   "results (runs/<ladder name>.sqlite, or the file its "
                                   "`results =` names)")
    from ..ladder.report import build_report, export, print_report

    store = ResultsStore(results)
    if store.meta().get("kind") == "match":
        store.close()
        raise click.ClickException(f"{results} holds an A/B match, not a ladder: moon match "
                                   f"--results {results} --show")
    rep = build_report(store, bootstrap=bootstrap, reveal_seed=reveal_seed)
    if fmt == "table":
        print_report(make_console(), rep)
    else:
        click.echo(export(rep, fmt), nl=False)
    store.close()


