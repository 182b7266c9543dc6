"""A seat's start-up limit counts from when the runner has its process or container
running (:meth:`arena.referee.referee.Match.seat_started`): the time the host takes to
start it (a loaded machine, a slow Docker engine) is never the bot's; a seat the host never
starts aborts the match (voided, replayed) instead of stalling the bot. Seats joined in
process, as in tests/test_referee.py."""

from __future__ import annotations

import asyncio

from moon_sdk.rules import Ruleset
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from arena.core.results import FaultReason, Termination
from arena.core.timecontrol import TimeControl
from arena.referee import referee as referee_module
from arena.referee.referee import Referee, Status


async def join(ref: Referee, token: str) -> None:
    await ref.join(bpb.Join(token=token, protocol_version=1))


def test_the_time_the_host_takes_to_start_a_bot_is_not_its_start_up_time() -> None:
    # start-up limit 1 s; the host takes 1.5 s to start seat 0, which joins 0.2 s later
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=1,
                             tc=TimeControl(decision_ms=5000, startup_ms=1000))
        for seat in range(3):
            m.seat_starting(seat)
        m.seat_started(1)
        m.seat_started(2)
        await join(ref, m.tokens[1])
        await join(ref, m.tokens[2])
        await asyncio.sleep(1.5)
        m.seat_started(0)
        await asyncio.sleep(0.2)
        await join(ref, m.tokens[0])
        await asyncio.sleep(0.2)
        status, faults = m.status, list(m.faults)
        m.stop(pb.TERMINATION_CANCELLED, "test over")
        await m.done.wait()
        return status, faults

    status, faults = asyncio.run(go())
    assert faults == []
    assert status == Status.RUNNING


def test_a_bot_that_does_not_join_after_its_start_stalls_and_is_told_so() -> None:
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=1,
                             tc=TimeControl(decision_ms=5000, startup_ms=500))
        for seat in range(3):
            m.seat_starting(seat)
        for seat in (1, 2):
            m.seat_started(seat)
            await join(ref, m.tokens[seat])
        await asyncio.sleep(0.3)
        m.seat_started(0)  # and it never joins
        await asyncio.wait_for(m.done.wait(), 10)
        return m.result, list(m.faults)

    result, faults = asyncio.run(go())
    assert result.termination is Termination.FORFEIT
    assert [(f.seat, f.reason, f.forfeit) for f in faults] == [
        (0, FaultReason.STARTUP_STALL, True)]
    assert faults[0].detail.startswith("seat 0 did not join within 500 ms of its process "
                                       "starting (the host took ")
    assert faults[0].detail.endswith(" ms to start it, not counted)")


def test_a_bot_the_host_never_starts_aborts_the_match_without_a_fault(monkeypatch) -> None:
    monkeypatch.setattr(referee_module, "HOST_START_MAX_S", 0.5)

    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=1,
                             tc=TimeControl(decision_ms=5000, startup_ms=100))
        for seat in range(3):
            m.seat_starting(seat)
        for seat in (1, 2):
            m.seat_started(seat)
            await join(ref, m.tokens[seat])
        m.seat_started(1)
        await asyncio.wait_for(m.done.wait(), 10)  # seat 0's start never returns
        return m.result, list(m.faults), m.stop_reason

    result, faults, why = asyncio.run(go())
    assert result.termination is Termination.ABORTED
    assert faults == []
    assert "did not start a bot's process or container within 0.5 s" in why


def test_the_time_a_bot_waited_for_a_cpu_is_not_its_start_up_time() -> None:
    # start-up limit 500 ms; seat 0's process says it waited 600 ms for a CPU (a loaded
    # machine), and joins 900 ms after its start: 300 ms of its own, in time
    waits = [0.6]

    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=1,
                             tc=TimeControl(decision_ms=5000, startup_ms=500))
        for seat in (1, 2):
            m.seat_started(seat)
            await join(ref, m.tokens[seat])
        m.seat_started(0, waited=lambda: waits[0])
        await asyncio.sleep(0.9)
        await join(ref, m.tokens[0])
        await asyncio.sleep(0.2)
        status, faults = m.status, list(m.faults)
        m.stop(pb.TERMINATION_CANCELLED, "test over")
        await m.done.wait()
        return status, faults

    status, faults = asyncio.run(go())
    assert faults == []
    assert status == Status.RUNNING


def test_a_bot_that_waited_a_little_and_never_joins_stalls_and_is_told_both() -> None:
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=1,
                             tc=TimeControl(decision_ms=5000, startup_ms=300))
        for seat in (1, 2):
            m.seat_started(seat)
            await join(ref, m.tokens[seat])
        m.seat_started(0, waited=lambda: 0.2)  # and it never joins
        await asyncio.wait_for(m.done.wait(), 10)
        return m.result, list(m.faults)

    result, faults = asyncio.run(go())
    assert result.termination is Termination.FORFEIT
    assert [(f.seat, f.reason) for f in faults] == [(0, FaultReason.STARTUP_STALL)]
    assert faults[0].detail.endswith("; it waited 200 ms for a CPU, not counted either)")
