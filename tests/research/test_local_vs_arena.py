"""The in-process runner against the arena: with deterministic bots and the same seed, a
real `moon play` game (a referee server, a process per bot, gRPC) and `play_local` make
the same record (actions, hands, result, faults), and each bot was sent exactly the same
messages (the digest bot's hash of its welcome, events, observations and rejections)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from moon_sdk.local import play_local
from research_support import BOTS, EXAMPLES, MOON, bot_module, game_facts

from arena.records.record import load_record, verify_record

DIGEST = re.compile(r"DIGEST ([0-9a-f]{64}) turns=(\d+)")


@pytest.mark.parametrize("preset,options,seed", [
    ("moon3", [], 11),
    ("moon4", ["min_bid=3"], 12),
    ("moon3", ["trump_before_widow=true", "allow_no_trump=false"], 13),
])
def test_moon_play_and_play_local_make_the_same_game(tmp_path, preset, options, seed):
    digest, heuristic = BOTS / "digest", EXAMPLES / "heuristic"
    seats = [digest, heuristic, digest, heuristic][:4 if preset == "moon4" else 3]
    args = [MOON, "play", *map(str, seats), "--preset", preset, "--seed", str(seed),
            "--records", str(tmp_path)]
    for o in options:
        args += ["-o", o]
    done = subprocess.run(args, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = tmp_path.glob("*.json")
    arena = load_record(path)
    assert verify_record(arena) == []

    from arena.cli.options import make_ruleset
    ruleset = make_ruleset(preset, tuple(options))
    bots = [bot_module(s).DigestBot() if s == digest else bot_module(s).HeuristicBot()
            for s in seats]
    local = play_local(bots, ruleset, seed=seed, preset=preset)
    assert verify_record(local) == []

    assert game_facts(local) == game_facts(arena)
    # the digest bot was rejected once (its illegal first answer) in both
    digest_seats = [i for i, s in enumerate(seats) if s == digest]
    assert sorted(f["seat"] for f in arena["faults"]) == digest_seats
    assert all(f["reason"] == "illegal_action" and not f["forfeit"] for f in arena["faults"])
    # and was sent the same messages, turn for turn
    for seat in digest_seats:
        m = DIGEST.search(arena["logs"][str(seat)])
        assert m, arena["logs"][str(seat)]
        assert bots[seat].digest == m[1]
        assert bots[seat].turns == int(m[2]) > 10
    json.dumps(local)  # JSON-ready, as the arena's
