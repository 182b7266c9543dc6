"""The referee's match logic without a network: seats joined in-process, messages as bytes."""

from __future__ import annotations

import asyncio

from moon_sdk.rules import Ruleset
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from arena.core.timecontrol import TimeControl
from arena.referee.referee import Referee


def drain(q: asyncio.Queue) -> list[bpb.PlayResponse]:
    out = []
    while not q.empty():
        m = q.get_nowait()
        if m is not None:  # the referee sends turns and events already encoded
            out.append(bpb.PlayResponse.FromString(m) if isinstance(m, bytes) else m)
    return out


def test_a_turn_is_sent_once_when_every_seat_joined_before_the_game_began():
    # All three joins are queued before the match task runs: the first seat to act must get
    # exactly one turn (a second copy would make it answer twice, and the second answer is
    # out of turn), and its one answer moves the game on without any fault.
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=1,
                             tc=TimeControl(decision_ms=5000))
        links = [(await ref.join(bpb.Join(token=t, protocol_version=1)))[2] for t in m.tokens]
        await asyncio.sleep(0.2)
        first = m.state.current
        turns = [x.turn for x in drain(links[first].outbox) if x.WhichOneof("kind") == "turn"]
        others = [x for s in range(3) if s != first for x in drain(links[s].outbox)
                  if x.WhichOneof("kind") == "turn"]
        reply = bpb.PlayRequest(action=bpb.ActionReply(
            request_id=turns[0].request_id, action=turns[0].legal_actions[0]))
        m.receive(first, links[first], reply.SerializeToString())
        await asyncio.sleep(0.2)
        second = m.state.current
        next_turns = [x.turn for x in drain(links[second].outbox)
                      if x.WhichOneof("kind") == "turn"]
        faults = list(m.faults)
        history = list(m.state.history)
        m.stop(pb.TERMINATION_CANCELLED, "test over")
        await m.done.wait()
        return turns, others, faults, history, next_turns, second, first

    turns, others, faults, history, next_turns, second, first = asyncio.run(go())
    assert len(turns) == 1 and others == []
    assert faults == []
    assert len(history) == 1
    assert second == (first + 1) % 3 and len(next_turns) == 1
    assert next_turns[0].request_id > turns[0].request_id


def test_a_reconnected_seat_gets_the_pending_turn_again():
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=2,
                             tc=TimeControl(decision_ms=5000, reconnect_ms=5000))
        links = [(await ref.join(bpb.Join(token=t, protocol_version=1)))[2] for t in m.tokens]
        await asyncio.sleep(0.2)
        first = m.state.current
        [turn] = [x.turn for x in drain(links[first].outbox) if x.WhichOneof("kind") == "turn"]
        m.detach(first, links[first])
        await asyncio.sleep(0.05)
        new, = [(await ref.join(bpb.Join(token=m.tokens[first], protocol_version=1)))[2]]
        await asyncio.sleep(0.2)
        msgs = drain(new.outbox)
        welcome = msgs[0].welcome
        again = [x.turn for x in msgs if x.WhichOneof("kind") == "turn"]
        m.stop(pb.TERMINATION_CANCELLED, "test over")
        await m.done.wait()
        return turn, welcome, again, list(m.faults)

    turn, welcome, again, faults = asyncio.run(go())
    assert welcome.resumed
    assert [t.request_id for t in again] == [turn.request_id]
    assert faults == []


def test_reconnecting_does_not_restart_the_decision_clock():
    # 400 ms a decision and no bank: a seat that drops and rejoins after 250 ms is shown the
    # 150 ms left, and times out at 400 ms from the first sending, not 400 ms after the rejoin.
    async def go():
        ref = Referee(record_dir=None)
        tc = TimeControl(decision_ms=400, bank_ms=0, reconnect_ms=5000)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=3, tc=tc)
        links = [(await ref.join(bpb.Join(token=t, protocol_version=1)))[2] for t in m.tokens]
        await asyncio.sleep(0.05)
        first = m.state.current
        drain(links[first].outbox)
        await asyncio.sleep(0.2)
        m.detach(first, links[first])
        new = (await ref.join(bpb.Join(token=m.tokens[first], protocol_version=1)))[2]
        await asyncio.sleep(0.02)
        again = [x.turn for x in drain(new.outbox) if x.WhichOneof("kind") == "turn"]
        await asyncio.wait_for(m.done.wait(), 5)
        return again, m.result, first

    again, result, first = asyncio.run(go())
    assert len(again) == 1 and again[0].decision_ms <= 250 and again[0].bank_ms == 0
    assert result.termination == pb.TERMINATION_FORFEIT
    assert result.forfeit.seat == first and result.forfeit.reason == pb.FAULT_REASON_TIMEOUT


def test_an_illegal_actions_reason_goes_to_its_seat_only():
    # "must follow ...: holds 5-2" would tell the table what the seat holds: the broadcast
    # fault is generic, the seat's Rejected and the record keep the engine's reason.
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=4,
                             tc=TimeControl(decision_ms=5000))
        links = [(await ref.join(bpb.Join(token=t, protocol_version=1)))[2] for t in m.tokens]
        await asyncio.sleep(0.05)
        first = m.state.current
        [turn] = [x.turn for x in drain(links[first].outbox) if x.WhichOneof("kind") == "turn"]
        bad = bpb.PlayRequest(action=bpb.ActionReply(
            request_id=turn.request_id, action=pb.Action(bid=pb.Bid(value=3))))  # below min
        m.receive(first, links[first], bad.SerializeToString())
        await asyncio.sleep(0.05)
        own = drain(links[first].outbox)
        other = drain(links[(first + 1) % 3].outbox)
        m.stop(pb.TERMINATION_CANCELLED, "test over")
        await m.done.wait()
        return own, other, list(m.faults)

    own, other, faults = asyncio.run(go())
    rejected = [x.rejected for x in own if x.WhichOneof("kind") == "rejected"]
    assert len(rejected) == 1 and "minimum bid" in rejected[0].reason
    public = [x.event.fault for x in other if x.WhichOneof("kind") == "event"
              and x.event.WhichOneof("kind") == "fault"]
    assert len(public) == 1 and "minimum" not in public[0].detail
    assert "minimum bid" in faults[0].detail  # the record keeps it


