"""`moon play`: one game between bots, with a referee started for it."""

from __future__ import annotations

import asyncio
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from ..bots.manifest import BotSpec, load_bot, missing_command
from ..bots.resources import find_bot_folder
from ..core.text import clean, clean_line
from ..core.timecontrol import NO_LIMIT_MS
from ..errors import BotError, ConfigError
from ..records.printing import print_game
from ..sandbox.containment import cleanup_stale_once
from ..table import HUMAN, HUMAN_BANK_MS, HUMAN_DECISION_MS
from . import stops
from .console import make_console
from .options import TIME_FIELDS, make_ruleset, make_time_control, ruleset_options, time_options

if TYPE_CHECKING:
    from moon_sdk.rules import Ruleset
    from rich.console import Console

    from ..core.timecontrol import TimeControl
    from ..records.record import GameRecord
    from ..referee.referee import Match

FORFEIT_EXIT = 3
"""`moon play`'s exit code when a bot forfeited the game."""
MANUAL_STARTUP_MS = 600_000
"""With a seat started by hand (``manual``), the start-up limit unless given: 10 minutes."""
FORFEIT_LOG_LINES = 20
"""How many of the last lines of a forfeiting bot's output `moon play` shows."""


def resolve_bot(arg: str) -> BotSpec:
    """A bot from a folder path, a bot.toml path, or the name of an example bot
    (:func:`arena.bots.resources.find_bot_folder`, relative to the current folder).

    Raises:
        click.BadParameter: nothing by that name, or a bad manifest.
    """
    try:
        return load_bot(find_bot_folder(arg, Path.cwd()))
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint="BOTS") from None


def build_local_bots(specs: list[BotSpec]) -> None:
    """Build (if stale) every local bot with a build command, saying so on stderr as each
    build starts and ends, then check each one's run command can start.

    Raises:
        BotError: a build failed, its tool is missing, or a program is not found.
    """
    from ..sandbox.stamps import ensure_built, missing_tool
    from .console import say_err

    for spec in {s.folder: s for s in specs if s.runner == "local"}.values():
        if spec.build:
            why = missing_tool(spec)
            if why:
                raise BotError(f"cannot build {spec.name}: {why}")
            ensure_built(spec, say=say_err)
        problem = missing_command(spec)
        if problem:
            raise BotError(problem)


def prepare_docker_bots(specs: list[BotSpec]) -> None:
    """Before the game: remove containers a crashed run left, build (or find) the image of
    every ``runner = "docker"`` bot.

    Raises:
        InfrastructureError: no Docker engine (:class:`~arena.sandbox.SandboxError`).
        BotError: a bot's image cannot be built.
    """
    docker_bots = {s.folder: s for s in specs if s.runner == "docker"}
    if not docker_bots:
        return
    from ..sandbox import build, cleanup_stale

    cleanup_stale()
    for spec in docker_bots.values():
        build(spec)


@click.command()
@click.argument("bots", nargs=-1, required=True)
@ruleset_options
@click.option("--seed", type=int, default=None, help="Seed of the deals (random if omitted).")
@click.option("--records", type=click.Path(file_okay=False, path_type=Path),
              default=Path("runs/records"), show_default=True, help="Folder for the record.")
@click.option("--tcp", is_flag=True, help="Serve on TCP 127.0.0.1 instead of a Unix socket.")
@click.option("--human-decision-ms", type=click.IntRange(0, NO_LIMIT_MS),
              default=HUMAN_DECISION_MS, metavar="N",
              show_default=True, help="A `human` seat's time per decision.")
@click.option("--human-bank-ms", type=click.IntRange(0, NO_LIMIT_MS),
              default=HUMAN_BANK_MS, metavar="N",
              show_default=True, help="A `human` seat's time bank for the game.")
