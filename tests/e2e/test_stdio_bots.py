"""stdio bots with the habits of real authors, over real gRPC and the real stdio bridge: a
byte-order mark before the first line is no protocol error; a bot whose answers never
arrive (never flushed, or with no newline) times out, and the bridge's note in the record's
log says what came on stdout; a bot may choose quiet with a first-line hello."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from e2e_support import TEST_BOTS, example, with_referee
from moon_sdk.rules import GameState, Ruleset
from moon_sdk.v1 import game_pb2 as pb

from arena.bots.manifest import BotSpec
from arena.core.timecontrol import TimeControl
from arena.executor.game import play_game
from arena.records.record import load_record, verify_record

MOON3 = Ruleset.preset("moon3")
HEARD = re.compile(r"HEARD turns=(\d+) events=(\d+) kinds=(\S*)")


def author(mode: str) -> BotSpec:
    """tests/bots/stdio_author.py in one of its modes, as a stdio bot."""
    return BotSpec(name=f"stdio-{mode}", folder=TEST_BOTS, language="stdio",
                   run=f"{{python}} stdio_author.py {mode}")


def play(tmp_path: Path, bots: list[BotSpec], tc: TimeControl, seed: int = 3, match_id=None):
    async def body(referee, ep):
        return await play_game(referee, ep, bots, MOON3, preset="moon3", seed=seed, tc=tc,
                               match_id=match_id)

    match = with_referee(tmp_path, body)
    record = load_record(Path(match.record_path))
    assert verify_record(record) == []
    return match, record


def heard(log: str) -> tuple[int, int, list[str]]:
    m = HEARD.search(log)
    assert m, log
    return int(m[1]), int(m[2]), m[3].split(",") if m[3] else []


def test_a_byte_order_mark_before_the_first_line_is_dropped(tmp_path):
    match, record = play(tmp_path, [author("bom"), example("heuristic"), example("heuristic")],
                         TimeControl(startup_ms=20_000))
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    assert record["faults"] == []
    assert "not a JSON moon.v1.PlayRequest" not in record["logs"]["0"]


@pytest.mark.parametrize("mode, seen", [
    ("noflush", "nothing at all arrived on the bot's stdout during the whole game"),
    ("nonewline", "bytes arrived on the bot's stdout after it, but no newline"),
    ("stall", "nothing arrived on the bot's stdout since (its "),
])
def test_answers_that_never_arrive_time_out_and_the_log_says_what_came(tmp_path, mode, seen):
    tc = TimeControl(startup_ms=20_000, decision_ms=300, bank_ms=300)
    match, record = play(tmp_path, [author(mode), example("heuristic"), example("heuristic")],
                         tc)
    assert record["result"]["termination"] == "forfeit"
    assert record["result"]["forfeit"]["seat"] == 0
    assert record["result"]["forfeit"]["reason"] == "timeout"
    log = record["logs"]["0"]
    assert "stdio bridge: timed out on the turn with requestId" in log
    assert seen in log
    assert "flush stdout" in log and "mawk -W interactive" in log
    if mode == "stall":  # every action it made was one line; the turn it stalled on, none
        made = actions_by_seat(match)[0]
        assert made >= 1 and f"(its {made} earlier lines did)" in log


def actions_by_seat(match) -> dict[int, int]:
    """How many actions each seat made in the game, by replaying it with the engine."""
    state = GameState(MOON3, match.seed)
    made = dict.fromkeys(range(3), 0)
    for action in match.state.history:
        made[state.current] += 1
        state.apply(action)
    return made


def test_a_stdio_bot_chooses_quiet_with_a_hello(tmp_path):
    tc = TimeControl(startup_ms=20_000)
    bots = [author("quiet"), author("loud"), example("heuristic")]
    match, record = play(tmp_path, bots, tc, seed=9)
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    assert record["faults"] == []  # the hello is not sent on: no protocol error
    made = actions_by_seat(match)
    turns_q, events_q, kinds_q = heard(record["logs"]["0"])
    turns_l, events_l, kinds_l = heard(record["logs"]["1"])
    # each got a turn for every action it made (it answered each at once, legally)
    assert (turns_q, turns_l) == (made[0], made[1])
    # quiet: of the public events only the end; loud: every one the referee broadcast
    assert (events_q, kinds_q) == (1, ["gameEnded"])
    assert events_l == len(match.events) > 100
    assert kinds_l[:2] == ["handStarted", "bid"] and "played" in kinds_l


def test_the_hello_also_works_when_the_game_starts_first(tmp_path):
    async def body(referee, ep):
        return await asyncio.gather(*(
            play_game(referee, ep, [author("quiet"), author("quiet"), author("quiet")], MOON3,
                      preset="moon3", seed=s, tc=TimeControl(startup_ms=20_000))
            for s in (1, 2)))

    for match in with_referee(tmp_path, body):
        assert list(match.faults) == []
        for seat in range(3):
            assert heard(match.logs[seat])[1:] == (1, ["gameEnded"])
