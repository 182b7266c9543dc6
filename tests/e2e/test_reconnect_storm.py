"""A reconnect storm beside a healthy table, over real gRPC in one referee: every seat of
the storm table drops its stream and joins again in a loop (answering its turn when it gets
one, so its game goes on and has events); the healthy table plays short games at 100 ms a
decision and a 500 ms bank. Each rejoin gets the compact state (the open turn), at most
MAX_REJOINS times per seat, then a clear refusal; the healthy table has no timeout."""

from __future__ import annotations

import asyncio

import grpc
from e2e_support import with_referee
from moon_sdk.convert import PROTOCOL_VERSION
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb
from quick_seats import play_call, quick_seat

from arena.core.results import FaultReason
from arena.core.timecontrol import TimeControl
from arena.referee.referee import MAX_REJOINS


def bidder(turn: bpb.Turn) -> pb.Action:
    """Its highest bid in the auction (hands are played out), else the first legal."""
    if turn.legal_actions[0].WhichOneof("kind") == "bid":
        return turn.legal_actions[-1]
    return turn.legal_actions[0]


async def stormer(channel: grpc.aio.Channel, token: str, stop: asyncio.Event
                  ) -> tuple[int, list[tuple[grpc.StatusCode, str]], int]:
    """Join, answer a turn if one comes at once, drop; again, until ``stop`` is set and the
    seat has been refused (or 120 s have passed: on a loaded machine the healthy games can
    end before a seat has used its rejoins). Returns (joins welcomed, refusals as (code,
    details), events received again: a sequence number it had seen on an earlier stream)."""
    welcomed, refusals, replayed, seen = 0, [], 0, 0
    give_up = asyncio.get_running_loop().time() + 120
    while not (stop.is_set() and refusals) and asyncio.get_running_loop().time() < give_up:
        call = play_call(channel)
        try:
            await call.write(bpb.PlayRequest(join=bpb.Join(
                token=token, protocol_version=PROTOCOL_VERSION, bot_name="storm")))
            first = await asyncio.wait_for(call.read(), 10)
            if first.WhichOneof("kind") == "welcome":
                welcomed += 1
                while True:
                    try:
                        msg = await asyncio.wait_for(call.read(), 0.02)
                    except TimeoutError:
                        break
                    if msg is grpc.aio.EOF:
                        break
                    kind = msg.WhichOneof("kind")
                    if kind == "turn":
                        await call.write(bpb.PlayRequest(action=bpb.ActionReply(
                            request_id=msg.turn.request_id, action=bidder(msg.turn))))
                        break
                    if kind == "event":
                        replayed += msg.event.sequence <= seen
                        seen = max(seen, msg.event.sequence)
        except grpc.aio.AioRpcError as e:
            refusals.append((e.code(), e.details() or ""))
        finally:
            call.cancel()
        await asyncio.sleep(0.002)
    return welcomed, refusals, replayed