def test_a_quiet_seat_gets_no_events_even_when_it_reconnects():
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=2,
                             tc=TimeControl(decision_ms=5000, reconnect_ms=5000))
        links = [(await ref.join(bpb.Join(token=t, protocol_version=1, quiet=(i == 0))))[2]
                 for i, t in enumerate(m.tokens)]
        await asyncio.sleep(0.1)
        seen: list[list[str]] = [[], [], []]
        for _ in range(6):  # six decisions, each seat answering its turn
            for s in range(3):
                for x in drain(links[s].outbox):
                    seen[s].append(x.WhichOneof("kind"))
                    if x.WhichOneof("kind") == "turn":
                        reply = bpb.PlayRequest(action=bpb.ActionReply(
                            request_id=x.turn.request_id, action=x.turn.legal_actions[-1]))
                        m.receive(s, links[s], reply.SerializeToString())
            await asyncio.sleep(0.05)
        for s in (1, 2):
            seen[s] += [x.WhichOneof("kind") for x in drain(links[s].outbox)]
        events = len(m.events)
        m.detach(0, links[0])
        again = (await ref.join(bpb.Join(token=m.tokens[0], protocol_version=1, quiet=True)))[2]
        await asyncio.sleep(0.1)
        resumed = [x.WhichOneof("kind") for x in drain(again.outbox)]
        m.stop(pb.TERMINATION_CANCELLED, "test over")
        await m.done.wait()
        return seen, resumed, events

    seen, resumed, events = asyncio.run(go())
    assert events > 3
    assert set(seen[0]) <= {"welcome", "turn"} and "turn" in seen[0]
    assert seen[1].count("event") == seen[2].count("event") == events  # the others hear all
    # on its return, a welcome and its turn again: no replay of the events it missed
    assert "event" not in resumed and resumed[0] == "welcome"


def test_stop_lands_even_when_the_awaited_reply_arrives_at_the_same_moment():
    # The reply and the cancel land in one turn of the event loop: the match must still
    # end, cancelled, and ask for no further action (a lost cancel played on to the end).
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=5,
                             tc=TimeControl(decision_ms=5000))
        links = [(await ref.join(bpb.Join(token=t, protocol_version=1, quiet=True)))[2]
                 for t in m.tokens]
        await asyncio.sleep(0.1)
        seat = m.state.current
        [turn] = [x.turn for x in drain(links[seat].outbox) if x.WhichOneof("kind") == "turn"]
        reply = bpb.PlayRequest(action=bpb.ActionReply(request_id=turn.request_id,
                                                       action=turn.legal_actions[-1]))
        m.receive(seat, links[seat], reply.SerializeToString())
        m.stop(pb.TERMINATION_CANCELLED, "test: stop with a reply in flight")
        async with asyncio.timeout(2):
            await m.done.wait()
        later = [x for s in range(3) for x in drain(links[s].outbox)
                 if x.WhichOneof("kind") == "turn"]
        return m.result, later, len(m.state.history)

    result, later, applied = asyncio.run(go())
    assert result.termination == pb.TERMINATION_CANCELLED
    assert later == [] and applied <= 1


def _play_through(quiet: bool, seed: int) -> tuple[list[bytes], list[bytes]]:
    """A whole moon3 game in-process, each seat answering its turns with the last legal
    action: (the match's events, encoded; the events seat 0 received, encoded)."""
    async def go():
        ref = Referee(record_dir=None)
        m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=seed,
                             tc=TimeControl(decision_ms=5000))
        links = [(await ref.join(bpb.Join(token=t, protocol_version=1, quiet=quiet)))[2]
                 for t in m.tokens]
        received: list[bytes] = []
        while not m.done.is_set():
            for s in range(3):
                for x in drain(links[s].outbox):
                    if x.WhichOneof("kind") == "event" and s == 0:
                        received.append(x.event.SerializeToString())
                    if x.WhichOneof("kind") == "turn":
                        reply = bpb.PlayRequest(action=bpb.ActionReply(
                            request_id=x.turn.request_id, action=x.turn.legal_actions[-1]))
                        m.receive(s, links[s], reply.SerializeToString())
            await asyncio.sleep(0)
        received += [x.event.SerializeToString() for x in drain(links[0].outbox)
                     if x.WhichOneof("kind") == "event"]
        assert m.faults == [] and m.state.is_terminal()
        return [e.SerializeToString() for e in m.events], received

    return asyncio.run(go())


def test_a_quiet_games_events_are_the_events_a_listening_seat_hears():
    # With every seat quiet the referee sends no event but the end, and builds the others
    # only when asked (Match.events): they must be, in order and numbered alike, what a seat
    # that listens hears in the same game.
    quiet_events, quiet_heard = _play_through(True, 4)
    loud_events, loud_heard = _play_through(False, 4)
    assert len(loud_heard) > 300
    assert quiet_events == loud_events == loud_heard
    assert [pb.Event.FromString(e).sequence for e in quiet_events] == \
        list(range(1, len(quiet_events) + 1))
    assert [pb.Event.FromString(e).WhichOneof("kind") for e in quiet_heard] == ["game_ended"]
