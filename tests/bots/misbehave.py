"""A bot that misbehaves on purpose, for the referee's fault tests.

Usage: misbehave.py MODE   (MOON_ADDRESS, MOON_TOKEN from the environment)

It speaks raw bytes on the stream, so it can send what no well-behaved stub would.
Until its mode's moment comes it plays the first legal action.

Modes: hang, crash, loud_crash (writes "kaboom" lines to stderr first), illegal,
illegal_play (only when playing tiles: a tile it does not hold), offsuit (under no trumps
or doubles as trumps, a tile it holds that does not follow suit, whenever it has one),
deaf (after a Rejected answers nothing more), plain (none: plays the first legal action,
does not reconnect), out_of_turn, garbage, oversized, wrong_token, wrong_id,
double_stream, reconnect, slow (1.5 s per decision, eats the bank), nojoin, exit3
(exits with code 3 at once, joining nothing), bad_version (joins with protocol version 99),
huge (a 2 MiB message on its second turn: over the referee's 64 KiB limit, under
gRPC's 4 MiB), escape (first double-forks a sleeper into a new session with setsid,
prints "ESCAPED <pid>" to stderr, then plays), flood (first writes FLOOD_MIB MiB, default
50, to stderr, then plays, then prints "FLOOD last line 1..3").
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time

import grpc
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

MODE = sys.argv[1]
ADDRESS = os.environ["MOON_ADDRESS"]
TOKEN = os.environ["MOON_TOKEN"]


def join(token: str = TOKEN) -> bytes:
    version = 99 if MODE == "bad_version" else 1
    return bpb.PlayRequest(join=bpb.Join(token=token, protocol_version=version, bot_name=MODE,
                                         bot_version="0")).SerializeToString()


def reply(turn: bpb.Turn, action: pb.Action | None = None, rid: int | None = None) -> bytes:
    return bpb.PlayRequest(action=bpb.ActionReply(
        request_id=turn.request_id if rid is None else rid,
        action=action or turn.legal_actions[0])).SerializeToString()


def illegal_action(turn: bpb.Turn) -> pb.Action:
    """A well-formed action that is not legal now (a tile not in hand, or a bad bid)."""
    legal = {a.SerializeToString() for a in turn.legal_actions}
    candidates = [pb.Action(play=pb.Tile(high=h, low=lo)) for h in range(7) for lo in range(h + 1)]
    candidates += [pb.Action(bid=pb.Bid(value=v)) for v in (3, 4, 5, 6, 7)]
    for c in candidates:
        if c.SerializeToString() not in legal:
            return c
    raise AssertionError("no illegal action found")


def off_suit(turn: bpb.Turn) -> pb.Action | None:
    """Under no trumps or doubles as trumps, a play of a held tile that is not legal now
    (it does not follow suit); None otherwise."""
    obs = turn.observation
    if obs.phase != pb.PHASE_PLAY or obs.trump.kind not in (pb.TRUMP_KIND_DOUBLES,
                                                           pb.TRUMP_KIND_NO_TRUMP):
        return None
    legal = {a.SerializeToString() for a in turn.legal_actions}
    plays = [pb.Action(play=t) for t in obs.hand]
    return next((a for a in plays if a.SerializeToString() not in legal), None)


class Stream:
    def __init__(self, channel: grpc.Channel, first: bytes) -> None:
        self.out: queue.Queue[bytes | None] = queue.Queue()
        self.out.put(first)
        call = channel.stream_stream("/moon.v1.BotService/Play", request_serializer=None,
                                     response_deserializer=bpb.PlayResponse.FromString)
        self.call = call(iter(self.out.get, None))

    def send(self, raw: bytes) -> None:
        self.out.put(raw)

    def close(self) -> None:
        self.out.put(None)


def escape() -> None:
    """Leave a sleeper behind in a session (and process group) of its own."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            print(f"ESCAPED {os.getpid()}", file=sys.stderr, flush=True)
            while True:
                time.sleep(60)
        os._exit(0)
    os.waitpid(pid, 0)


