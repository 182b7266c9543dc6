"""What a Python SDK bot's ``act()`` may return, over real gRPC with real bot processes: a
numpy integer is an action like an int; a value that is no action at all is an illegal
action (rejected, retried, recorded with a reason), not a crash of the SDK."""

from __future__ import annotations

from pathlib import Path

from e2e_support import TEST_BOTS, example, with_referee
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb

from arena.bots.manifest import BotSpec
from arena.core.timecontrol import TimeControl
from arena.executor.game import play_game
from arena.records.record import load_record, verify_record

MOON3 = Ruleset.preset("moon3")
TC = TimeControl(startup_ms=20_000, illegal_retries=2)


def returns(mode: str) -> BotSpec:
    """tests/bots/sdk_returns.py in one of its modes."""
    return BotSpec(name=f"sdk-{mode}", folder=TEST_BOTS, run=f"{{python}} sdk_returns.py {mode}")


def play(tmp_path: Path, mode: str, seed: int) -> tuple[object, dict]:
    bots = [returns(mode), example("heuristic"), example("heuristic")]

    async def body(referee, ep):
        return await play_game(referee, ep, bots, MOON3, preset="moon3", seed=seed, tc=TC,
                               match_id=f"sdk-{mode}")

    match = with_referee(tmp_path, body)
    record = load_record(Path(match.record_path))
    assert verify_record(record) == []
    return match, record


def test_a_bot_returning_numpy_integers_plays_a_whole_game(tmp_path):
    match, record = play(tmp_path, "numpy", seed=4)
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    assert record["faults"] == []
    # seat 0 really acted: it bid in every hand and played in every hand that was played
    for hand in record["hands"]:
        assert 0 in [b["seat"] for b in hand["bids"]]
        if hand["plays"]:
            assert 0 in [p["seat"] for p in hand["plays"]]
    assert "which is no action" not in record["logs"]["0"]


def test_no_action_at_all_is_an_illegal_action_retried_with_a_reason(tmp_path):
    match, record = play(tmp_path, "no_action", seed=4)
    # two illegal actions, both forgiven (illegal_retries=2): the game ends by the rules
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    faults = record["faults"]
    assert [(f["seat"], f["reason"], f["forfeit"]) for f in faults] == [
        (0, "illegal_action", False), (0, "illegal_action", False)]
    log = record["logs"]["0"]
    # the SDK says what act() returned and what it sent instead; no traceback
    assert "act() returned 1062 (int), which is no action" in log
    assert "act() returned None (NoneType), which is no action" in log
    assert "Traceback" not in log
    # seat 0's first two turns are bids (every hand starts with the auction), so the
    # stand-in sent for each is a play, which the referee refuses with its reason; the
    # bot got that reason in its Rejected, and the record keeps it
    sent = "sending 'play 0-0' instead"
    assert log.count(sent) == 2
    for fault in faults:
        assert fault["detail"] and "0-0" in fault["detail"]
        assert f"REJECTED {fault['detail']}" in log


def test_which_values_are_actions():
    import numpy as np
    from moon_sdk.bot import checked_action
    from moon_sdk.rules import GameState, observe

    state = GameState(MOON3, seed=4)
    obs = observe(state, state.current)
    assert obs.legal_actions[0] == 56  # a bidding turn: pass, bid 4..7, bid 21
    # integral values 0..71 are actions, sent as they are (legal or not: the referee judges)
    for value, sent in ((np.int64(57), 57), (np.uint8(3), 3), (61, 61), (0, 0), (71, 71)):
        action, why = checked_action(value, obs)
        assert (action, action.__class__, why) == (sent, int, "")
    # anything else is no action: a play of 0-0 goes instead (in the auction, surely illegal)
    for value in (1062, 72, -1, True, None, 58.0, "bid 4", np.float64(57.0)):
        action, why = checked_action(value, obs)
        assert action == 0 and "which is no action" in why, value
    # in the play, a pass goes instead
    while obs.phase.name != "PLAY":
        state.apply(max(a for a in state.legal_actions() if a != 56) if obs.phase.name
                    == "BIDDING" else state.legal_actions()[0])
        obs = observe(state, state.current)
    assert checked_action(1062, obs)[0] == 56