def test_a_reconnect_storm_beside_a_healthy_table_gives_it_no_timeouts(tmp_path):
    async def body(referee, ep):
        storm = referee.create_match(
            Ruleset.preset("moon3"), [("storm", "1")] * 3, seed=21,
            tc=TimeControl(decision_ms=60_000, reconnect_ms=60_000))
        stop = asyncio.Event()
        async with grpc.aio.insecure_channel(ep.address) as ch:
            storms = [asyncio.create_task(stormer(ch, t, stop)) for t in storm.tokens]
            healthy = []
            for g in range(3):
                m = referee.create_match(
                    Ruleset.preset("moon3"), [("healthy", "1")] * 3, seed=30 + g,
                    tc=TimeControl(decision_ms=100, bank_ms=500, max_hands=3))
                await asyncio.gather(*(quick_seat(ch, t, bidder) for t in m.tokens))
                await m.done.wait()
                healthy.append((list(m.faults), m.result, len(m.action_ms)))
            stop.set()
            stormed = await asyncio.gather(*storms)
        return healthy, stormed, list(storm.faults)

    healthy, stormed, storm_faults = with_referee(tmp_path, body)
    for faults, result, actions in healthy:
        assert faults == []  # no timeout, no fault at all
        assert result is not None and result.termination.scored and actions > 0
    for seat, (welcomed, refusals, replayed) in enumerate(stormed):
        # the first join and MAX_REJOINS rejoins were welcomed; then every join refused
        assert welcomed == 1 + MAX_REJOINS
        assert refusals, "the storm went on after the limit without a refusal"
        assert {code for code, _ in refusals} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert f"seat {seat} " in refusals[0][1]
        assert f"has rejoined {MAX_REJOINS} times" in refusals[0][1]
        assert replayed == 0  # a rejoin is not sent the past events again
    limit = [f for f in storm_faults if "joined again" in f.detail]
    assert sorted(f.seat for f in limit) == [0, 1, 2]  # one fault per seat, not per attempt
    assert all(f.reason is FaultReason.PROTOCOL_ERROR and not f.forfeit for f in limit)


def test_a_rejoin_heard_before_its_old_stream_ended_is_welcomed(tmp_path):
    """A bot drops its stream and joins again at once: the referee can hear the new join
    before it has seen the old stream close. The join waits for that close instead of
    being refused as a second stream (which a storm would otherwise meet by chance)."""
    async def body(referee, ep):
        m = referee.create_match(Ruleset.preset("moon3"), [("b", "1")] * 3, seed=5,
                                 tc=TimeControl(decision_ms=60_000, reconnect_ms=60_000))
        heard = asyncio.Event()
        join = referee.join

        async def noting(j, *args):  # the servicer calls this once it has read a join
            heard.set()
            return await join(j, *args)
        referee.join = noting
        async with grpc.aio.insecure_channel(ep.address) as ch:
            def joining():
                call = play_call(ch)
                return call, call.write(bpb.PlayRequest(join=bpb.Join(
                    token=m.tokens[0], protocol_version=PROTOCOL_VERSION, bot_name="b")))
            old, sent = joining()
            await sent
            assert (await old.read()).WhichOneof("kind") == "welcome"
            heard.clear()
            new, sent = joining()
            await sent
            await asyncio.wait_for(heard.wait(), 10)  # the new join is heard, old still open
            await asyncio.sleep(0.05)
            old.cancel()
            first = await asyncio.wait_for(new.read(), 10)
            new.cancel()
        return first.WhichOneof("kind"), list(m.faults)

    kind, faults = with_referee(tmp_path, body)
    assert kind == "welcome"
    assert not [f for f in faults if "second stream" in f.detail]


def test_a_second_live_stream_is_still_refused_after_the_grace(tmp_path):
    """Two live streams for one seat: the second waits out the grace, then is refused."""
    async def body(referee, ep):
        m = referee.create_match(Ruleset.preset("moon3"), [("b", "1")] * 3, seed=6,
                                 tc=TimeControl(decision_ms=60_000, reconnect_ms=60_000))
        join = referee.join
        referee.join = lambda j: join(j, 0.2)
        async with grpc.aio.insecure_channel(ep.address) as ch:
            calls = []
            for _ in range(2):
                call = play_call(ch)
                calls.append(call)
                await call.write(bpb.PlayRequest(join=bpb.Join(
                    token=m.tokens[0], protocol_version=PROTOCOL_VERSION, bot_name="b")))
            assert (await calls[0].read()).WhichOneof("kind") == "welcome"
            try:
                await asyncio.wait_for(calls[1].read(), 10)
                code = None
            except grpc.aio.AioRpcError as e:
                code, details = e.code(), e.details()
            for c in calls:
                c.cancel()
        return code, details, list(m.faults)

    code, details, faults = with_referee(tmp_path, body)
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "already held by a live stream" in details
    assert [f.seat for f in faults if "second stream" in f.detail] == [0]
