"""The conformance check of a bot (`moon bot check FOLDER`), and the competition host's
validation gate: one code path, so that a bot that passes here is a submission the host
accepts.

The check reads the bot's ``bot.toml`` (:func:`arena.bots.manifest.load_bot`: names, limits, the
run command), builds it (:func:`try_build`), and plays it through an executor
(:mod:`arena.executor.local`) under the real time control in a few short games
(:func:`check_games`):

1. one hand against itself in every seat for each player count asked (3 and 4 for
   `moon bot check`), the dealer forced to bid so that every phase comes up (bid, pass,
   widow, discard, trumps, play), the first answer refused on purpose (a ``Rejected``:
   the bot must answer the turn that follows, :mod:`arena.referee.probes`);
2. a dropped stream: the bot must rejoin with its token and answer the turn sent again
   (docs/protocol.md, "Reconnecting"; for a stdio bot the bridge, which owns the stream,
   rejoins and the bot never notices). A bot that does not rejoin fails the check with
   :data:`NO_REJOIN`; one whose process ended instead, with its crash (exit code or
   signal: :data:`arena.referee.probes.WITHOUT_REJOINING`) and :data:`NO_REJOIN_FIX`; one that
   died before it joined, or after it joined again, with its crash as in any other game;
3. no trumps and doubles as trumps: a scripted seat (:mod:`arena.check.scripted`) bids first
   and names them, and the bot must follow suit by that trump; then a hand the bot's own
   bid wins (scripted passers beside it, the bot the dealer forced to bid), so it must
   take the widow, discard and name trumps;
4. a whole game against the example (or the host's reference) bots.

Each game is judged on the bot's own seats (:func:`judge`): every fault becomes one line
saying what went wrong and what to do (:func:`problem_line`), with the end of the bot's
output for a crash. A bot that cannot finish its hand against itself (but for the
planted refusal) has the games after it skipped (:func:`play_games`): they would fail the
same way. The check passes when no item failed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from moon_sdk.rules import GameState, Ruleset

from ..bots.manifest import BotSpec
from ..core.results import Fault, FaultReason
from ..core.text import build_error
from ..core.timecontrol import TimeControl
from ..errors import BotError, ConfigError, InfrastructureError
from ..executor.local import FinishedGame, GameRequest
from ..referee.probes import PLANTED_REJECTION, PROBED_SEAT, WITHOUT_REJOINING
from ..referee.referee import BEFORE_JOINING
from . import scripted

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits

LOG_LIMIT = 256 * 1024
"""Most of a build log kept (its end), bytes."""
TAIL_LINES = 12
"""How many of the last lines of a bot's output a failed item shows."""

_FIXES = {
    FaultReason.STARTUP_STALL: "join first thing: read MOON_ADDRESS and MOON_TOKEN and send "
                               "the join before loading anything slow (docs/protocol.md, "
                               "'The bot process')",
    FaultReason.TIMEOUT: "answer each turn within its decision_ms (the bank covers the odd "
                         "slow turn); a stdio bot must flush stdout after every line "
                         "(docs/protocol.md, 'Time')",
    FaultReason.DISCONNECT: "keep the stream open until game_ended; after a dropped stream "
                            "join again with the same MOON_TOKEN (docs/protocol.md, "
                            "'Reconnecting')",
    FaultReason.PROTOCOL_ERROR: "send one action per turn, echoing its request_id, and "
                                "nothing out of turn (docs/protocol.md, 'Illegal actions "
                                "and protocol errors')",
    FaultReason.CRASH: "the end of its output says why (`moon bot check` shows it under "
                       "this line; a host, in the version's build and validation log); "
                       "`moon play FOLDER random random` runs it alone",
    FaultReason.OUT_OF_MEMORY: "use less memory, or set [limits] memory_mb in bot.toml "
                               "(within the arena's maximum)",
}
NO_REJOIN_FIX = ("reconnect with Join{token} (the same MOON_TOKEN) within reconnect_ms and "
                 "answer the turn sent again, as docs/protocol.md, 'Reconnecting' says (the "
                 "Python SDK and the example bots do)")
"""What to do about a bot that did not come back after the planted drop."""
NO_REJOIN = f"did not rejoin after its stream was dropped: {NO_REJOIN_FIX}"
"""The problem line of a bot that did not come back after the planted drop (its process
still running)."""
SKIPPED = ("skipped: the bot did not finish a plain hand against itself (above); make that "
           "pass first")
