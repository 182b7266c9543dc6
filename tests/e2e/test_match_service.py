"""MatchService over real gRPC: a running match's views carry only public information
(checked against the game's record), a finished match the referee forgot is read back from
its record, and `moon serve` guards the service with an admin token by default — checked
first, before a request is parsed, with a bounded log for a flood of garbage."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path

import grpc
import pytest
from e2e_support import Served, start_serve, stop_serve, wait_ready, with_referee
from google.protobuf import text_format
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb
from moon_sdk.v1 import match_pb2 as mpb
from moon_sdk.v1 import match_pb2_grpc
from quick_seats import quick_seat

from arena.core.results import ILLEGAL_ACTION_PUBLIC

TOKEN = "s3cret-admin"
AUTH = (("authorization", f"Bearer {TOKEN}"),)


def tile_key(t: pb.Tile) -> tuple[int, int]:
    return (t.high, t.low)


class Cheater:
    """Plays a tile it holds that does not follow suit, once per seat (an illegal action
    whose reason names a tile it holds), else its first legal action (its highest bid in
    the auction, so that hands are played)."""

    def __init__(self) -> None:
        self.cheated = 0

    def __call__(self, turn: bpb.Turn) -> pb.Action:
        legal = {tile_key(a.play) for a in turn.legal_actions if a.WhichOneof("kind") == "play"}
        if legal and not self.cheated:
            held = [t for t in turn.observation.hand if tile_key(t) not in legal]
            if held:
                self.cheated += 1
                return pb.Action(play=held[0])
        if turn.legal_actions[0].WhichOneof("kind") == "bid":
            return turn.legal_actions[-1]  # bid (not pass): the hand is played out
        return turn.legal_actions[0]


def test_a_running_matchs_views_show_no_private_reason_checked_against_the_record(tmp_path):
    async def body(referee, ep):
        views: list[mpb.MatchInfo] = []
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ep.port}") as ch:
            stub = match_pb2_grpc.MatchServiceStub(ch)
            made = await stub.CreateMatch(mpb.CreateMatchRequest(
                ruleset=pb.Ruleset(preset="moon3"), seed=11,
                seats=[mpb.SeatConfig(name=f"s{i}") for i in range(3)],
                time_control=pb.TimeControl(decision_ms=10_000, max_hands=3)),
                metadata=AUTH)
            mid = made.match.match_id
            done = asyncio.Event()

            async def watch() -> None:
                while not done.is_set():
                    got = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid), metadata=AUTH)
                    listed = await stub.ListMatches(mpb.ListMatchesRequest(), metadata=AUTH)
                    for info in (got.match, *listed.matches):
                        if info.match_id == mid and info.status == mpb.MATCH_STATUS_RUNNING:
                            views.append(info)
                    await asyncio.sleep(0.005)

            watcher = asyncio.create_task(watch())
            await asyncio.gather(*(quick_seat(ch, t.token, Cheater()) for t in made.tokens))
            done.set()
            await watcher
            final = (await stub.GetMatch(mpb.GetMatchRequest(match_id=mid),
                                         metadata=AUTH)).match
        return views, final

    views, final = with_referee(tmp_path, body, tcp=True, match_service=True,
                                admin_token=TOKEN)
    record = json.loads(Path(final.record_path).read_text())
    private = [f["detail"] for f in record["faults"] if f["reason"] == "illegal_action"]
    assert private, record["faults"]  # the cheaters did cheat, and the record has why
    # the reason names a tile the seat held ("... holds 5-5"): private while it runs
    assert any(re.search(r"\d-\d", d) for d in private), private
    with_fault = [v for v in views if any(f.reason == pb.FAULT_REASON_ILLEGAL_ACTION
                                          for f in v.faults)]
    assert with_fault, "no view was taken while a fault was known and the match ran"
    for v in views:
        text = text_format.MessageToString(v)
        for detail in private:
            assert detail not in text
        assert v.seed == 0
        for f in v.faults:
            if f.reason == pb.FAULT_REASON_ILLEGAL_ACTION:
                assert f.detail == ILLEGAL_ACTION_PUBLIC
    # once over, the views say what the record says
    assert final.status == mpb.MATCH_STATUS_FINISHED and final.seed == 11
    assert [f.detail for f in final.faults] == [f["detail"] for f in record["faults"]]


def test_a_forgotten_finished_match_is_read_back_from_its_record(tmp_path):
    async def body(referee, ep):
        referee.keep_finished = 0  # forget each match as soon as it finishes
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ep.port}") as ch:
            stub = match_pb2_grpc.MatchServiceStub(ch)
            made = await stub.CreateMatch(mpb.CreateMatchRequest(
                ruleset=pb.Ruleset(preset="moon3"), seed=12,
                seats=[mpb.SeatConfig(name=f"q{i}", version="2") for i in range(3)],
                time_control=pb.TimeControl(decision_ms=10_000, max_hands=2)),
                metadata=AUTH)
            mid = made.match.match_id
            await asyncio.gather(*(quick_seat(ch, t.token) for t in made.tokens))
            for _ in range(100):
                if mid not in referee.matches:
                    break
                await asyncio.sleep(0.01)
            in_memory = mid in referee.matches
            got = (await stub.GetMatch(mpb.GetMatchRequest(match_id=mid),
                                       metadata=AUTH)).match
            listed = (await stub.ListMatches(mpb.ListMatchesRequest(), metadata=AUTH)).matches
            codes = []
            for bad in ("../records/" + mid, "nope"):
                try:
                    await stub.GetMatch(mpb.GetMatchRequest(match_id=bad), metadata=AUTH)
                except grpc.aio.AioRpcError as e:
                    codes.append(e.code())
        return mid, in_memory, got, list(listed), codes

    mid, in_memory, got, listed, codes = with_referee(
        tmp_path, body, tcp=True, match_service=True, admin_token=TOKEN)
    assert not in_memory and listed == []
    record = json.loads((tmp_path / "records" / f"{mid}.json").read_text())
    assert got.match_id == mid and got.status == mpb.MATCH_STATUS_FINISHED
    assert got.seed == record["seed"] == 12
    assert [(s.name, s.version) for s in got.seats] == [(f"q{i}", "2") for i in range(3)]
    assert list(got.result.scores) == record["result"]["scores"] == list(got.scores)
    assert got.result.hands_played == record["result"]["hands_played"]
    assert got.result.termination == pb.TERMINATION_HAND_LIMIT
    assert got.time_control.max_hands == 2 and got.ruleset.target_score > 0
    assert codes == [grpc.StatusCode.NOT_FOUND] * 2


# -- `moon serve` ----------------------------------------------------------------------

def serve(tmp_path: Path, *args: str) -> Served:
    """`moon serve` with ``args``, without MOON_ADMIN_TOKEN in its environment."""
    return start_serve(tmp_path, *args, env={k: v for k, v in os.environ.items()
                                             if k != "MOON_ADMIN_TOKEN"})


def test_moon_serve_needs_an_admin_token_unless_told_it_is_insecure(tmp_path):
    refused = serve(tmp_path)
    assert refused.proc.wait(timeout=60) == 2  # a usage error, before anything is served
    text = refused.log.read_text()
    assert "--admin-token" in text and "--insecure-no-admin-token" in text
    assert "Traceback" not in text

    insecure = serve(tmp_path, "--insecure-no-admin-token")
    try:
        wait_ready(insecure)
        with grpc.insecure_channel(insecure.address) as ch:
            got = match_pb2_grpc.MatchServiceStub(ch).ListMatches(mpb.ListMatchesRequest(),
                                                                  timeout=30)
        assert list(got.matches) == []
    finally:
        stop_serve(insecure)
    assert "--insecure-no-admin-token" in insecure.log.read_text()


GARBAGE = b"\xff\xff\xff\xff\xff"
"""Not a protobuf message (a field key that never ends)."""


def test_garbage_requests_are_refused_before_parsing_with_a_bounded_log(tmp_path):
    with pytest.raises(Exception):  # noqa: B017 - whatever protobuf raises: not a message
        mpb.GetMatchRequest.FromString(GARBAGE)
    served = serve(tmp_path, "--admin-token", TOKEN)
    try:
        wait_ready(served)
        codes = []
        with grpc.insecure_channel(served.address) as ch:
            raw = ch.unary_unary("/moon.v1.MatchService/GetMatch")  # bytes in, bytes out
            started = time.monotonic()
            for i in range(40):  # unauthenticated: wrong token, none at all
                md = (("authorization", "Bearer wrong"),) if i % 2 else None
                try:
                    raw(GARBAGE, metadata=md, timeout=30)
                except grpc.RpcError as e:
                    codes.append(e.code())  # type: ignore[attr-defined]
            elapsed = time.monotonic() - started
            authed = []
            for _ in range(5):  # with the token, garbage is the caller's bad argument
                try:
                    raw(GARBAGE, metadata=AUTH, timeout=30)
                except grpc.RpcError as e:
                    authed.append(e.code())  # type: ignore[attr-defined]
            # and the service still works
            ok = match_pb2_grpc.MatchServiceStub(ch).ListMatches(
                mpb.ListMatchesRequest(), metadata=AUTH, timeout=30)
    finally:
        stop_serve(served)
    assert codes == [grpc.StatusCode.UNAUTHENTICATED] * 40
    assert authed == [grpc.StatusCode.INVALID_ARGUMENT] * 5
    assert list(ok.matches) == []
    text = served.log.read_text()
    assert "Traceback" not in text and "Exception" not in text
    refused = [line for line in text.splitlines() if "refused" in line]
    # one line per refusal at most every 10 s (REFUSED_LOG_EVERY_S), counting the rest
    assert 1 <= len(refused) <= 1 + int(elapsed // 10) + 1, refused
    assert "without the admin token" in refused[0]
