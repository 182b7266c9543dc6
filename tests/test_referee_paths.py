"""A reply is handled where it arrives (the stream's reader, :meth:`Match.receive`) when the
match task is waiting for it, and by the match task from its inbox otherwise. The two paths
must referee alike: here whole games are played twice in-process, once as the referee does
(replies handled on arrival) and once with every reply sent through the inbox (the match
task handles each, as it always did before), and everything the games leave must be the
same: the actions, every public event and what each seat was sent, the faults, the result
and the record (its times blanked). Misbehaving seats are among them: an illegal action
rejected and retried, illegal actions until a forfeit, an answer out of turn, bytes that are
no message, and a game cut at the hand limit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from arena.core.timecontrol import TimeControl
from arena.referee.referee import Match, Referee, game_record

Reply = Callable[[int, bpb.Turn, int], bytes | None]
"""What a seat sends for a turn: ``(seat, turn, how many turns it had before)`` -> bytes
(None: it answers with the last legal action)."""


def _illegal(turn: bpb.Turn) -> pb.Action:
    """A well-formed action that is not legal now (a tile, or a bid, not among the legal)."""
    legal = {a.SerializeToString() for a in turn.legal_actions}
    candidates = [pb.Action(play=pb.Tile(high=h, low=lo)) for h in range(7) for lo in range(h + 1)]
    candidates += [pb.Action(bid=pb.Bid(value=v)) for v in (3, 4, 5, 6, 7)]
    return next(c for c in candidates if c.SerializeToString() not in legal)


def _answer(turn: bpb.Turn, action: pb.Action | None = None) -> bytes:
    return bpb.PlayRequest(action=bpb.ActionReply(
        request_id=turn.request_id, action=action or turn.legal_actions[-1])).SerializeToString()


def _blank(o: Any, top: bool = True) -> Any:
    """A record with what depends on timing blanked (times, ms, logs)."""
    if isinstance(o, dict):
        return {k: v if top and k in ("time_control", "seats") else
                0 if k == "ms" or k.endswith("_ms") else
                "" if k in ("created_at", "finished_at") else _blank(v, False)
                for k, v in o.items()}
    if isinstance(o, list):
        return [_blank(x, False) for x in o]
    return o


def _play(preset: str, seed: int, quiet: bool, reply: Reply, tc: TimeControl,
          on_arrival: bool) -> dict[str, Any]:
    """One game in-process, the test playing every seat; what it left behind."""
    handled_now = 0

    async def go() -> dict[str, Any]:
        nonlocal handled_now
        ref = Referee(record_dir=None)
        ruleset = Ruleset.preset(preset)
        m = ref.create_match(ruleset, [("a", "1")] * ruleset.players, seed=seed, tc=tc,
                             match_id="paths")
        links = [(await ref.join(bpb.Join(token=t, protocol_version=1, quiet=quiet)))[2]
                 for t in m.tokens]
        sent: list[list[bytes]] = [[] for _ in links]
        turns_seen = [0] * len(links)
        while not m.done.is_set():
            for s, link in enumerate(links):
                while not link.outbox.empty():
                    msg = link.outbox.get_nowait()
                    if msg is None:
                        continue
                    raw = msg if isinstance(msg, bytes) else msg.SerializeToString()
                    sent[s].append(bytes(raw))
                    x = bpb.PlayResponse.FromString(raw)
                    if x.WhichOneof("kind") == "turn":
                        out = reply(s, x.turn, turns_seen[s])
                        turns_seen[s] += 1
                        m.receive(s, link, out if out is not None else _answer(x.turn))
            await asyncio.sleep(0)
        for s, link in enumerate(links):
            while not link.outbox.empty():
                if (msg := link.outbox.get_nowait()) is not None:
                    sent[s].append(bytes(msg if isinstance(msg, bytes)
                                         else msg.SerializeToString()))
        return {"history": list(m.state.history),
                "events": [e.SerializeToString() for e in m.events],
                "sent": sent,
                "faults": [(f.seat, f.reason, f.detail, f.forfeit) for f in m.faults],
                "result": m.result,
                "record": _blank(game_record(m)),
                "handled_now": handled_now}

    def counted(self: Match, ev: Any) -> None:
        nonlocal handled_now
        handled_now += 1
        original(self, ev)

    original = Match._handle_now
    with pytest.MonkeyPatch.context() as mp:
        if on_arrival:
            mp.setattr(Match, "_handle_now", counted)
        else:  # every reply through the inbox: the match task handles it
            mp.setattr(Match, "_handle_now", lambda self, ev: self.inbox.put_nowait(ev))
        return asyncio.run(go())


def _rejected_once(seat: int, turn: bpb.Turn, before: int) -> bytes | None:
    """Seat 2's first answer is illegal (a retry), then it plays on."""
    return _answer(turn, _illegal(turn)) if seat == 2 and before == 0 else None