"""The problem line of a check not played because the bot cannot finish a hand."""
_RULE_SECTIONS = (  # in order: "must follow trumps" is about play
    (re.compile(r"follow|cannot play"), "Play"),
    (re.compile(r"\bbid\b|may not pass"), "Bidding"),
    (re.compile(r"trump|discard"), "Widow, discard, trumps"),
)


def rule_section(detail: str) -> str:
    """The docs/rules.md section an illegal action's reason (the engine's wording) breaks:
    "Bidding", "Widow, discard, trumps", "Play", else "Actions" (what may be sent when).

    >>> rule_section("must follow fives: holds 5-5")
    'Play'
    >>> rule_section("must follow trumps: holds 5-5")
    'Play'
    >>> rule_section("seat 1 must bid now (BIDDING phase), not play 6-6")
    'Actions'
    """
    if "phase" in detail or detail.startswith("not an action"):
        return "Actions"
    return next((name for rx, name in _RULE_SECTIONS if rx.search(detail)), "Actions")


def problem_line(f: Fault, context: str = "", fix: str = "") -> str:
    """One line for a bot's fault: what happened (``context`` added to its kind) and what
    to do about it (``fix``, else the fix of its kind).

    >>> from arena.core.results import Fault, FaultReason
    >>> problem_line(Fault(1, FaultReason.ILLEGAL_ACTION, "must follow fives: holds 5-5",
    ...                    True))  # doctest: +NORMALIZE_WHITESPACE
    "seat 1 illegal_action: must follow fives: holds 5-5 (forfeit); fix: answer with one
    of the turn's legal_actions (docs/rules.md, 'Play')"
    """
    if fix:
        pass
    elif f.reason is FaultReason.ILLEGAL_ACTION:
        fix = ("answer with one of the turn's legal_actions (docs/rules.md, "
               f"'{rule_section(f.detail)}')")
    else:
        fix = _FIXES.get(f.reason, "see docs/protocol.md")
    return (f"seat {f.seat} {f.reason.key}{context}: {f.detail}"
            + (" (forfeit)" if f.forfeit else "") + f"; fix: {fix}")


@dataclass(frozen=True)
class CheckGame:
    """One game of the check."""

    item: str
    """What it checks, for the checklist."""
    request: GameRequest
    seats: frozenset[int]
    """The checked bot's seats (the others are opponents: their faults are not its)."""
    warn_only: bool = False
    """A failure warns and does not fail the check."""
    whole_game: bool = False
    """The whole game against the opponents (a host records it as the validation game)."""
    plain: bool = False
    """A hand against itself, nothing scripted but the planted refusal: a bot that cannot
    finish it cannot pass anything after it (:func:`play_games` skips the rest)."""


@dataclass(frozen=True)
class Item:
    """One line of the checklist."""

    name: str
    status: str
    """"pass", "fail", "warn" (failed, but not required) or "skip"."""
    problem: str = ""
    """Why it did not pass: one line with the fix."""
    tail: tuple[str, ...] = ()
    """The end of the bot's output (for a failure)."""
    record: Path | None = None
    """The record of the item's game."""


@dataclass(frozen=True)
class Report:
    """The whole checklist of one bot."""

    bot: str
    items: tuple[Item, ...]

    @property
    def passed(self) -> bool:
        """No item failed (warnings and skips allowed)."""
        return all(i.status != "fail" for i in self.items)

    @property
    def first_failure(self) -> Item | None:
        """The first failed item, if any."""
        return next((i for i in self.items if i.status == "fail"), None)


