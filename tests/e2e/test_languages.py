"""Bots in any language over real gRPC: Node.js, Go and a stdio bot (Rust, through the
stdio bridge) play with Python bots; stdio bots that misbehave get the fault a gRPC bot
would; `moon new-bot` folders of every language build, play, and rejoin after a dropped
stream (the check's planted drop: the gRPC ones by their own code, the stdio ones through
the bridge).

The example bots are built here if they are stale (`make bots` does it before the tests);
a test whose toolchain (node/npm, go, cargo, java/mvn, cmake and a C++ compiler) is missing
is skipped with the reason (`.ci/run` installs the Java, C++ and Node.js ones).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from e2e_support import TEST_BOTS, example, with_referee
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb

from arena.bots.manifest import BotSpec, load_bot
from arena.bots.starters import LANGUAGES
from arena.core.timecontrol import TimeControl
from arena.executor.game import play_game
from arena.records.record import load_record, verify_record
from arena.sandbox.stamps import ensure_built, missing_tool

# Start-up is generous: a 2-core machine may be busy with other tests while four runtimes
# start; the decision limits are the defaults.
TC = TimeControl(startup_ms=30_000)
MOON3 = Ruleset.preset("moon3")
MOON4 = Ruleset.preset("moon4")


def built(spec: BotSpec) -> BotSpec:
    """The bot, built if stale; the test is skipped if its toolchain is missing."""
    why = missing_tool(spec)
    if why:
        pytest.skip(f"cannot build {spec.name}: {why}")
    ensure_built(spec)
    return spec


def assert_clean_game(match) -> dict:
    """The game ended by the rules, nobody faulted, and its record verifies."""
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON), match.faults
    assert list(match.faults) == []
    record = load_record(Path(match.record_path))
    assert verify_record(record) == []
    # every seat really played: each made plays in the hands
    seats = {p["seat"] for h in record["hands"] for p in h["plays"]}
    assert seats == set(range(len(record["seats"])))
    return record


def assert_rejoins(spec: BotSpec, where: Path) -> None:
    """``spec`` in seat 0 of one hand whose first turn is not sent: its stream is dropped
    instead (:mod:`arena.referee.probes`, ``drop``). It must join again with its token and play the
    hand to the end with no fault (docs/protocol.md, "Reconnecting")."""
    from arena.executor.local import GameRequest, LocalExecutor
    from arena.records.record import read_record

    async def go():
        async with LocalExecutor(where / "rejoin") as ex:
            return await ex.play(GameRequest(
                f"rejoin-{spec.name}", (spec, example("heuristic"), example("heuristic")),
                MOON3, "moon3", 4, replace(TC, max_hands=1), probe="drop"))

    finished = asyncio.run(go())
    assert list(finished.faults) == [], finished.faults
    assert finished.record_path is not None
    record = load_record(finished.record_path)
    log = read_record(finished.record_path).logs.get("0", "")
    # it was dropped, said it joins again, and then played its seat of the hand
    assert "dropped on purpose" in log and "joining again with the same token" in log, log
    [hand] = record["hands"]
    assert hand["finished"] and any(p["seat"] == 0 for p in hand["plays"])


def test_python_node_go_and_stdio_bots_play_a_game(tmp_path):
    bots = [example("heuristic"), built(example("node-heuristic")),
            built(example("go-heuristic")), built(example("rust-stdio"))]

    async def body(referee, ep):
        return await play_game(referee, ep, bots, MOON4, preset="moon4", seed=3, tc=TC,
                               match_id="languages")

    record = assert_clean_game(with_referee(tmp_path, body))
    assert [s["reported_name"] for s in record["seats"]] == [b.name for b in bots]
    assert [s["reported_version"] for s in record["seats"]] == ["1.0"] * 4
    # each bot's stderr is in the record; the stdio bot's comes through the bridge
    assert "joined match languages as seat 1" in record["logs"]["1"]
    assert "joined match languages as seat 2" in record["logs"]["2"]
    assert "rust-stdio: joined match languages as seat 3" in record["logs"]["3"]


def test_node_and_go_bots_play_over_tcp(tmp_path):
    bots = [built(example("node-heuristic")), built(example("go-heuristic")),
            example("random")]

    async def body(referee, ep):
        return await play_game(referee, ep, bots, MOON3, preset="moon3", seed=8, tc=TC)

    assert_clean_game(with_referee(tmp_path, body, tcp=True))


@pytest.mark.parametrize("name", ["node-heuristic", "go-heuristic", "rust-stdio"])
def test_exit_codes_without_config_and_when_refused(tmp_path, name):
    spec = built(example(name))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOON_")}

    async def run(**extra: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            *spec.command(), cwd=spec.folder, env={**env, **extra},
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        return proc.returncode, err.decode()

    async def body(referee, ep):
        return await run(), await run(MOON_ADDRESS=ep.address, MOON_TOKEN="not-a-token")

    (no_config, _), (refused, err) = with_referee(tmp_path, body)
    assert no_config == 2
    assert refused == 3 and "unknown join token" in err


def stdio_bot(mode: str) -> BotSpec:
    return BotSpec(name=f"stdio-{mode}", folder=TEST_BOTS, language="stdio",
                   run=f"{{python}} stdio_misbehave.py {mode}")


@pytest.mark.parametrize("mode, reason", [
    ("garbage", "protocol_error"),
    ("not_a_request", "protocol_error"),
    ("wrong_id", "protocol_error"),
    ("illegal", "illegal_action"),
    ("crash", "crash"),
])
def test_misbehaving_stdio_bot_forfeits(tmp_path, mode, reason):
    bots = [example("heuristic"), stdio_bot(mode), example("heuristic")]

    async def body(referee, ep):
        return await play_game(referee, ep, bots, MOON3, preset="moon3", seed=11, tc=TC)

    match = with_referee(tmp_path, body)
    record = load_record(Path(match.record_path))
    assert verify_record(record) == []
    assert record["result"]["termination"] == "forfeit"
    assert record["result"]["forfeit"]["seat"] == 1
    assert record["result"]["forfeit"]["reason"] == reason
    assert list(match.result.places)[1] == 3
    log = record["logs"]["1"]
    assert f"stdio_misbehave {mode}: joined" in log  # the bot's stderr, through the bridge
    if mode in ("garbage", "not_a_request"):  # the bridge says what was wrong with the line
        assert "is not a JSON moon.v1.PlayRequest" in log


def test_well_behaved_stdio_bot_plays_to_the_end(tmp_path):
    bots = [stdio_bot("good"), example("heuristic"), example("heuristic")]

    async def body(referee, ep):
        return await play_game(referee, ep, bots, MOON3, preset="moon3", seed=5, tc=TC)

    record = assert_clean_game(with_referee(tmp_path, body))
    assert record["seats"][0]["reported_name"] == "stdio-good"


def test_new_bot_scaffolds_build_and_play(tmp_path):
    from arena.cli import main

    runner = CliRunner()
    bots: dict[str, BotSpec] = {}
    for lang in ("python", "node", "go", "stdio"):
        out = runner.invoke(main, ["new-bot", f"new-{lang}", "--lang", lang,
                                   "--dir", str(tmp_path / "bots")])
        assert out.exit_code == 0, out.output
        assert f"new-{lang}" in out.output
        folder = tmp_path / "bots" / f"new-{lang}"
        assert (folder / "README.md").is_file() and (folder / "bot.toml").is_file()
        bots[lang] = built(load_bot(folder))
    # the folders are self-contained: nothing refers back to the repository
    assert (tmp_path / "bots" / "new-node" / "proto" / "moon" / "v1" / "bot.proto").is_file()
    assert (tmp_path / "bots" / "new-go" / "gen" / "moonv1" / "bot_grpc.pb.go").is_file()
    again = runner.invoke(main, ["new-bot", "new-go", "--dir", str(tmp_path / "bots")])
    assert again.exit_code != 0 and "exists already" in again.output

    heuristic = example("heuristic")  # partners that make the games end soon

    async def body(referee, ep):
        games = [[bots["python"], heuristic, bots["node"], heuristic],
                 [bots["go"], heuristic, bots["stdio"], heuristic]]
        return await asyncio.gather(*(
            play_game(referee, ep, seats, MOON4, preset="moon4", seed=21 + i, tc=TC)
            for i, seats in enumerate(games)))

    for match in with_referee(tmp_path, body):
        record = assert_clean_game(match)
        for seat in (0, 2):
            assert record["seats"][seat]["reported_name"].startswith("new-")
    # the Python one rejoins through the SDK (tested there); the others by their own code
    for lang in ("node", "go", "stdio"):
        assert_rejoins(bots[lang], tmp_path)


# the starters whose toolchains are heavier: one test each, so that a missing one skips alone
NEW_STARTERS = ("java", "typescript", "cpp")


@pytest.mark.parametrize("lang", NEW_STARTERS)
def test_java_typescript_and_cpp_starters_build_and_play(tmp_path, lang):
    from arena.cli import main

    assert set(NEW_STARTERS) < set(LANGUAGES)
    if lang == "cpp" and not (shutil.which("c++") or shutil.which("g++")):
        pytest.skip("cannot build the C++ starter: no C++ compiler (c++, g++) on PATH")
    out = CliRunner().invoke(main, ["new-bot", f"my-{lang}", "--lang", lang,
                                    "--dir", str(tmp_path / "bots")])
    assert out.exit_code == 0, out.output
    folder = tmp_path / "bots" / f"my-{lang}"
    spec = built(load_bot(folder))
    assert spec.name == f"my-{lang}"

    async def body(referee, ep):
        game = await play_game(referee, ep, [spec, example("heuristic"), example("heuristic")],
                               MOON3, preset="moon3", seed=17, tc=TC, match_id=f"starter-{lang}")
        # the protocol's exit codes: 2 without MOON_ADDRESS/MOON_TOKEN, 3 when refused
        env = {k: v for k, v in os.environ.items() if not k.startswith("MOON_")}
        codes = []
        for extra in ({}, {"MOON_ADDRESS": ep.address, "MOON_TOKEN": "not-a-token"}):
            proc = await asyncio.create_subprocess_exec(
                *spec.command(), cwd=spec.folder, env={**env, **extra},
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
            codes.append((proc.returncode, err.decode()))
        return game, codes

    match, codes = with_referee(tmp_path, body)
    record = assert_clean_game(match)
    assert record["seats"][0]["reported_name"] == f"my-{lang}"
    assert codes[0][0] == 2, codes[0]
    assert codes[1][0] == 3 and "unknown join token" in codes[1][1], codes[1]
    assert_rejoins(spec, tmp_path)
