"""The referee's limits and fault wording without a network (seats joined in-process, the
servicer's part played by the test): the rejoin limit and the compact state a rejoin gets,
a turn's time measured from its delivery, finished matches forgotten past a bound, and the
exact facts of the fault details (an empty message on the own turn, an out-of-range trump
kind, a timeout with the bank actually left)."""

from __future__ import annotations

import asyncio

import pytest
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from arena.core.results import FaultReason
from arena.core.timecontrol import TimeControl
from arena.referee import referee as referee_module
from arena.referee.referee import MAX_REJOINS, Referee, Refusal, SeatLink


def drain(q: asyncio.Queue) -> list[bpb.PlayResponse]:
    """What the referee queued for a seat, as the bot reads it (the referee queues most
    messages already encoded, as bytes, and some as messages)."""
    out = []
    while not q.empty():
        m = q.get_nowait()
        if isinstance(m, bytes):
            m = bpb.PlayResponse.FromString(m)
        if m is not None:
            out.append(m)
    return out


def turns_of(msgs: list[bpb.PlayResponse]) -> list[bpb.Turn]:
    return [x.turn for x in msgs if x.WhichOneof("kind") == "turn"]


async def join(ref: Referee, token: str) -> SeatLink:
    return (await ref.join(bpb.Join(token=token, protocol_version=1)))[2]