def try_build(spec: BotSpec, log_path: Path, timeout_s: float = 600.0,
              docker_limits: DockerLimits | None = None,
              say: Callable[[str], None] | None = None) -> str | None:
    """Build ``spec`` as its runner says (:func:`arena.sandbox.build`, which tells ``say``
    as the build starts and ends) and, for a local bot, check its run command can start;
    the log goes to ``log_path``. Returns why it failed (one line, with the compiler's
    error line: :func:`arena.core.text.build_error`), or None.

    Raises:
        InfrastructureError: no Docker engine answers (:class:`arena.sandbox.SandboxError`:
            the machine's failure, not the bot's: try later).
    """
    from .. import sandbox
    from ..bots.manifest import missing_command

    log_path.parent.mkdir(parents=True, exist_ok=True)
    limits = docker_limits
    if spec.runner == "docker" and limits is not None:
        limits = dataclasses.replace(limits, build_timeout_s=timeout_s)
    try:
        out = sandbox.build(spec, docker_limits=limits, log_path=log_path, timeout_s=timeout_s,
                            say=say)
    except InfrastructureError:
        raise
    except (ConfigError, BotError) as e:  # a bad runner; a failed build (BuildError)
        text = str(e) + "\n" + str(getattr(e, "log", "") or "")
        log_path.write_text(text[-LOG_LIMIT:])
        first = next((x for x in str(e).splitlines() if x.strip()), "build failed")
        said = build_error(str(getattr(e, "log", "") or "") or "\n".join(
            str(e).splitlines()[1:]))  # the compiler's own line: what to fix first
        hint = getattr(e, "hint", None) or "fix the build command in bot.toml"
        first = first.removeprefix(f"bot {spec.name}: ").rstrip(":")
        if not first.startswith("build failed"):
            first = f"build failed: {first}"
        return first + (f": {said}" if said else "") + f"; {hint} (log: {log_path})"
    log_path.write_text((out or "(no build step: nothing to build)\n")[-LOG_LIMIT:])
    if spec.runner == "local":
        why = missing_command(spec)
        if why:
            return f"{why}; fix 'run' in bot.toml (the program must exist after the build)"
    return None


def check_games(spec: BotSpec, opponents: Sequence[BotSpec],
                rulesets: Sequence[tuple[str, Ruleset]], tc: TimeControl, *, seed: int = 1,
                prefix: str = "check", docker_limits: DockerLimits | None = None
                ) -> list[CheckGame]:
    """The games of the check of ``spec`` (see the module's docstring), in order: for each
    ``(preset, ruleset)`` one hand against itself (the first with the planted refusal),
    then with the first ruleset: a hand under no trumps and one under doubles as trumps
    named by a scripted declarer (:mod:`arena.check.scripted`; each if the ruleset allows it),
    a hand whose bid the bot wins (scripted passers beside it), a dropped stream, and a
    whole game against ``opponents`` (cycled over the other seats).

    Args:
        opponents: at least one bot for the seats beside ``spec``.
        tc: the real time control (its ``max_hands`` limits the whole game only).
        seed: the first game's deal; each game adds one.
        prefix: game ids are ``<prefix>-<n>-<what>`` (1-64 letters, digits, '-', '_').
    """
    if not opponents or not rulesets:
        raise ConfigError("the check needs at least one opponent and one ruleset")
    games: list[CheckGame] = []

    def add(item: str, what: str, bots: list[BotSpec], preset: str, ruleset: Ruleset,
            game_tc: TimeControl, probe: str = "", whole_game: bool = False,
            plain: bool = False) -> None:
        n = len(games)
        games.append(CheckGame(item, GameRequest(
            f"{prefix}-{n}-{what}", tuple(bots), ruleset, preset, seed + n, game_tc,
            docker_limits, probe), frozenset(i for i, b in enumerate(bots) if b is spec),
            whole_game=whole_game, plain=plain))

    for i, (preset, ruleset) in enumerate(rulesets):
        forced = dataclasses.replace(ruleset, all_pass="force_dealer")
        one_hand = dataclasses.replace(tc, max_hands=1)
        what = f"{ruleset.players} players: one hand against itself (every phase, the dealer " \
               "forced to bid)"
        if i == 0:  # one refusal more than the game allows, so the bot keeps its own
            one_hand = dataclasses.replace(one_hand, illegal_retries=tc.illegal_retries + 1)
            add(what + "; a refused answer, then the next turn answered", "self",
                [spec] * ruleset.players, preset, forced, one_hand, probe="reject",
                plain=True)
        else:
            add(what, f"self{ruleset.players}", [spec] * ruleset.players, preset, forced,
                one_hand, plain=True)
    preset, ruleset = rulesets[0]
    one_hand = dataclasses.replace(tc, max_hands=1)
    for trump, allowed in (("none", ruleset.allow_no_trump),
                           ("doubles", ruleset.allow_doubles_trump)):
        if not allowed:
            continue
        # the declarer bids first (21: the auction ends at once), the bot in the others
        first = GameState(ruleset, seed + len(games)).current
        bots = [scripted.spec("declare", trump) if i == first else spec
                for i in range(ruleset.players)]
        words = "no trumps" if trump == "none" else "doubles as trumps"
        add(f"{words}: a scripted seat shoots the moon and names {words}; the bot follows suit "
            "under them", f"trump-{trump}", bots, preset, ruleset, one_hand)
    # the bot deals, the others pass: it wins the bid (forced if it passes) and must take
    # the widow, discard and name trumps
    forced = dataclasses.replace(ruleset, all_pass="force_dealer")
    dealer = GameState(forced, seed + len(games)).dealer
    bots = [spec if i == dealer else scripted.spec("pass") for i in range(ruleset.players)]
    add("its own bid: the others pass, the bot wins the bid"
        + (", takes the widow, discards" if ruleset.has_widow else "") + " and names trumps",
        "declare", bots, preset, forced, one_hand)
    others = [opponents[i % len(opponents)] for i in range(ruleset.players - 1)]
    add("a dropped stream: the bot joins again and answers the turn sent again",
        "reconnect", [spec, *others], preset, ruleset, dataclasses.replace(tc, max_hands=1),
        probe="drop")
    names = ", ".join(dict.fromkeys(o.name for o in others))
    add(f"a whole game against {names}", "game", [spec, *others], preset, ruleset, tc,
        whole_game=True)
    return games


