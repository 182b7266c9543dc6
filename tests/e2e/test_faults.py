"""Misbehaving bots over real gRPC: each fault has its recorded reason, the offender
forfeits (ranks last), and a clean game running at the same time is not disturbed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from e2e_support import example, misbehaving, with_referee
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb

from arena.core.timecontrol import TimeControl
from arena.executor.game import play_game
from arena.records.record import load_record, verify_record

# 30 s to join: a fault that comes with the join (a wrong token, a refused version) must
# not turn into a start-up stall because a loaded machine started the bot slowly (it did
# at 8 s in a CI run); no bot here waits that long, so no test takes longer for it
TC = TimeControl(startup_ms=30_000, decision_ms=500, bank_ms=500, reconnect_ms=1500,
                 illegal_retries=2)
BAD_SEAT = 1


def play_beside_clean_game(tmp_path: Path, mode: str, tc: TimeControl = TC):
    """A game with the misbehaving bot in seat 1, and a clean game at the same time."""
    moon3 = Ruleset.preset("moon3")

    async def body(referee, ep):
        bad = play_game(referee, ep, [example("heuristic"), misbehaving(mode),
                                      example("heuristic")],
                        moon3, preset="moon3", seed=11, tc=tc, match_id=f"bad-{mode}")
        clean = play_game(referee, ep, [example("heuristic")] * 3, moon3, preset="moon3",
                          seed=12, tc=TimeControl(), match_id=f"clean-{mode}")
        return await asyncio.gather(bad, clean)

    bad, clean = with_referee(tmp_path, body)
    # the clean game ended by the rules, with no fault, and its record verifies
    assert clean.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    assert list(clean.faults) == []
    assert verify_record(load_record(Path(clean.record_path))) == []
    # the bad game's record is complete and consistent too, forfeit or not
    record = load_record(Path(bad.record_path))
    assert verify_record(record) == []
    return bad, record


def assert_forfeit(match, record, reason: str) -> None:
    res = match.result
    assert res.termination == pb.TERMINATION_FORFEIT
    assert res.forfeit.seat == BAD_SEAT
    assert record["result"]["termination"] == "forfeit"
    assert record["result"]["forfeit"]["reason"] == reason
    assert record["result"]["forfeit"]["seat"] == BAD_SEAT
    # the offender ranks last; the others rank by score
    places = list(res.places)
    assert places[BAD_SEAT] == 3
    s0, s2 = res.scores[0], res.scores[2]
    assert (places[0], places[2]) == ((1, 1) if s0 == s2 else (1, 2) if s0 > s2 else (2, 1))


@pytest.mark.parametrize("mode, reason", [
    ("hang", "timeout"),
    ("crash", "crash"),
    ("out_of_turn", "protocol_error"),
    ("garbage", "protocol_error"),
    ("oversized", "protocol_error"),
    ("huge", "protocol_error"),
    ("wrong_id", "protocol_error"),
    ("wrong_token", "protocol_error"),
])
def test_fault_forfeits_with_its_reason(tmp_path, mode, reason):
    match, record = play_beside_clean_game(tmp_path, mode)
    assert_forfeit(match, record, reason)


@pytest.mark.parametrize("mode, said", [
    # the referee refused its join: exit code 3 is the SDK's answer, and the fault says why
    ("bad_version", "the bot exited with code 3 before joining: the referee refused its "
                    "join (protocol version 99 is not supported; this referee speaks "
                    "version 1)"),
    # its join never named its seat's token, or it never joined: nothing was refused
    ("wrong_token", "the bot exited with code 3 before joining, and no join with its token "
                    "reached the referee"),
    ("exit3", "the bot exited with code 3 before joining, and no join with its token "
              "reached the referee"),
])
def test_exit_code_3_before_joining_says_whether_the_referee_refused_it(tmp_path, mode, said):
    match, record = play_beside_clean_game(tmp_path, mode)
    assert_forfeit(match, record, "protocol_error")
    assert record["result"]["forfeit"]["detail"].startswith(said)


def test_a_2_mib_message_is_a_protocol_error_not_a_dropped_stream(tmp_path):
    # over the referee's 64 KiB, under gRPC's 4 MiB: it reaches the referee, which names it
    match, record = play_beside_clean_game(tmp_path, "huge")
    assert_forfeit(match, record, "protocol_error")
    detail = record["result"]["forfeit"]["detail"]
    assert f"{2 * 1024 * 1024 + 4} bytes" in detail and "65536" in detail
    assert [f["reason"] for f in record["faults"]] == ["protocol_error"]


def test_illegal_actions_are_rejected_then_forfeit(tmp_path):
    match, record = play_beside_clean_game(tmp_path, "illegal")
    assert_forfeit(match, record, "illegal_action")
    faults = [f for f in record["faults"] if f["seat"] == BAD_SEAT]
    # illegal_retries=2: two rejections with a fresh turn each, the third forfeits
    assert [f["forfeit"] for f in faults] == [False, False, True]
    assert all(f["reason"] == "illegal_action" for f in faults)
    assert all(f["detail"] for f in faults)  # the engine's reason is recorded


def test_never_joining_is_a_startup_stall(tmp_path):
    # 6 s of start-up: the good seats' Python bots must join within it on a loaded machine
    # (at 1.5 s, seat 0 was the one late under a load of 20 in a CI run)
    tc = TimeControl(startup_ms=6000, decision_ms=500, bank_ms=500, reconnect_ms=1500)
    match, record = play_beside_clean_game(tmp_path, "nojoin", tc)
    assert_forfeit(match, record, "startup_stall")
    assert record["hands"] == [] or all(not h["bids"] for h in record["hands"])


def test_second_stream_on_a_seat_is_refused_and_recorded(tmp_path):
    # a bank of 5 s: the bot holds its first turn until its second stream is refused
    tc = TimeControl(startup_ms=30_000, decision_ms=500, bank_ms=5000, reconnect_ms=1500)
    match, record = play_beside_clean_game(tmp_path, "double_stream", tc)
    # the game goes on with the first stream and ends by the rules
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    faults = record["faults"]
    assert len(faults) == 1
    assert faults[0]["seat"] == BAD_SEAT and faults[0]["reason"] == "protocol_error"
    assert not faults[0]["forfeit"]
    assert "second stream refused: FAILED_PRECONDITION" in record["logs"][str(BAD_SEAT)]


def test_reconnect_within_grace_gets_the_turn_again(tmp_path):
    # The turn's clock runs on while the bot is away (0.3 s, then a new channel and join):
    # a bank of 5 s, so that a busy machine does not turn the reconnect into a timeout.
    tc = TimeControl(startup_ms=8000, decision_ms=500, bank_ms=5000, reconnect_ms=3000,
                     illegal_retries=2)
    match, record = play_beside_clean_game(tmp_path, "reconnect", tc)
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    assert record["faults"] == []
    assert "resumed=True" in record["logs"][str(BAD_SEAT)]


def test_slow_bot_spends_its_bank_then_times_out(tmp_path):
    # 1.5 s per decision against 500 ms + a 2500 ms bank: the first two decisions eat
    # 2 x 1000 ms of bank, the third cannot be paid for.
    tc = TimeControl(startup_ms=8000, decision_ms=500, bank_ms=2500, reconnect_ms=1500)
    match, record = play_beside_clean_game(tmp_path, "slow", tc)
    assert_forfeit(match, record, "timeout")
    assert len(record["actions"]) >= 2
    seat_actions = [b for h in record["hands"] for b in h["bids"] if b["seat"] == BAD_SEAT]
    seat_actions += [p for h in record["hands"] for p in h["plays"] if p["seat"] == BAD_SEAT]
    assert len(seat_actions) == 2
    assert all(1400 <= a["ms"] <= 3000 for a in seat_actions)
    assert json.dumps(record)  # serializable


def test_a_seat_with_a_clock_of_its_own_keeps_it_while_the_others_keep_theirs(tmp_path):
    # A manual seat's clock (`moon play manual`): the slow bot (1.5 s a decision) in seat 1
    # with no decision limit of its own plays one hand without a fault, under a match clock
    # of 500 ms and no bank that would flag it at its first turn (the test above); the
    # record says which seat had which clock.
    from arena.core.timecontrol import NO_LIMIT_MS
    from arena.errors import ConfigError

    tc = TimeControl(startup_ms=8000, decision_ms=500, bank_ms=0, max_hands=1)
    moon3 = Ruleset.preset("moon3")

    async def body(referee, ep):
        with pytest.raises(ConfigError, match="a clock for seat 3"):
            referee.create_match(moon3, [("a", "1")] * 3, tc=tc, seat_clocks={3: (1, 0)})
        return await play_game(referee, ep, [example("random"), misbehaving("slow"),
                                             example("random")],
                               moon3, preset="moon3", seed=5, tc=tc, match_id="own-clock",
                               seat_clocks={1: (NO_LIMIT_MS, 0)})

    match = with_referee(tmp_path, body)
    record = load_record(Path(match.record_path))
    assert verify_record(record) == []
    # The random bots are not seeded: a made moon bid ends the game at its one hand too.
    assert record["faults"] == [] and len(record["hands"]) == 1
    assert record["result"]["termination"] in ("hand_limit", "moon")
    assert record["seats"][1]["clock"] == {"decision_ms": NO_LIMIT_MS, "bank_ms": 0}
    assert "clock" not in record["seats"][0] and "clock" not in record["seats"][2]
    slow = [b["ms"] for h in record["hands"] for b in h["bids"] + h["plays"]
            if b["seat"] == 1]
    assert slow and all(ms >= 1400 for ms in slow)  # each one over the match's 500 ms
