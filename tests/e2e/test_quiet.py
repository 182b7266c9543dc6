"""``Join.quiet`` over real gRPC with real bot processes: a quiet seat gets its turns and the
game's end and no other event, and the game is the same as with every seat listening."""

from __future__ import annotations

import asyncio
import re

from e2e_support import TEST_BOTS, with_referee
from moon_sdk.rules import Ruleset

from arena.bots.manifest import BotSpec
from arena.executor.game import play_game
from arena.records.record import load_record, verify_record

LISTENED = re.compile(r"LISTENED turns=(\d+) events=(\d+) kinds=(\S*)")


def listener(mode: str) -> BotSpec:
    """tests/bots/listener.py: plays the last legal action, counts what it receives."""
    return BotSpec(name=mode, folder=TEST_BOTS, run=f"{{python}} listener.py {mode}")


def heard(match, seat: int) -> tuple[int, int, str]:
    m = LISTENED.search(match.logs[seat])
    assert m, match.logs[seat]
    return int(m[1]), int(m[2]), m[3]


def test_a_quiet_seat_gets_only_its_turns_and_the_end(tmp_path):
    moon3 = Ruleset.preset("moon3")

    async def body(referee, ep):
        quiet = play_game(referee, ep, [listener("quiet"), listener("loud"), listener("loud")],
                          moon3, preset="moon3", seed=7, match_id="with-quiet")
        loud = play_game(referee, ep, [listener("loud")] * 3, moon3, preset="moon3", seed=7,
                         match_id="all-loud")
        return await asyncio.gather(quiet, loud)

    quiet, loud = with_referee(tmp_path, body)
    # the same game either way: the events are only news, the turns carry the game
    assert quiet.state.history == loud.state.history
    assert quiet.faults == [] and loud.faults == []
    assert verify_record(load_record(quiet.record_path)) == []
    # seat 0 asked for quiet: of the events only the end
    _, e0, kinds0 = heard(quiet, 0)
    assert e0 == 1 and kinds0 == "game_ended"
    # the others heard every public event, as many as the referee broadcast
    for seat in (1, 2):
        _, e, kinds = heard(quiet, seat)
        assert e == len(quiet.events) > 100 and "played" in kinds.split(",")
    # and every seat got every one of its turns: each action answered one
    assert sum(heard(quiet, s)[0] for s in range(3)) == len(quiet.state.history)