@click.option("--web", is_flag=True,
              help="The `human` seat at a page in your browser instead of this terminal "
                   "(served on 127.0.0.1 for this game).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="With --web: the page's port (0: any free one).")
@click.option("--no-open", is_flag=True, help="With --web: print the page's address, do "
              "not open a browser.")
@time_options
def play(bots: tuple[str, ...], preset: str, options: tuple[str, ...], seed: int | None,
         records: Path, tcp: bool, human_decision_ms: int, human_bank_ms: int, web: bool,
         port: int, no_open: bool, **tc: Any) -> None:
    """Play one game to the end between BOTS (3 or 4 bot folders or example names,
    seat 0 first), print it hand by hand, and write its record.

    A BOT given as `human` is you, in the seat its place names (`moon play random human
    heuristic`: seat 1), at the table in this terminal: at each of your turns it shows
    your hand, the auction, the trick, the scores and your clock, and takes the
    number of a legal action or its name (`6-4`, `bid 5`, `pass`, `trumps doubles`); `q`
    or the end of input (Ctrl-D, Ctrl-C) leaves the game, a forfeit. Your seat has its own
    clock (--human-decision-ms, --human-bank-ms); the bots keep theirs. With --web the
    table is a page in your browser instead (click a tile, the bids and trumps are
    buttons, the digits pick the numbered choices), served on 127.0.0.1 for this game.

    A BOT given as `manual` is a seat you start yourself (in a debugger, say): the command
    prints the MOON_ADDRESS and MOON_TOKEN to start it with, and waits for it (10 minutes
    unless --startup-ms says otherwise). A manual seat has no decision limit (you may pause
    in a debugger) unless --decision-ms or --bank-ms gives one; the other seats keep theirs.

    Exit code 0 when the game ends by the rules, 3 when a bot forfeits (a timeout, crash,
    protocol error or illegal actions: the record tells which), 1 or 2 when the game
    cannot be played (a bad bot folder or option).

    \b
    Example:  moon play human heuristic random
              moon play human ./mybot random --web
              moon play random human ./mybot --web
              moon play heuristic random heuristic
              moon play --preset moon4 heuristic random heuristic random
              moon play manual random heuristic
    """
    from ..executor.game import MANUAL, play_game, serving
    from ..records.record import GameRecord
    from ..referee.referee import Referee, game_record

    ruleset = make_ruleset(preset, options)
    if len(bots) != ruleset.players:
        hint = " (use --preset moon4 for 4 players)" if len(bots) == 4 else ""
        raise click.UsageError(f"this ruleset is for {ruleset.players} players: give "
                               f"{ruleset.players} bots, not {len(bots)}{hint}")
    humans = [seat for seat, b in enumerate(bots) if b == HUMAN]
    if len(humans) > 1:
        raise click.UsageError("one `human` seat per game: the others are bots")
    specs = [BotSpec(name=b, folder=Path.cwd(), run="", runner=MANUAL) if b in (MANUAL, HUMAN)
             else resolve_bot(b) for b in bots]
    cleanup_stale_once()  # bots and cgroups a killed earlier arena left behind
    stops.saying("stopped before the game began: nothing was played or recorded")
    build_local_bots(specs)
    prepare_docker_bots(specs)
    manual = [seat for seat, s in enumerate(specs) if s.runner == MANUAL and s.name == MANUAL]
    if manual and tc.get("startup_ms") is None:
        tc["startup_ms"] = MANUAL_STARTUP_MS  # time to start a bot by hand
    time_control = make_time_control(**{k: tc[k] for k in TIME_FIELDS})
    limited = tc.get("decision_ms") is not None or tc.get("bank_ms") is not None
    seat_clocks = {} if limited else {seat: (NO_LIMIT_MS, 0) for seat in manual}
    console = make_console()
    if web and not humans:
        raise click.UsageError("--web is for a `human` seat: name one among the BOTS")
    if humans:
        seat_clocks[humans[0]] = (human_decision_ms, human_bank_ms)
        page = WebOptions(port, not no_open) if web else None
        record = play_with_person(console, humans[0], specs, ruleset, preset, seed, records,
                                  make_time_control(**{k: tc[k] for k in TIME_FIELDS}),
                                  seat_clocks, tcp, page)
        report_end(console, record, specs)
        return

    async def run() -> GameRecord:
        referee = Referee(record_dir=records)
        async with serving(referee, "127.0.0.1:0" if tcp else None,
                           match_service=False) as ep:

            def tell(match: Match) -> None:
                stops.saying(lambda: stopped_game(match))
                clock = ("no decision limit (--decision-ms to set one)" if seat_clocks else
                         f"{time_control.decision_ms} ms a decision plus a "
                         f"{time_control.bank_ms} ms bank")
                for seat in manual:
                    click.echo(f"seat {seat} is yours: start your bot with\n"
                               f"  MOON_ADDRESS={ep.address} MOON_TOKEN={match.tokens[seat]}\n"
                               f"(waiting up to {time_control.startup_ms // 1000} s for it "
                               f"to join; then {clock})", err=True)

            match = await play_game(referee, ep, specs, ruleset, preset=preset, seed=seed,
                                    tc=time_control, on_start=tell, seat_clocks=seat_clocks)
        record = GameRecord.from_dict(game_record(match), match.record_path)
        print_game(console, record, forfeit=False)  # said once, below, with the output
        console.print(f"record: {escape(match.record_path)}")
        return record

    record = stops.run(run())
    report_end(console, record, specs)


def stopped_game(match: Match) -> str:
    """The line of a game stopped before its end: its record (as far as it went), if
    written."""
    path = match.record_path
    if path and Path(path).is_file():
        return (f"stopped: the game was aborted unfinished (no result); its record as far "
                f"as it went: {clean_line(path)}")
    return "stopped: the game was aborted unfinished; nothing was recorded"


def report_end(console: Console, record: GameRecord, specs: list[BotSpec]) -> None:
    """After the game: a forfeit's line and the end of the forfeiting bot's output, and
    exit code 3 (:data:`FORFEIT_EXIT`); nothing (exit 0) for a game that ended by the
    rules."""
    forfeit = record.result.forfeit
    if forfeit is not None and forfeit.seat is not None:
        seat = forfeit.seat
        name = record.seats[seat].shown_name if seat < len(record.seats) else specs[seat].name
        click.echo(f"seat {seat} ({clean_line(name)}) forfeited: "
                   f"{clean_line(forfeit.reason)}"
                   + (f": {clean_line(forfeit.detail)}" if forfeit.detail else ""), err=True)
        tail = clean(record.logs.get(str(seat), "")).rstrip().splitlines()
        if tail and specs[seat].name != HUMAN:  # a person's seat has no output
            click.echo("the end of its output (more: `moon replay show --logs RECORD`):",
                       err=True)
            for line in tail[-FORFEIT_LOG_LINES:]:
                click.echo(f"  | {line}", err=True)
        raise SystemExit(FORFEIT_EXIT)


@dataclass(frozen=True)
class WebOptions:
    """``moon play --web``: the page's port (0: any free one), whether to open a browser."""

    port: int
    open_browser: bool


WEB_LINGER_S = 900.0
"""How long the page stays up after the game, for its replay, unless the person closes it."""


def play_with_person(console: Console, seat: int, specs: list[BotSpec], ruleset: Ruleset,
                     preset: str, seed: int | None, records: Path, time_control: TimeControl,
                     seat_clocks: dict[int, tuple[int, int]], tcp: bool,
                     web: WebOptions | None = None) -> GameRecord:
    """Play one game with a person at ``seat``, in this terminal or (``web``) at a page:
    the referee and the bots run on a thread of their own, the person's seat (a client of
    the referee, like a bot) on this one, where the keyboard's Ctrl-C lands. A person who
    leaves forfeits (a disconnect: :class:`~arena.table.seat.HumanSeat`). Returns the
    game's record, after printing its hand-by-hand table and path; a page stays up with
    the game's end and its replay until the person closes it (or :data:`WEB_LINGER_S`),
    unless they left by a signal (Ctrl-C, SIGTERM), which ends the page too.

    Raises:
        BotError: a bot's build failed (before the game).
    """
    import queue
    import threading

    from ..executor.game import play_game, serving
    from ..records.record import GameRecord
    from ..referee.referee import Referee, game_record
    from ..table.seat import HumanSeat, LeftTable, Person, sit
    from ..table.terminal import TerminalPerson
    from ..table.web import TableServer, WebPerson
    from ..table.words import record_line

    person_seat = HumanSeat()
    joined: queue.Queue[tuple[str, str] | BaseException] = queue.Queue()
    finished: list[Match] = []

    async def run() -> None:
        referee = Referee(record_dir=records)
        async with serving(referee, "127.0.0.1:0" if tcp else None,
                           match_service=False) as ep:
            finished.append(await play_game(
                referee, ep, specs, ruleset, preset=preset, seed=seed, tc=time_control,
                seat_clocks=seat_clocks, processes={seat: person_seat},
                on_start=lambda m: joined.put((ep.address, m.tokens[seat]))))

    def game() -> None:
        try:
            asyncio.run(run())
        except BaseException as e:  # said on the person's thread, which waits for it
            joined.put(e)

    thread = threading.Thread(target=game, name="moon-table", daemon=True)
    thread.start()
    got = joined.get()
    if isinstance(got, BaseException):
        raise got
    address, token = got
    server = None
    person: Person
    if web is None:
        person = TerminalPerson(console)
    else:
        person = WebPerson()
        try:
            server = TableServer(person, web.port)
        except OSError as e:
            person_seat.left(f"the page could not be served: {e}")
            thread.join()
            raise BotError(f"cannot serve the table on 127.0.0.1:{web.port}: {e.strerror}; "
                           "choose another --port") from None
        server.start()
        console.print(f"your table: {server.url}", highlight=False, soft_wrap=True)
        console.print("(Ctrl-C here leaves the game, a forfeit)", highlight=False)
        if web.open_browser:
            webbrowser.open(server.url)
    signalled = False  # Ctrl-C or SIGTERM: the person is gone, and so is their page
    try:
        sit(person, address, token)
    except (LeftTable, KeyboardInterrupt) as e:
        how = str(e) if isinstance(e, LeftTable) else "Ctrl-C"
        signalled = isinstance(e, KeyboardInterrupt)
        person_seat.left(how)
        console.print(f"you left the game ({escape(how)}): a forfeit")
    except (ConnectionError, OSError) as e:
        person_seat.left(f"the seat's connection failed: {e}")
    thread.join()
    if not finished:
        failed = joined.get_nowait() if not joined.empty() else None
        raise failed if isinstance(failed, BaseException) else BotError("the game did not run")
    match = finished[0]
    record = GameRecord.from_dict(game_record(match), match.record_path)
    print_game(console, record, forfeit=False)
    if server is not None and signalled:
        server.stop()
    elif server is not None and isinstance(person, WebPerson):
        from ..web.replay import render_html

        server.replay_html = render_html(record)
        person.finish(record_line(record), match.record_path)
        console.print("the page shows the end and the replay; close it with its done "
                      "button (or Ctrl-C here)", highlight=False)
        try:
            person.closed.wait(WEB_LINGER_S)
        except KeyboardInterrupt:
            pass
        server.stop()
    # whole lines however narrow the terminal (a path to copy must not break)
    console.print(f"record: {escape(match.record_path)}", highlight=False, soft_wrap=True)
    console.print(f"watch it: moon replay html {escape(match.record_path)}",
                  highlight=False, soft_wrap=True)
    return record
