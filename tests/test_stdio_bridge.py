"""The stdio bridge's pieces: the JSON lines both ways, garbage that stays garbage, the
exit codes before any game, and how a `language = "stdio"` manifest runs through it.
(Whole games through the bridge are in tests/e2e/test_languages.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from arena.bots.manifest import load_bot
from arena.sandbox import stdio_bridge

ROOT = Path(__file__).resolve().parents[1]


def test_a_json_line_becomes_the_request() -> None:
    line = b'{"action": {"requestId": "13", "action": {"play": {"high": 5, "low": 1}}}}'
    raw, error = stdio_bridge.request_from_line(line)
    assert error == ""
    assert bpb.PlayRequest.FromString(raw) == bpb.PlayRequest(action=bpb.ActionReply(
        request_id=13, action=pb.Action(play=pb.Tile(high=5, low=1))))
    # snake_case names are accepted too, as by every proto3 JSON parser
    raw, error = stdio_bridge.request_from_line(b'{"action": {"request_id": 2}}')
    assert error == "" and bpb.PlayRequest.FromString(raw).action.request_id == 2


@pytest.mark.parametrize("line", [
    b"hello", b"", b"{", b"[]", b"null", b'{"move": 1}', b'{"action": {"requestId": "x"}}',
    b"\xff\xfe", b'{"action": 5}', b"\x0a\x02\x08\x01", b"x" * 300,
])
def test_a_bad_line_stays_unparseable(line: bytes) -> None:
    raw, error = stdio_bridge.request_from_line(line)
    assert error
    with pytest.raises(DecodeError):
        bpb.PlayRequest.FromString(raw)


def test_a_response_is_one_compact_json_line() -> None:
    response = bpb.PlayResponse(rejected=bpb.Rejected(
        request_id=7, reason="4-4 does not\nfollow", retries_left=1))
    line = stdio_bridge.response_line(response)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line.decode() == ('{"rejected": {"requestId": "7", "reason": "4-4 does not\\nfollow", '
                             '"retriesLeft": 1}}\n')
    assert json_format.Parse(line, bpb.PlayResponse()) == response


def bridge(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MOON_")}
    return subprocess.run([sys.executable, "-m", "arena.sandbox.stdio_bridge", *args],
                          env={**environ, **env}, capture_output=True, text=True, timeout=60)


def test_exit_codes_before_the_game() -> None:
    assert bridge("--", "true").returncode == 2  # no MOON_ADDRESS / MOON_TOKEN
    env = {"MOON_ADDRESS": "127.0.0.1:1", "MOON_TOKEN": "t"}
    assert bridge("true", **env).returncode == 2  # no -- before the command
    done = bridge("--", "./no-such-bot", **env)
    assert done.returncode == 127
    assert "cannot run" in done.stderr and "no-such-bot" in done.stderr


def test_stdio_manifest_runs_through_the_bridge() -> None:
    spec = load_bot(ROOT / "example_bots" / "rust-stdio")
    assert spec.language == "stdio"
    assert spec.command() == [sys.executable, "-m", "arena.sandbox.stdio_bridge", "--name",
                              "rust-stdio", "--version", "1.0", "--",
                              "./target/release/rust-stdio"]
    grpc_bot = load_bot(ROOT / "example_bots" / "go-heuristic")
    assert grpc_bot.command() == ["./bot"]


ECHO_BOT = """
import json, sys
log = open(sys.argv[1], "a")
for line in sys.stdin:
    log.write(line)
    log.flush()
    msg = json.loads(line)
    if "turn" in msg:
        turn = msg["turn"]
        print(json.dumps({"action": {"requestId": turn["requestId"],
                                     "action": turn["legalActions"][0]}}), flush=True)
"""


def test_a_dropped_stream_is_rejoined_and_the_bot_never_notices(tmp_path: Path) -> None:
    """A referee (a scripted gRPC server here) that breaks the first stream after the bot's
    answer: the bridge joins again with the same token; the second welcome, the event sent
    again and the turn sent again are not passed to the bot, and the turn sent again is
    answered with the bot's answer (docs/protocol.md, "Reconnecting")."""
    import queue
    import threading
    from concurrent import futures

    import grpc

    legal = [pb.Action(bid=pb.Bid(value=0))]

    def turn(rid: int) -> bpb.PlayResponse:
        return bpb.PlayResponse(turn=bpb.Turn(request_id=rid, legal_actions=legal))

    def event(seq: int, ended: bool = False) -> bpb.PlayResponse:
        e = pb.Event(sequence=seq)
        if ended:
            e.game_ended.SetInParent()
        else:
            e.hand_started.SetInParent()
        return bpb.PlayResponse(event=e)

    streams: list[list[bpb.PlayRequest]] = []

    def play(requests, context):
        got: list[bpb.PlayRequest] = []
        streams.append(got)
        second = len(streams) == 2
        inbox: queue.Queue[bpb.PlayRequest] = queue.Queue()
        threading.Thread(target=lambda: [inbox.put(r) for r in requests], daemon=True).start()
        got.append(inbox.get(timeout=10))  # the join
        yield bpb.PlayResponse(welcome=bpb.Welcome(match_id="m", seat=0, resumed=second))
        yield event(1)
        yield turn(5)
        got.append(inbox.get(timeout=10))  # the answer to 5
        if not second:
            context.abort(grpc.StatusCode.UNAVAILABLE, "dropped on purpose")
        yield turn(6)
        got.append(inbox.get(timeout=10))
        yield event(2, ended=True)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("moon.v1.BotService", {
        "Play": grpc.stream_stream_rpc_method_handler(
            play, request_deserializer=bpb.PlayRequest.FromString,
            response_serializer=bpb.PlayResponse.SerializeToString)}),))
    sock = tmp_path / "referee.sock"
    server.add_insecure_port(f"unix://{sock}")
    server.start()
    try:
        (tmp_path / "bot.py").write_text(ECHO_BOT)
        seen = tmp_path / "seen.jsonl"
        out = bridge("--name", "echo", "--", sys.executable, str(tmp_path / "bot.py"),
                     str(seen), MOON_ADDRESS=f"unix://{sock}", MOON_TOKEN="tok")
    finally:
        server.stop(None)
    assert out.returncode == 0, out.stderr
    assert "joining again with the same token" in out.stderr
    # both streams joined with the same token; the turn sent again (5) was answered on the
    # second stream with the bot's answer, then 6 by the bot itself
    assert [[r.WhichOneof("kind") for r in s] for s in streams] == \
        [["join", "action"], ["join", "action", "action"]]
    assert [s[0].join.token for s in streams] == ["tok", "tok"]
    assert [r.action.request_id for r in streams[1][1:]] == [5, 6]
    assert all(r.action.action == legal[0] for s in streams for r in s[1:])
    # the bot saw one welcome, event 1 once, turns 5 and 6 once each, and the end
    lines = [json_format.Parse(x, bpb.PlayResponse()) for x in seen.read_text().splitlines()]
    kinds = [(x.WhichOneof("kind"), x.turn.request_id or x.event.sequence) for x in lines]
    assert kinds == [("welcome", 0), ("event", 1), ("turn", 5), ("turn", 6), ("event", 2)]