def judge(game: CheckGame, finished: FinishedGame) -> Item:
    """The checklist line of one played game: passed when the bot's seats had no fault
    but the planted refusal (a timeout the bank forgave still counts: a bot that needs
    its bank in a check is not ready), else the first fault as :func:`problem_line`
    (with the end of that seat's output). In the dropped-stream game, a bot that stayed
    away is told to rejoin (:data:`NO_REJOIN`; its process ended instead: its crash, with
    the exit code or signal, and :data:`NO_REJOIN_FIX`); a crash before the drop or after
    it joined again is a crash, as anywhere else."""
    def planted(f: Fault) -> bool:
        return f.reason is FaultReason.ILLEGAL_ACTION and f.detail == PLANTED_REJECTION

    mine = [f for f in finished.faults if f.seat in game.seats and not planted(f)]
    record = Path(finished.record_path) if finished.record_path else None
    if not mine:
        return Item(game.item, "pass", record=record)
    f = mine[0]
    at = finished.faults.index(f)
    refused = any(planted(g) and g.seat == f.seat for g in finished.faults[:at])
    context = fix = ""
    if refused and f.reason in (FaultReason.TIMEOUT, FaultReason.PROTOCOL_ERROR):
        context = " after a refused answer"
        fix = ("a Rejected is followed by a new turn with a new request_id: answer it "
               "(docs/protocol.md, 'Illegal actions and protocol errors')")
    elif game.request.probe == "drop" and not _before_joining(f):
        status = "warn" if game.warn_only else "fail"
        if f.seat == PROBED_SEAT and f.reason is FaultReason.DISCONNECT:
            return Item(game.item, status, f"seat {f.seat} {NO_REJOIN}",
                        _tail(record, f.seat), record)
        if f.seat == PROBED_SEAT and WITHOUT_REJOINING in f.detail:  # it died instead
            return Item(game.item, status, problem_line(f, fix=NO_REJOIN_FIX),
                        _tail(record, f.seat), record)
        if f.reason in (FaultReason.TIMEOUT, FaultReason.PROTOCOL_ERROR):
            context = " after the referee dropped its stream"
            fix = _FIXES[FaultReason.DISCONNECT]
        # else its own kind's line: a crash after it joined again (AFTER_REJOINING in its
        # detail) or before the drop, an illegal action, is not the reconnect's doing
    return Item(game.item, "warn" if game.warn_only else "fail",
                problem_line(f, context, fix), _tail(record, f.seat), record)


def _before_joining(f: Fault) -> bool:
    """The fault came before the seat's bot joined (it died or was refused at start): the
    planted drop, which breaks a joined stream, never happened to it (the referee's
    wording, :meth:`arena.referee.referee.Match._exit_forfeit`)."""
    return f.reason is FaultReason.STARTUP_STALL or f.detail.endswith(BEFORE_JOINING) \
        or f"{BEFORE_JOINING}: " in f.detail


