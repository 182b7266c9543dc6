"""The executor seam with the local pool: real referee, real bot processes. What a game
gives back is checked against its record (written by the referee, re-simulated by
`verify`); a game the arena could not play is an InfrastructureError, never a result."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import gc
import json
from pathlib import Path

import pytest
from e2e_support import example
from moon_sdk.rules import Ruleset

from arena.bots.manifest import BotSpec
from arena.core.results import Termination
from arena.core.timecontrol import TimeControl
from arena.errors import ConfigError, InfrastructureError
from arena.executor.local import FinishedGame, GameRequest, LocalExecutor
from arena.records.record import load_record, verify_record

MOON3 = Ruleset.preset("moon3")
TC = TimeControl(startup_ms=30_000)


def request(game_id: str, bots: list[BotSpec], seed: int = 5, tc: TimeControl = TC
            ) -> GameRequest:
    return GameRequest(game_id, tuple(bots), MOON3, "moon3", seed, tc)


def play(tmp_path: Path, *requests: GameRequest, concurrency: int = 1
         ) -> list[FinishedGame | BaseException]:
    async def go() -> list[FinishedGame | BaseException]:
        async with LocalExecutor(tmp_path / "records", concurrency) as ex:
            assert ex.capacity == concurrency
            return await asyncio.gather(*(ex.play(r) for r in requests),
                                        return_exceptions=True)
    return asyncio.run(go())


def test_a_finished_game_agrees_with_its_record(tmp_path):
    bots = [example("heuristic"), example("random"), example("weak")]
    [done] = play(tmp_path, request("g1", bots))
    assert isinstance(done, FinishedGame), done
    assert done.record_path == str(tmp_path / "records" / "g1.json")
    record = load_record(done.record_path)
    assert verify_record(record) == []
    res = record["result"]
    assert done.result.termination.key == res["termination"] in ("target", "moon")
    assert (done.result.winner, list(done.result.scores), list(done.result.places)) == \
        (res["winner"], res["scores"], res["places"])
    assert done.result.hands_played == len(record["hands"]) == len(done.hands)
    for h, r in zip(done.hands, record["hands"], strict=True):
        assert (h.number, h.dealer, h.bidder, h.bid, h.made, list(h.tricks_taken),
                list(h.deltas or []), h.finished) == \
            (r["number"], r["dealer"], r["bidder"], r["bid"], r["made"], r["tricks_taken"],
             r["deltas"], r["finished"])
    assert done.faults == () and record["faults"] == []
    # the bots' time at the referee: every recorded action's ms, within rounding
    action_ms = sum(b["ms"] for h in record["hands"] for b in h["bids"] + h["plays"]) + sum(
        h.get(k) or 0 for h in record["hands"] for k in ("discard_ms", "trump_ms"))
    assert action_ms <= done.think_ms <= action_ms + len(record["actions"])
    assert done.think_ms <= done.wall_ms


def test_max_hands_1_plays_exactly_one_hand(tmp_path):
    # what the ladder's admission check asks for: one hand, then an adjudicated result
    one = dataclasses.replace(TC, max_hands=1)
    [done] = play(tmp_path, request("one", [example("random")] * 3, seed=9, tc=one))
    assert isinstance(done, FinishedGame), done
    record = load_record(done.record_path)
    assert verify_record(record) == []
    # random bots may shoot the moon and make it in that hand: a made 21 ends the game
    # before the limit does (docs/protocol.md, TERMINATION_MOON)
    if done.result.termination is Termination.MOON:
        assert max(done.result.scores) >= 21, done.result
    else:
        assert done.result.termination is Termination.HAND_LIMIT
    assert done.result.hands_played == 1 and len(record["hands"]) == 1
    # placed by the one hand's scores, as the record's hand says
    scores = record["hands"][0]["scores"]
    assert list(done.result.scores) == scores
    assert list(done.result.places) == [1 + sum(o > s for o in scores) for s in scores]


def test_a_played_game_is_freed_at_once_not_left_to_the_garbage_collector(tmp_path):
    # a long-running host plays thousands of games: each finished game's match (its state,
    # hand records, events) must go as soon as it is done with, by reference counting,
    # not linger in a reference cycle until the cyclic collector's next full pass
    from moon_sdk.rules.state import GameState

    from arena.referee.referee import Match

    bots = [example("heuristic"), example("random"), example("weak")]
    gc.collect()
    gc.disable()
    try:
        done = play(tmp_path, request("f1", bots), request("f2", bots, seed=6))
        assert all(isinstance(d, FinishedGame) for d in done), done
        # no game is running now: none of their matches or states may be alive
        alive = [o for o in gc.get_objects() if isinstance(o, Match | GameState)]
        assert alive == []
    finally:
        gc.enable()


def test_capacity_one_never_overlaps_two_games(tmp_path):
    bots = [example("random")] * 3
    done = play(tmp_path, request("a", bots, 1), request("b", bots, 2), request("c", bots, 3))
    spans = []
    for d in done:
        assert isinstance(d, FinishedGame), d
        r = json.loads(Path(d.record_path).read_text())
        spans.append((dt.datetime.fromisoformat(r["created_at"]),
                      dt.datetime.fromisoformat(r["finished_at"])))
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans


def test_an_aborted_game_is_an_infrastructure_error_not_a_result(tmp_path, monkeypatch):
    # a Docker bot with no engine behind DOCKER_HOST: the sandbox fails, the referee aborts
    # the game, and the executor reports it as the arena's failure (void it, replay it)
    from arena.sandbox import docker as sd

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    sd._shared_client.cache_clear()
    boxed = dataclasses.replace(example("random"), runner="docker")
    try:
        [err] = play(tmp_path, request("void", [example("random"), boxed, example("random")]))
    finally:
        sd._shared_client.cache_clear()
    assert isinstance(err, InfrastructureError)
    assert str(err).startswith("game void aborted: sandbox failure: ")
    assert load_record(tmp_path / "records" / "void.json")["result"]["termination"] == \
        "aborted"


def test_a_game_that_waits_for_a_slot_at_the_stop_is_not_started(tmp_path):
    # one slot: "first" plays, "second" waits for the slot when the executor stops. The
    # referee aborts "first"; "second" then gets the slot but is refused, not started (a
    # match made after the referee's shutdown was no game it aborted: it waited out its
    # start-up limit against a stopping server, and the host's stop with it)
    bots = [example("random")] * 3

    async def go() -> list[FinishedGame | BaseException]:
        async with LocalExecutor(tmp_path / "records", 1, grace_s=0.0) as ex:  # the host's
            tasks = [asyncio.create_task(ex.play(request(g, bots, seed)))
                     for g, seed in (("first", 1), ("second", 2))]
            assert ex._referee is not None
            while "first" not in ex._referee.matches:
                await asyncio.sleep(0.01)
        return await asyncio.gather(*tasks, return_exceptions=True)

    first, second = asyncio.run(go())
    assert isinstance(first, InfrastructureError), first
    assert load_record(tmp_path / "records" / "first.json")["result"]["termination"] == \
        "aborted"
    assert isinstance(second, InfrastructureError), second
    assert str(second) == "game second: stopped with the executor"
    assert not (tmp_path / "records" / "second.json").exists()


def test_a_bad_request_is_the_callers_config_error(tmp_path):
    [err] = play(tmp_path, request("two", [example("random")] * 2))
    assert isinstance(err, ConfigError) and "3 bots are needed" in str(err)
    with pytest.raises(ConfigError, match="at least 1"):
        LocalExecutor(tmp_path, concurrency=0)
