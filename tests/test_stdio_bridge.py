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

from arena import stdio_bridge
from arena.bots import load_bot

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
    return subprocess.run([sys.executable, "-m", "arena.stdio_bridge", *args],
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
    assert spec.command() == [sys.executable, "-m", "arena.stdio_bridge", "--name", "rust-stdio",
                              "--version", "1.0", "--", "./target/release/rust-stdio"]
    grpc_bot = load_bot(ROOT / "example_bots" / "go-heuristic")
    assert grpc_bot.command() == ["./bot"]