def _refused_first(game: CheckGame, finished: FinishedGame) -> bool:
    """The bot's first fault in ``game`` (but the planted refusal) came after the planted
    refusal: it may be the refusal's doing, not a bot that cannot play a hand."""
    def planted(f: Fault) -> bool:
        return f.reason is FaultReason.ILLEGAL_ACTION and f.detail == PLANTED_REJECTION

    for i, f in enumerate(finished.faults):
        if f.seat in game.seats and not planted(f):
            return any(planted(g) and g.seat == f.seat for g in finished.faults[:i])
    return False


def _tail(record: Path | None, seat: int) -> tuple[str, ...]:
    if record is None or not record.is_file():
        return ()
    from ..core.text import clean
    from ..records.record import read_record

    text = read_record(record).logs.get(str(seat), "")
    return tuple(clean(text).rstrip().splitlines()[-TAIL_LINES:])


async def play_games(play: Callable[[GameRequest], Awaitable[FinishedGame]],
                     games: Sequence[CheckGame]) -> list[Item]:
    """Play ``games`` one after another with ``play`` (an executor's) and judge each
    (:func:`judge`). Once a plain game (:attr:`CheckGame.plain`) fails through no doing of
    the planted refusal, the bot cannot finish a hand, and the games after it cannot tell
    anything more (they would fail the same way, with the same output): they are not
    played, each a "skip" item saying why (:data:`SKIPPED`).

    Raises:
        InfrastructureError: a game could not be played (not the bot's fault): the check
            has no verdict.
    """
    items: list[Item] = []
    blocked = ""
    for g in games:
        if blocked:
            items.append(Item(g.item, "skip", blocked))
            continue
        finished = await play(g.request)
        item = judge(g, finished)
        items.append(item)
        blocked = blocks_the_rest(g, finished, item)
    return items


def blocks_the_rest(game: CheckGame, finished: FinishedGame, item: Item) -> str:
    """Why the games after ``game`` are not to be played, as the problem line of each
    ("skip" items): :data:`SKIPPED` when ``game`` is a plain hand against itself
    (:attr:`CheckGame.plain`) that failed through no doing of the planted refusal (the bot
    cannot finish a hand: they would fail the same way); else "". ``item`` is
    ``judge(game, finished)``. Both `moon bot check` (:func:`play_games`) and a host's
    validation gate (:meth:`arena.host.service.Host._gate`) stop there."""
    if game.plain and item.status == "fail" and not _refused_first(game, finished):
        return SKIPPED
    return ""


async def check_folder(folder: Path, *, opponents: Sequence[BotSpec],
                       rulesets: Sequence[tuple[str, Ruleset]], tc: TimeControl,
                       work: Path, seed: int = 1,
                       say: Callable[[str], None] | None = None) -> Report:
    """`moon bot check`: the whole check of the bot in ``folder`` on this machine, its
    games played by a :class:`~arena.executor.local.LocalExecutor` whose records and logs go to
    ``work``; ``say`` hears of the build (:func:`try_build`). A bad bot.toml or a failed
    build is a failed item (and the games are not
    played); a ``language`` the arena does not know makes the bot.toml item a ``warn``
    (:func:`arena.bots.manifest.language_warning`: informative, not a failure).

    Raises:
        InfrastructureError: a game could not be played through no fault of the bot (a
            Docker bot without an engine, say).
    """
    from ..bots.manifest import language_warning, load_bot
    from ..executor.local import LocalExecutor

    try:
        spec = load_bot(folder)
    except ConfigError as e:
        return Report(str(folder), (Item("bot.toml", "fail", f"{e}"),))
    about = f"bot.toml: {spec.name} {spec.version}, run = {spec.run!r}"
    warning = language_warning(spec)  # informative: warned of, never refused
    items = [Item(about, "warn", warning) if warning else Item(about, "pass")]
    why = try_build(spec, work / f"build-{_slug(spec.name)}.log", say=say)
    if why:
        return Report(spec.name, (*items, Item("build", "fail", why)))
    items.append(Item("build" if spec.build or spec.runner == "docker" else
                      "build: nothing to build", "pass"))
    games = check_games(spec, opponents, rulesets, tc, seed=seed, prefix="check")
    async with LocalExecutor(work / "records") as ex:
        items += await play_games(ex.play, games)
    return Report(spec.name, tuple(items))


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:48]


__all__ = ["NO_REJOIN", "NO_REJOIN_FIX", "SKIPPED", "CheckGame", "Item", "Report",
           "blocks_the_rest", "try_build", "check_folder", "check_games", "judge", "play_games",
           "problem_line", "rule_section"]
