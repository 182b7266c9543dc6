"""The referee server over real gRPC: whole games through the CLI, the match service,
spectators, health, reflection, and refusals with the right status codes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from e2e_support import ROOT, example, with_referee
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from moon_sdk.rules import Ruleset, parse_tile
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import bot_pb2_grpc, match_pb2_grpc
from moon_sdk.v1 import game_pb2 as pb
from moon_sdk.v1 import match_pb2 as mpb

from arena.core.timecontrol import NO_LIMIT_MS, TimeControl
from arena.executor.game import play_game
from arena.protocol.convert import result_to_pb
from arena.records.record import load_record, verify_record

MOON = [sys.executable, "-m", "arena.cli"]


def moon(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MOON, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


def recorded_game(folder: Path, seed: int, *bots: str) -> Path:
    """`moon play` a game that ends by the rules, recorded in ``folder``: its record."""
    out = moon("play", "--seed", str(seed), "--records", str(folder), *bots, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    [path] = folder.glob("*.json")
    return path


@pytest.mark.parametrize("preset, bots", [
    ("moon3", ["heuristic", "random", "heuristic"]),
    ("moon4", ["heuristic", "random", "heuristic", "random"]),
])
def test_moon_play_full_game(tmp_path, preset, bots):
    out = moon("play", "--preset", preset, "--seed", "5", "--records", str(tmp_path), *bots,
               cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "winner:" in out.stdout
    [path] = tmp_path.glob("*.json")
    record = load_record(path)
    assert verify_record(record) == []
    assert record["result"]["termination"] in ("target", "moon")
    assert [s["name"] for s in record["seats"]] == bots
    # the game really ended: a side at or over the target, strictly ahead, or a moon
    scores = record["result"]["scores"]
    if record["result"]["termination"] == "target":
        top = max(scores)
        assert top >= 21 and scores.count(top) == 1
    # every play carries its seat and milliseconds
    plays = [p for h in record["hands"] for p in h["plays"]]
    assert plays and all(isinstance(p["ms"], int) and p["ms"] >= 0 for p in plays)
    # `moon replay verify` agrees, and `show` tells the story
    v = moon("replay", "verify", str(path), cwd=ROOT)
    assert v.returncode == 0 and "ok" in v.stdout
    s = moon("replay", "show", str(path), cwd=ROOT)
    assert s.returncode == 0 and "winner:" in s.stdout


def test_replay_verify_catches_a_tampered_record(tmp_path):
    path = recorded_game(tmp_path, 9, "heuristic", "heuristic", "heuristic")
    data = json.loads(path.read_text())
    first = data["hands"][0]
    # move a trick to another winner: the replay must disagree
    idx = next(i for i, h in enumerate(data["hands"]) if h["tricks"])
    t = data["hands"][idx]["tricks"][0]
    t["winner"] = (t["winner"] + 1) % 3
    path.write_text(json.dumps(data))
    v = moon("replay", "verify", str(path), cwd=ROOT)
    assert v.returncode == 1
    assert f"hand {idx + 1} tricks" in v.stdout  # counted from 1, as a reader does
    assert first["dealt"]  # the deal is in the record
    second = tmp_path / "second.json"
    second.write_text(json.dumps(data))  # the tampered record, once more
    path.write_text("{not json")
    # an unreadable file is reported, and the files after it are still checked
    v = moon("replay", "verify", str(path), str(second), cwd=ROOT)
    assert v.returncode == 1 and "not valid JSON" in v.stdout
    assert f"{second}: 1 disagreement" in v.stdout


def test_replay_verify_refuses_a_record_of_another_deal_version(tmp_path):
    path = recorded_game(tmp_path, 4, "heuristic", "random", "random")
    data = json.loads(path.read_text())
    assert data["deal_version"] == 2
    del data["deal_version"]  # as written before the field existed: version 1 deals
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    v = moon("replay", "verify", str(old), cwd=ROOT)
    assert v.returncode == 1
    assert "dealt by version 1 of the deal and this moon deals version 2" in v.stdout
    assert v.stdout.count("  - ") == 1  # one clear sentence, not a mismatch per hand
    s = moon("replay", "show", str(old), cwd=ROOT)  # the hands as recorded still show
    assert s.returncode == 0 and "winner:" in s.stdout


def test_damaged_records_are_clear_errors_and_tampered_results_are_caught(tmp_path):
    path = recorded_game(tmp_path, 4, "heuristic", "random", "random")
    good = json.loads(path.read_text())
    cases = {
        "bids_int": lambda d: d["hands"][0].update(bids=5),
        "seed_text": lambda d: d.update(seed="seven"),
        "seats_ints": lambda d: d.update(seats=[1, 2, 3]),
        "places": lambda d: d["result"].update(places=d["result"]["places"][::-1]),
        "framed": lambda d: d["result"].update(termination="forfeit", forfeit={
            "seat": 1, "reason": "crash", "detail": "", "forfeit": True}),
        "markup": lambda d: d["seats"][0].update(name="[/oops] [bold]x"),
    }
    for name, change in cases.items():
        data = json.loads(json.dumps(good))
        change(data)
        f = tmp_path / f"{name}.json"
        f.write_text(json.dumps(data))
        v = moon("replay", "verify", str(f), cwd=ROOT)
        s = moon("replay", "show", str(f), cwd=ROOT)
        for done in (v, s):
            assert "Traceback" not in done.stderr + done.stdout, (name, done.stderr)
        if name == "markup":  # a name is data, not rich markup: shown as it is
            assert s.returncode == 0 and "[/oops] [bold]x" in s.stdout
        else:
            assert v.returncode == 1, (name, v.stdout)
    v = moon("replay", "verify", str(tmp_path / "places.json"), cwd=ROOT)
    assert "result places: recorded" in v.stdout
    v = moon("replay", "verify", str(tmp_path / "framed.json"), cwd=ROOT)
    assert "the replay ended by the rules before any forfeit" in v.stdout
    assert "the faults hold no such forfeit" in v.stdout


def test_a_game_that_never_ends_is_adjudicated_at_the_hand_limit(tmp_path):
    # Three bots that always pass: moon3 redeals every hand, for ever, but for max_hands.
    passer = tmp_path / "passer"
    passer.mkdir()
    script = ROOT / "tests" / "bots" / "passer.py"
    (passer / "bot.toml").write_text(f'name = "passer"\nrun = "{{python}} {script}"\n')
    out = moon("play", "--seed", "2", "--max-hands", "6", "--records", str(tmp_path / "r"),
               str(passer), str(passer), str(passer), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    [path] = (tmp_path / "r").glob("*.json")
    record = load_record(path)
    res = record["result"]
    # six passed-out deals, nobody scored: all share first place, no winner
    assert res["termination"] == "hand_limit" and res["hands_played"] == 6
    # six passed-out deals, and not the seventh, dealt but never played
    assert len(record["hands"]) == 6
    assert all(h["finished"] and h["bidder"] is None for h in record["hands"])
    assert res["scores"] == [0, 0, 0] and res["places"] == [1, 1, 1] and res["winner"] is None
    assert verify_record(record) == []
    assert "no winner (hand_limit)" in out.stdout
    # a record claiming another limit, or another length, does not verify
    record["time_control"]["max_hands"] = 7
    assert any("max_hands is 7" in p for p in verify_record(record))
    record["time_control"]["max_hands"] = 6
    record["result"]["hands_played"] = 3
    assert any("hands_played: recorded 3" in p for p in verify_record(record))


def test_hand_limit_places_by_score():
    from arena.core.results import GameResult

    r = GameResult.hand_limit([5, 9, 5], 200)
    assert list(r.places) == [2, 1, 2] and r.winner == 1
    r = GameResult.hand_limit([7, 7, 1], 200)
    assert list(r.places) == [1, 1, 3] and r.winner is None
    r = GameResult.hand_limit([-3, 4], 200)  # partnerships
    assert list(r.places) == [2, 1] and r.winner == 1


def test_moon_play_exits_3_when_a_bot_forfeits(tmp_path):
    crasher = tmp_path / "crasher"
    crasher.mkdir()
    script = ROOT / "tests" / "bots" / "misbehave.py"
    (crasher / "bot.toml").write_text(f'name = "crasher"\nrun = "{{python}} {script} crash"\n')
    out = moon("play", "--seed", "3", "--records", str(tmp_path / "records"), "heuristic",
               str(crasher), "random", cwd=ROOT)
    assert out.returncode == 3, out.stderr
    assert "seat 1 (crasher) forfeited: crash" in out.stderr
    [path] = (tmp_path / "records").glob("*.json")  # the record is written all the same
    assert load_record(path)["result"]["forfeit"]["seat"] == 1


@pytest.mark.parametrize("body, reason, shown", [
    ("raise ValueError('boom in act')", "crash", "ValueError: boom in act"),
    # no action at all is an illegal action: rejected and retried, the third one forfeits
    ("return None  # a forgotten return", "illegal_action",
     "act() returned None (NoneType), which is no action: it must return one of "
     "obs.legal_actions"),
])
def test_a_bot_that_fails_in_act_shows_why(tmp_path, body, reason, shown):
    bot = tmp_path / "broken"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "broken"\nrun = "{python} bot.py"\n')
    (bot / "bot.py").write_text(
        "from moon_sdk import Bot, run\n\n\nclass Broken(Bot):\n    def act(self, obs):\n"
        f"        {body}\n\n\nrun(Broken())\n")
    out = moon("play", "--seed", "3", "--records", str(tmp_path / "r"), str(bot), "random",
               "random", cwd=ROOT)
    assert out.returncode == 3, out.stderr
    assert f"seat 0 (broken) forfeited: {reason}" in out.stderr
    assert shown in out.stderr  # the end of its stderr, on the screen
    [path] = (tmp_path / "r").glob("*.json")
    s = moon("replay", "show", "--logs", str(path), cwd=ROOT)
    assert s.returncode == 0 and "--- seat 0 output" in s.stdout and shown in s.stdout


def test_a_manual_seat_is_joined_by_a_bot_started_by_hand(tmp_path):
    # `moon play manual ...` prints the address and token of seat 0 and waits; we start the
    # heuristic bot ourselves with them, as one would in a debugger.
    import re

    play = subprocess.Popen(
        [*MOON, "play", "--seed", "6", "--records", str(tmp_path), "manual", "random",
         "random"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COLUMNS": "200"})
    bot = None
    try:
        line = ""
        while "MOON_TOKEN=" not in line:
            line = play.stderr.readline()
            assert line, "moon play ended without giving seat 0's token"
        address, token = re.search(r"MOON_ADDRESS=(\S+) MOON_TOKEN=(\S+)", line).groups()
        banner = play.stderr.readline()
        bot = subprocess.Popen([sys.executable, "bot.py"], cwd=ROOT / "example_bots" / "heuristic",
                               env={**os.environ, "MOON_ADDRESS": address, "MOON_TOKEN": token},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out, err = play.communicate(timeout=120)
        assert play.returncode == 0, err
        assert bot.wait(timeout=30) == 0
    finally:
        for p in (play, bot):
            if p is not None and p.poll() is None:
                p.kill()
    [path] = tmp_path.glob("*.json")
    record = load_record(path)
    assert verify_record(record) == [] and record["result"]["termination"] in ("target", "moon")
    seat0 = record["seats"][0]
    assert seat0["name"] == "manual" and seat0["reported_name"] == "heuristic"
    # the manual seat had no decision limit; the bots kept the game's clock
    assert seat0["clock"] == {"decision_ms": NO_LIMIT_MS, "bank_ms": 0}
    assert "no decision limit" in banner
    assert all("clock" not in s for s in record["seats"][1:])


def test_cli_bad_arguments_are_clear(tmp_path):
    out = moon("play", "heuristic", "nosuchbot", "random", cwd=tmp_path)
    assert out.returncode == 2 and "no bot 'nosuchbot'" in out.stderr
    out = moon("play", "heuristic", "random", cwd=tmp_path)
    assert out.returncode == 2 and "for 3 players" in out.stderr
    out = moon("play", "-o", "min_bid=9", "heuristic", "random", "random", cwd=tmp_path)
    assert out.returncode == 2 and "min_bid" in out.stderr
    out = moon("play", "--decision-ms", "0", "heuristic", "random", "random", cwd=tmp_path)
    assert out.returncode == 2 and "decision_ms" in out.stderr


def _tiles_in(msg) -> list[pb.Tile]:
    """Every Tile message anywhere inside ``msg``."""
    found = []
    for field, value in msg.ListFields():
        values = value if field.is_repeated else [value]
        for v in values:
            if isinstance(v, pb.Tile):
                found.append(v)
            elif hasattr(v, "ListFields"):
                found.extend(_tiles_in(v))
    return found


def test_spectator_sees_no_hidden_tile_and_services_work(tmp_path):
    async def body(referee, ep):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ep.port}") as ch:
            stub = match_pb2_grpc.MatchServiceStub(ch)
            # health and reflection
            h = await health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(service="moon.v1.MatchService"), timeout=5)
            assert h.status == health_pb2.HealthCheckResponse.SERVING
            refl = reflection_pb2_grpc.ServerReflectionStub(ch)
            names = []
            async for r in refl.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")])):
                names = [s.name for s in r.list_services_response.service]
            assert {"moon.v1.BotService", "moon.v1.MatchService",
                    "grpc.health.v1.Health"} <= set(names)
            # bad create requests are INVALID_ARGUMENT with the reason
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await stub.CreateMatch(mpb.CreateMatchRequest(
                    ruleset=pb.Ruleset(preset="moon3", min_bid=9),
                    seats=[mpb.SeatConfig(name="a")] * 3), timeout=5)
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "min_bid" in e.value.details()
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await stub.GetMatch(mpb.GetMatchRequest(match_id="nope"), timeout=5)
            assert e.value.code() == grpc.StatusCode.NOT_FOUND

            # a real game, watched from the start by a spectator
            tc = TimeControl(startup_ms=8000)
            game = asyncio.create_task(play_game(
                referee, ep, [example("heuristic"), example("random"), example("heuristic")],
                Ruleset.preset("moon3"), preset="moon3", seed=21, tc=tc, match_id="watched"))
            while "watched" not in referee.matches:
                await asyncio.sleep(0.01)
            events = [r.event async for r in stub.WatchMatch(
                mpb.WatchMatchRequest(match_id="watched"))]
            match = await game
            listed = await stub.ListMatches(mpb.ListMatchesRequest(), timeout=5)
            got = await stub.GetMatch(mpb.GetMatchRequest(match_id="watched"), timeout=5)
            return match, events, listed, got

    match, events, listed, got = with_referee(tmp_path, body, tcp=True, match_service=True)
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert events[-1].WhichOneof("kind") == "game_ended"
    assert got.match.status == mpb.MATCH_STATUS_FINISHED
    assert got.match.result == result_to_pb(match.result)
    assert "watched" in [m.match_id for m in listed.matches]
    # no event carries a tile before it is played: every tile in an event is a tile
    # already played in the current hand
    played: set[tuple[int, int]] = set()
    kinds = set()
    for ev in events:
        kind = ev.WhichOneof("kind")
        kinds.add(kind)
        if kind == "hand_started":
            played = set()
        if kind == "played":
            played.add((ev.played.tile.high, ev.played.tile.low))
        for t in _tiles_in(ev):
            assert (t.high, t.low) in played, f"hidden tile {t.high}-{t.low} in {kind} event"
    assert {"hand_started", "bid", "played", "trick_won", "hand_ended", "game_ended"} <= kinds
    # ... and the widow / discard never appear, though the record knows them
    record = load_record(Path(match.record_path))
    discards = {h["discard"] for h in record["hands"] if h["discard"]}
    assert discards
    for ev in events:
        if ev.WhichOneof("kind") in ("widow_taken", "discarded"):
            assert _tiles_in(ev) == []
    assert parse_tile(next(iter(discards))) >= 0


def test_join_refusals_have_clear_status(tmp_path):
    async def body(referee, ep):
        m = referee.create_match(Ruleset.preset("moon3"), [("a", "1")] * 3, seed=1,
                                 tc=TimeControl(startup_ms=3000))
        results = {}
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ep.port}") as ch:
            stub = bot_pb2_grpc.BotServiceStub(ch)
            for name, join in {
                "bad_token": bpb.Join(token="nope", protocol_version=1),
                "bad_version": bpb.Join(token=m.tokens[0], protocol_version=99),
            }.items():
                call = stub.Play(iter([bpb.PlayRequest(join=join)]))
                with pytest.raises(grpc.aio.AioRpcError) as e:
                    async for _ in call:
                        pass
                results[name] = (e.value.code(), e.value.details())
            call = stub.Play(iter([bpb.PlayRequest(action=bpb.ActionReply(request_id=1))]))
            with pytest.raises(grpc.aio.AioRpcError) as e:
                async for _ in call:
                    pass
            results["no_join"] = (e.value.code(), e.value.details())
        m.stop(pb.TERMINATION_CANCELLED, "test over")
        await m.done.wait()
        return results, m

    results, m = with_referee(tmp_path, body, tcp=True)
    assert results["bad_token"][0] == grpc.StatusCode.UNAUTHENTICATED
    assert "MOON_TOKEN" in results["bad_token"][1]
    assert results["bad_version"][0] == grpc.StatusCode.FAILED_PRECONDITION
    assert "99" in results["bad_version"][1] and "version 1" in results["bad_version"][1]
    assert results["no_join"][0] == grpc.StatusCode.INVALID_ARGUMENT
    assert m.result.termination == pb.TERMINATION_CANCELLED


def test_match_service_is_off_where_bots_connect_and_guarded_by_the_admin_token(tmp_path):
    async def calls(ep, metadata=None):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ep.port}") as ch:
            stub = match_pb2_grpc.MatchServiceStub(ch)
            try:
                r = await stub.ListMatches(mpb.ListMatchesRequest(), timeout=5,
                                           metadata=metadata)
                return "ok", len(r.matches)
            except grpc.aio.AioRpcError as e:
                return e.code(), e.details()

    async def bots_side(referee, ep):  # what `moon play` and the ladder serve
        return await calls(ep)

    async def guarded(referee, ep):  # `moon serve --admin-token s3cret`
        return (await calls(ep), await calls(ep, (("authorization", "Bearer wrong"),)),
                await calls(ep, (("authorization", "Bearer s3cret"),)))

    assert with_referee(tmp_path, bots_side, tcp=True)[0] == grpc.StatusCode.UNIMPLEMENTED
    none, wrong, right = with_referee(tmp_path, guarded, tcp=True, match_service=True,
                                      admin_token="s3cret")
    assert none[0] == wrong[0] == grpc.StatusCode.UNAUTHENTICATED
    assert "admin" in none[1]
    assert right == ("ok", 0)