async def next_turn(m, links: list[SeatLink], seconds: float = 5.0,
                    deliver: bool = True) -> tuple[int, bpb.Turn]:
    """Wait for the next turn sent to any seat; tell the match it was delivered (as the
    servicer does once it wrote it) unless ``deliver`` is False."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while loop.time() < end:
        for s, link in enumerate(links):
            ts = turns_of(drain(link.outbox))
            if ts:
                if deliver:
                    m.delivered(s, link, ts[-1].request_id)
                return s, ts[-1]
        await asyncio.sleep(0.005)
    raise AssertionError("no turn was sent")


def answer(m, seat: int, link: SeatLink, turn: bpb.Turn, action: pb.Action | None = None
           ) -> None:
    reply = bpb.PlayRequest(action=bpb.ActionReply(
        request_id=turn.request_id, action=action or turn.legal_actions[0]))
    m.receive(seat, link, reply.SerializeToString())


async def finish(m) -> None:
    if not m.done.is_set():
        m.stop(pb.TERMINATION_CANCELLED, "test over")
    await m.done.wait()


def new_match(ref: Referee, seed: int, **tc: int):
    return ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=seed,
                            tc=TimeControl(**{"decision_ms": 5000, **tc}))


# -- rejoins -----------------------------------------------------------------------------

def test_a_rejoin_gets_the_open_turn_not_the_past_events_and_at_most_max_rejoins():
    async def go():
        ref = Referee(record_dir=None)
        m = new_match(ref, 3, reconnect_ms=60_000)
        links = [await join(ref, t) for t in m.tokens]
        # a few actions, so that there are past events to (not) replay
        for _ in range(4):
            s, turn = await next_turn(m, links)
            answer(m, s, links[s], turn)
        s, turn = await next_turn(m, links)
        events_so_far = len(m.events)
        other = (s + 1) % 3
        first_back: list[bpb.PlayResponse] = []
        for i in range(MAX_REJOINS):
            m.detach(s, links[s])
            links[s] = await join(ref, m.tokens[s])
            await asyncio.sleep(0)
            await asyncio.sleep(0.01)
            if i == 0:
                first_back = drain(links[s].outbox)
        m.detach(s, links[s])
        refusals = []
        for _ in range(3):  # over the limit: refused each time, one fault in all
            with pytest.raises(Refusal) as e:
                await join(ref, m.tokens[s])
            refusals.append(e.value)
        # another seat's own count is its own
        m.detach(other, links[other])
        links[other] = await join(ref, m.tokens[other])
        faults = list(m.faults)
        await finish(m)
        return s, turn, events_so_far, first_back, refusals, faults

    s, turn, events_so_far, first_back, refusals, faults = asyncio.run(go())
    assert events_so_far > 4
    kinds = [x.WhichOneof("kind") for x in first_back]
    assert kinds[0] == "welcome" and first_back[0].welcome.resumed
    # the compact state: the open turn again (its observation complete), no past event
    assert kinds.count("event") == 0
    [again] = turns_of(first_back)
    assert again.request_id == turn.request_id and again.observation == turn.observation
    assert [r.code for r in refusals] == ["RESOURCE_EXHAUSTED"] * 3
    assert f"has rejoined {MAX_REJOINS} times" in str(refusals[0])
    limit = [f for f in faults if "rejoin" in f.detail or "joined again" in f.detail]
    assert len(limit) == 1
    assert limit[0].seat == s and not limit[0].forfeit
    assert limit[0].reason is FaultReason.PROTOCOL_ERROR
    assert f"after {MAX_REJOINS} drops" in limit[0].detail


# -- time from delivery ------------------------------------------------------------------

def test_a_turns_time_runs_from_its_delivery_not_from_its_queueing():
    # decision 200 ms, no bank: the turn sits in the queue 400 ms (a busy referee), is
    # delivered, answered at once: no timeout, and the time charged is the answer's, not
    # the queueing's
    async def go():
        ref = Referee(record_dir=None)
        m = new_match(ref, 4, decision_ms=200, bank_ms=0)
        links = [await join(ref, t) for t in m.tokens]
        s, turn = await next_turn(m, links, deliver=False)
        await asyncio.sleep(0.4)
        m.delivered(s, links[s], turn.request_id)
        await asyncio.sleep(0)
        answer(m, s, links[s], turn)
        await asyncio.sleep(0.05)
        faults, ms = list(m.faults), list(m.action_ms)
        await finish(m)
        return faults, ms

    faults, ms = asyncio.run(go())
    assert faults == []
    assert len(ms) == 1 and ms[0] < 400


def test_a_turn_its_stream_never_takes_is_a_timeout_that_says_so(monkeypatch):
    monkeypatch.setattr(referee_module, "UNDELIVERED_GRACE_S", 0.2)

    async def go():
        ref = Referee(record_dir=None)
        m = new_match(ref, 5, decision_ms=100, bank_ms=50)
        links = [await join(ref, t) for t in m.tokens]
        await next_turn(m, links, deliver=False)
        await asyncio.wait_for(m.done.wait(), 10)
        return list(m.faults)

    [f] = asyncio.run(go())
    assert f.reason is FaultReason.TIMEOUT and f.forfeit
    assert "did not take the turn" in f.detail
    assert "100 ms" in f.detail and "50 ms of bank" in f.detail and "0.2 s" in f.detail


# -- fault wording ---------------------------------------------------------------------

def test_a_timeout_says_how_much_bank_was_actually_left():
    # decision 50 ms, bank 400 ms: the seat answers its first turn late (the bank pays
    # what is over 50 ms), then never answers its next one
    async def go():
        ref = Referee(record_dir=None)
        m = new_match(ref, 6, decision_ms=50, bank_ms=400)
        links = [await join(ref, t) for t in m.tokens]
        slow, turn = await next_turn(m, links)
        await asyncio.sleep(0.2)
        answer(m, slow, links[slow], turn)
        first_ms = None
        while not m.done.is_set():
            s, turn = await next_turn(m, links)
            if first_ms is None:
                first_ms = m.action_ms[0]
            if s != slow:
                answer(m, s, links[s], turn)
            else:
                await asyncio.wait_for(m.done.wait(), 10)
        return first_ms, list(m.faults)

    first_ms, faults = asyncio.run(go())
    [f] = faults
    assert f.reason is FaultReason.TIMEOUT
    # by the time control's rule: the bank pays the whole ms over the decision time
    left = 400 - (first_ms - 50)
    assert 0 < left < 400
    assert f"only {left} ms of bank left" in f.detail
    assert "of 400 ms at the start" in f.detail and "50 ms decision time" in f.detail
    assert "plus the 400 ms bank" not in f.detail


def test_a_timeout_with_the_bank_untouched_says_the_whole_bank():
    async def go():
        ref = Referee(record_dir=None)
        m = new_match(ref, 7, decision_ms=50, bank_ms=100)
        links = [await join(ref, t) for t in m.tokens]
        await next_turn(m, links)
        await asyncio.wait_for(m.done.wait(), 10)
        return list(m.faults)

    [f] = asyncio.run(go())
    assert f.detail == ("no answer within the 50 ms decision time plus the whole 100 ms "
                        "bank")


def _protocol_fault(send) -> tuple[int, int, object]:
    """Start a match; ``send(m, links, seat_to_act, turn)`` sends something; the fault."""
    async def go():
        ref = Referee(record_dir=None)
        m = new_match(ref, 8)
        links = [await join(ref, t) for t in m.tokens]
        s, turn = await next_turn(m, links)
        send(m, links, s, turn)
        await asyncio.wait_for(m.done.wait(), 10)
        return s, turn.request_id, list(m.faults)

    s, rid, faults = asyncio.run(go())
    [f] = faults
    return s, rid, f


def test_an_empty_message_on_the_own_turn_is_not_called_out_of_turn():
    s, rid, f = _protocol_fault(
        lambda m, links, s, turn: m.receive(s, links[s], bpb.PlayRequest().SerializeToString()))
    assert f.seat == s and f.reason is FaultReason.PROTOCOL_ERROR
    assert "out of turn" not in f.detail
    assert "empty message" in f.detail and f"request {rid}" in f.detail


def test_an_empty_message_from_a_seat_not_to_act_is_out_of_turn():
    s, _, f = _protocol_fault(
        lambda m, links, s, turn: m.receive((s + 1) % 3, links[(s + 1) % 3],
                                            bpb.PlayRequest().SerializeToString()))
    assert f.seat == (s + 1) % 3
    assert f.detail == f"sent an empty message out of turn (seat {s} is to act)"


def test_an_out_of_range_trump_kind_says_so_and_names_the_valid_kinds():
    s, _, f = _protocol_fault(lambda m, links, s, turn: answer(
        m, s, links[s], turn, pb.Action(trump=pb.Trump(kind=77))))  # type: ignore[arg-type]
    assert f.seat == s and f.reason is FaultReason.PROTOCOL_ERROR
    assert "trump kind 77 is out of range" in f.detail
    assert "UNSPECIFIED" not in f.detail and "not set" not in f.detail
    # the valid kinds, as the protocol numbers them (game.proto's TrumpKind)
    for number, name in ((1, "TRUMP_KIND_NUMBER"), (2, "TRUMP_KIND_DOUBLES"),
                         (3, "TRUMP_KIND_NO_TRUMP")):
        assert f"{number} ({name})" in f.detail


def test_an_unset_trump_kind_still_says_unset():
    _, _, f = _protocol_fault(lambda m, links, s, turn: answer(
        m, s, links[s], turn, pb.Action(trump=pb.Trump())))
    assert "trump kind is not set (TRUMP_KIND_UNSPECIFIED)" in f.detail


# -- memory ------------------------------------------------------------------------------

def test_finished_matches_past_keep_finished_are_forgotten():
    async def go():
        ref = Referee(record_dir=None, keep_finished=2)
        ids = []
        for i in range(5):
            m = new_match(ref, 10 + i)
            ids.append(m.match_id)
            await finish(m)
        running = new_match(ref, 20)
        kept = sorted(ref.matches)
        await finish(running)
        return ids, running.match_id, kept

    ids, running, kept = asyncio.run(go())
    assert kept == sorted([ids[3], ids[4], running])