def flood() -> None:
    line = b"x" * 1023 + b"\n"
    chunk = line * 1024  # 1 MiB
    for _ in range(int(os.environ.get("FLOOD_MIB", "50"))):
        sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.flush()


def main() -> int:
    if MODE == "nojoin":
        time.sleep(3600)
    if MODE == "exit3":
        return 3
    if MODE == "escape":
        escape()
    if MODE == "flood":
        flood()
    channel = grpc.insecure_channel(ADDRESS)
    grpc.channel_ready_future(channel).result(timeout=10)
    s = Stream(channel, join("not-a-token" if MODE == "wrong_token" else TOKEN))
    turns = 0
    try:
        for resp in s.call:
            kind = resp.WhichOneof("kind")
            if kind == "welcome":
                if MODE == "out_of_turn":
                    s.send(bpb.PlayRequest(action=bpb.ActionReply(
                        request_id=1, action=pb.Action(bid=pb.Bid(value=0)))).SerializeToString())
                if MODE == "double_stream" and not resp.welcome.resumed:
                    second = threading.Thread(target=second_stream, args=(channel,),
                                              daemon=True)
                    second.start()
                continue
            if kind == "rejected" and MODE == "deaf":
                time.sleep(3600)
            if kind != "turn":
                continue
            turn = resp.turn
            turns += 1
            if MODE == "double_stream" and turns == 1:
                # hold the first turn until the second stream is refused (it waits out
                # the referee's grace first), so the game cannot end before the fault
                second.join(timeout=4)
            if MODE == "hang":
                time.sleep(3600)
            if MODE == "crash" and turn.observation.phase == pb.PHASE_PLAY:
                os._exit(7)
            if MODE == "loud_crash" and turn.observation.phase == pb.PHASE_PLAY:
                print("kaboom: about to fall over\nkaboom: the last words", file=sys.stderr,
                      flush=True)
                os._exit(7)
            if MODE == "illegal_play" and turn.observation.phase == pb.PHASE_PLAY:
                s.send(reply(turn, illegal_action(turn)))
                continue
            if MODE == "illegal":
                s.send(reply(turn, illegal_action(turn)))
                continue
            if MODE == "offsuit" and (off := off_suit(turn)) is not None:
                s.send(reply(turn, off))
                continue
            if MODE == "garbage" and turns == 2:
                s.send(b"\xff\xff\xff\xff garbage, not a protobuf \x00\x01")
                continue
            if MODE == "oversized" and turns == 2:
                s.send(b"\x0a" + b"\x80" * 3 + b"x" * (200 * 1024))
                continue
            if MODE == "huge" and turns == 2:
                s.send(b"\x0a" + b"\x80" * 3 + b"x" * (2 * 1024 * 1024))
                continue
            if MODE == "wrong_id":
                s.send(reply(turn, rid=turn.request_id + 1000))
                continue
            if MODE == "slow":
                time.sleep(1.5)
            if MODE == "reconnect" and turns == 3:
                s.close()
                s.call.cancel()
                time.sleep(0.3)
                return reconnect_and_finish(channel)
            s.send(reply(turn))
        if MODE == "flood":
            for i in (1, 2, 3):
                print(f"FLOOD last line {i}", file=sys.stderr, flush=True)
    except grpc.RpcError as e:
        print(f"stream ended: {e.code().name}: {e.details()}", file=sys.stderr)
        if e.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION):
            channel.close()  # as the SDK does: a refused bot exits at once
            return 3
        return 1
    return 0


def second_stream(channel: grpc.Channel) -> None:
    s2 = Stream(channel, join())
    try:
        for _ in s2.call:
            pass
    except grpc.RpcError as e:
        print(f"second stream refused: {e.code().name}: {e.details()}", file=sys.stderr)


def reconnect_and_finish(channel: grpc.Channel) -> int:
    s = Stream(channel, join())
    for resp in s.call:
        kind = resp.WhichOneof("kind")
        if kind == "welcome":
            print(f"resumed={resp.welcome.resumed}", file=sys.stderr)
        elif kind == "turn":
            s.send(reply(resp.turn))
    return 0


if __name__ == "__main__":
    sys.exit(main())
