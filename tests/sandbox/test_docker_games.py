"""Bots in Docker containers against a real engine and a real referee: a whole game, no
network, memory and process limits, a hung bot; every container gone afterwards, no
process left, and the other seats' results recorded right."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import threading
import uuid

import pytest
from moon_sdk.rules import Ruleset
from sandbox_support import (
    BAD_SEAT,
    BOTS,
    ROOT,
    assert_clean_game,
    assert_forfeit,
    checked_record,
    containers_of,
    example,
    play,
    processes_with,
    sandbox_bot,
    unique,
)

from arena.bots.manifest import load_bot
from arena.core.timecontrol import TimeControl
from arena.executor.game import play_game, serving
from arena.referee.referee import Referee
from arena.sandbox.docker import DockerLimits

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_engine")]

# generous clocks: the machine is shared, and a container takes a moment to start
FAST = TimeControl(startup_ms=30_000, decision_ms=1_000, bank_ms=1_000, reconnect_ms=1_000)


def test_whole_game_in_containers(tmp_path, docker_engine):
    secret = tmp_path / "secret.txt"
    secret.write_text("not for bots")
    peek = [str(ROOT / "example_bots"), str(ROOT / "tests"), str(secret), "/root/.ssh",
            str(ROOT / ".git"), "/run/moon"]
    bots = [example("heuristic", "docker"), sandbox_bot("play", *peek),
            example("random", "docker")]
    match = play(tmp_path, bots, tc=TimeControl(startup_ms=30_000), match_id=unique("whole"))
    record = checked_record(match)
    assert_clean_game(match, record)
    log = record["logs"][str(BAD_SEAT)]
    assert "uid=65534 cwd=/bot" in log
    # the bot sees its runtime and the referee's socket folder, nothing else of the host
    for path in peek[:-1]:
        assert f"SEES {path}: no" in log, log
    assert "SEES /run/moon: yes" in log
    # read-only everywhere but the tmpfs
    assert re.search(r"WRITE /bot: denied \(.*Read-only file system", log), log
    assert re.search(r"WRITE /: denied \(.*Read-only file system", log), log
    assert "WRITE /tmp: ok" in log
    for seat in (0, 2):
        assert f"joined match {match.match_id}" in record["logs"][str(seat)]
    assert containers_of(docker_engine, match.match_id) == []


def _gateway(client) -> str:
    """The host's address on Docker's default bridge (what a container with a network
    would use to reach the host)."""
    ipam = client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    return ipam.get("Gateway") or str(next(ipaddress.ip_network(ipam["Subnet"]).hosts()))


def test_network_is_off(tmp_path, docker_engine):
    accepted: list[object] = []
    with socket.socket() as listener:
        listener.bind(("0.0.0.0", 0))
        listener.listen()
        listener.settimeout(0.2)
        port = listener.getsockname()[1]
        gateway = _gateway(docker_engine)
        # control: the host really listens there
        with socket.create_connection((gateway, port), timeout=5):
            pass
        listener.accept()[0].close()
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                try:
                    conn, peer = listener.accept()
                    accepted.append(peer)
                    conn.close()
                except OSError:
                    pass

        t = threading.Thread(target=watch, daemon=True)
        t.start()
        targets = [f"{gateway}:{port}", "1.1.1.1:53", "8.8.8.8:443"]
        bots = [example("heuristic"), sandbox_bot("net", *targets), example("heuristic")]
        try:
            match = play(tmp_path, bots, tc=FAST, match_id=unique("net"))
        finally:
            stop.set()
            t.join(5)
    record = checked_record(match)
    assert_clean_game(match, record)
    log = record["logs"][str(BAD_SEAT)]
    for target in targets + ["dns pypi.org"]:
        assert f"NET {target}: blocked (" in log, log
    assert "OPEN" not in log
    assert accepted == []
    assert containers_of(docker_engine, match.match_id) == []


def test_memory_hog_is_killed_and_forfeits_out_of_memory(tmp_path, docker_engine):
    limits = DockerLimits(memory_mb=128)
    bots = [example("heuristic"), sandbox_bot("oom", "2048"), example("heuristic")]
    tc = TimeControl(startup_ms=30_000, decision_ms=60_000, bank_ms=1_000)
    match = play(tmp_path, bots, tc=tc, limits=limits, match_id=unique("oom"))
    record = checked_record(match)
    assert_forfeit(match, record, "out_of_memory")
    log = record["logs"][str(BAD_SEAT)]
    assert "allocated 16 MiB" in log
    assert "allocated everything" not in log
    assert containers_of(docker_engine, match.match_id) == []


def test_fork_bomb_is_contained_and_leaves_nothing(tmp_path, docker_engine):
    marker = f"forkbomb-{uuid.uuid4().hex}"
    limits = DockerLimits(pids=48)
    bots = [example("heuristic"), sandbox_bot("forkbomb", marker), example("heuristic")]
    tc = TimeControl(startup_ms=8_000, decision_ms=1_000, bank_ms=1_000)
    match = play(tmp_path, bots, tc=tc, limits=limits, match_id=unique("forkbomb"))
    record = checked_record(match)
    # the bomb never joined: it stalls, and forfeits; the others are ranked by score
    assert_forfeit(match, record, "startup_stall")
    log = record["logs"][str(BAD_SEAT)]
    m = re.search(r"FORK stopped after (\d+) children: .*Resource temporarily unavailable", log)
    assert m, log
    assert int(m.group(1)) < 48
    assert containers_of(docker_engine, match.match_id) == []
    assert processes_with(marker) == []


def test_sleeper_times_out_and_its_container_is_gone(tmp_path, docker_engine):
    marker = f"sleeper-{uuid.uuid4().hex}"
    bots = [example("heuristic"), sandbox_bot("sleep", marker), example("heuristic")]
    match = play(tmp_path, bots, tc=FAST, match_id=unique("sleeper"))
    record = checked_record(match)
    assert_forfeit(match, record, "timeout")
    assert "sleeping forever" in record["logs"][str(BAD_SEAT)]
    assert containers_of(docker_engine, match.match_id) == []
    assert processes_with(marker) == []


def test_two_docker_games_at_once_do_not_disturb_each_other(tmp_path, docker_engine):
    """A hung container and a clean all-Docker game on the same referee at the same time."""
    async def go():
        referee = Referee(record_dir=tmp_path / "records")
        moon3 = Ruleset.preset("moon3")
        async with serving(referee, None) as ep:
            bad = play_game(referee, ep, [example("heuristic", "docker"), sandbox_bot("sleep"),
                                          example("heuristic", "docker")], moon3,
                            preset="moon3", seed=5, tc=FAST, match_id=unique("pair-bad"))
            good = play_game(referee, ep, [example("heuristic", "docker")] * 3, moon3,
                             preset="moon3", seed=6, tc=TimeControl(startup_ms=30_000),
                             match_id=unique("pair-good"))
            return await asyncio.gather(bad, good)

    bad, good = asyncio.run(go())
    assert_forfeit(bad, checked_record(bad), "timeout")
    assert_clean_game(good, checked_record(good))
    assert containers_of(docker_engine, bad.match_id) == []
    assert containers_of(docker_engine, good.match_id) == []


def test_stdio_bot_in_a_container(tmp_path, docker_engine):
    """A stdio bot runs with the arena's stdio bridge inside its container."""
    bots = [example("heuristic"), load_bot(BOTS / "stdio"), example("heuristic", "docker")]
    match = play(tmp_path, bots, tc=TimeControl(startup_ms=30_000), match_id=unique("stdio"))
    record = checked_record(match)
    assert_clean_game(match, record)
    assert containers_of(docker_engine, match.match_id) == []