def _always_illegal(seat: int, turn: bpb.Turn, before: int) -> bytes | None:
    """Seat 1 only ever answers illegally: a forfeit once its retries are spent."""
    return _answer(turn, _illegal(turn)) if seat == 1 else None


def _out_of_turn(seat: int, turn: bpb.Turn, before: int) -> bytes | None:
    """Seat 0, at its third turn, answers as if it were the next seat's: handled on
    arrival, the fault must still end the game in the match task."""
    if seat == 0 and before == 2:
        return _answer(turn)  # sent, below, on the wrong seat's stream
    return None


def _garbage(seat: int, turn: bpb.Turn, before: int) -> bytes | None:
    """Seat 1 sends bytes that are no PlayRequest at its second turn."""
    return b"\xff\xfe not a message" if seat == 1 and before == 1 else None


GAMES = [
    ("moon3", 4, True, None, TimeControl(decision_ms=5000)),
    ("moon3", 4, False, None, TimeControl(decision_ms=5000)),
    ("moon4", 3, False, _rejected_once, TimeControl(decision_ms=5000)),
    ("moon4", 5, True, _rejected_once, TimeControl(decision_ms=5000)),
    ("moon3", 6, False, _always_illegal, TimeControl(decision_ms=5000)),
    ("moon3", 7, True, _garbage, TimeControl(decision_ms=5000)),
    ("moon3-marks", 8, False, None, TimeControl(decision_ms=5000, max_hands=2)),
]


@pytest.mark.parametrize(("preset", "seed", "quiet", "reply", "tc"), GAMES)
def test_replies_handled_on_arrival_referee_as_the_match_task_does(preset, seed, quiet, reply,
                                                                   tc):
    fn: Reply = reply or (lambda s, t, n: None)
    now = _play(preset, seed, quiet, fn, tc, on_arrival=True)
    inbox = _play(preset, seed, quiet, fn, tc, on_arrival=False)
    assert now["handled_now"] > len(now["history"]) // 2  # the path under test was taken
    for key in ("history", "events", "sent", "faults", "result", "record"):
        assert now[key] == inbox[key], key
    assert len(now["history"]) > 0 and now["record"]["actions"]


def test_an_answer_out_of_turn_handled_on_arrival_forfeits_as_from_the_inbox():
    def play(on_arrival: bool) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            ref = Referee(record_dir=None)
            m = ref.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=9,
                                 tc=TimeControl(decision_ms=5000), match_id="paths")
            links = [(await ref.join(bpb.Join(token=t, protocol_version=1, quiet=True)))[2]
                     for t in m.tokens]
            turns_seen = [0, 0, 0]
            answered = 0
            while not m.done.is_set():
                for s, link in enumerate(links):
                    while not link.outbox.empty():
                        msg = link.outbox.get_nowait()
                        if not isinstance(msg, bytes):
                            continue
                        x = bpb.PlayResponse.FromString(msg)
                        if x.WhichOneof("kind") == "turn":
                            wrong = _out_of_turn(s, x.turn, turns_seen[s]) is not None
                            turns_seen[s] += 1
                            on = (s + 1) % 3 if wrong else s
                            answered += not wrong
                            m.receive(on, links[on], _answer(x.turn))
                await asyncio.sleep(0)
            return {"history": list(m.state.history), "answered": answered,
                    "result": m.result,
                    "faults": [(f.seat, f.reason, f.detail, f.forfeit) for f in m.faults],
                    "record": _blank(game_record(m))}

        with pytest.MonkeyPatch.context() as mp:
            if not on_arrival:
                mp.setattr(Match, "_handle_now", lambda self, ev: self.inbox.put_nowait(ev))
            return asyncio.run(go())

    now, inbox = play(True), play(False)
    assert now == inbox
    assert now["result"].termination == pb.TERMINATION_FORFEIT
    [fault] = now["faults"]
    assert fault[0] == 1 and fault[3] and "out of turn (seat 0 is to act)" in fault[2]
    assert len(now["history"]) == now["answered"] > 2  # every answer in turn applied, no more
