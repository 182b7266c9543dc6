"""The sandbox's configuration without an engine: limits, manifest keys, the container's
settings (every lock is on), the runner choice, and an engine that is not there."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path

import pytest
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb
from sandbox_support import BOTS, ROOT, example, sandbox_bot

from arena.bots.manifest import BotSpec
from arena.core.timecontrol import TimeControl
from arena.errors import ConfigError
from arena.executor.game import play_game, serving
from arena.referee.referee import Referee
from arena.sandbox import docker as sd
from arena.sandbox import exit_detail, make_process
from arena.sandbox.docker import (
    BASE_IMAGE,
    DockerLimits,
    DockerProcess,
    container_config,
    docker_options,
    host_runtime_mounts,
    image_tag,
)
from arena.sandbox.local import LocalProcess


def spec(**extra) -> BotSpec:
    return BotSpec(name="b", folder=BOTS, run="{python} sandboxbot.py play", runner="docker",
                   extra=extra)


class TestLimits:
    def test_defaults_are_safe(self):
        lim = DockerLimits()
        assert lim.user.split(":")[0] != "0"
        assert lim.build_network == "none"
        assert 0 < lim.memory_mb <= 4096 and 0 < lim.pids <= 1024

    @pytest.mark.parametrize("bad", [{"memory_mb": 0}, {"pids": -1}, {"cpus": 0}, {"pids": 1.5},
                                     {"user": "0:0"}, {"user": "root"},
                                     {"build_network": "host"}, {"memory_mb": True}])
    def test_bad_values(self, bad):
        with pytest.raises(ConfigError):
            DockerLimits(**bad)

    def test_from_dict(self):
        assert DockerLimits.from_dict({"memory_mb": 256}).memory_mb == 256
        with pytest.raises(ConfigError, match="unknown docker limit"):
            DockerLimits.from_dict({"memory": 256})


class TestManifest:
    def test_base_image_by_default(self):
        opts = docker_options(spec())
        assert opts.host_runtime and not opts.own_image
        assert sd.image_of(spec()) == BASE_IMAGE

    def test_dockerfile_and_image(self):
        assert sd.image_of(spec(dockerfile="Dockerfile")) == image_tag(spec())
        assert sd.image_of(spec(image="x/y:1")) == "x/y:1"
        assert docker_options(spec(image="x/y:1")).host_runtime is False

    @pytest.mark.parametrize("extra, message", [
        ({"image": "a", "dockerfile": "Dockerfile"}, "not both"),
        ({"dockerfile": "../Dockerfile"}, "inside the bot's folder"),
        ({"image": ""}, "non-empty"),
        ({"host_runtime": "yes"}, "true or false"),
    ])
    def test_bad_keys(self, extra, message):
        with pytest.raises(ConfigError, match=message):
            docker_options(spec(**extra))

    def test_tags_are_valid_and_distinct(self):
        a = image_tag(BotSpec(name="My.Bot", folder=BOTS, run="x"))
        b = image_tag(BotSpec(name="my-bot", folder=BOTS, run="x"))
        assert a != b and a == a.lower() and a.startswith("moon-arena-bot/")


class TestContainer:
    ADDRESS = "unix:///tmp/moon-x/referee.sock"

    def test_every_lock_is_on(self):
        lim = DockerLimits(memory_mb=300, cpus=0.5, pids=50, tmp_mb=8)
        cfg = container_config(spec(), self.ADDRESS, "tok", lim, match_id="m1", seat=2)
        assert cfg["network_mode"] == "none"
        assert cfg["read_only"] is True
        assert cfg["cap_drop"] == ["ALL"]
        assert cfg["security_opt"] == ["no-new-privileges"]
        assert cfg["user"] == "65534:65534"
        assert cfg["mem_limit"] == cfg["memswap_limit"] == "300m"
        assert cfg["nano_cpus"] == 500_000_000
        assert cfg["pids_limit"] == 50
        assert cfg["init"] is True
        assert "size=8m" in cfg["tmpfs"]["/tmp"]
        assert cfg["labels"]["moon-arena"] == "1"
        assert cfg["labels"]["moon-arena.match"] == "m1"
        assert cfg["labels"]["moon-arena.seat"] == "2"
        assert cfg["environment"]["MOON_ADDRESS"] == "unix:///run/moon/referee.sock"
        assert cfg["environment"]["MOON_TOKEN"] == "tok"
        assert cfg["volumes"]["/tmp/moon-x"] == {"bind": "/run/moon", "mode": "ro"}
        assert cfg["volumes"][str(BOTS)] == {"bind": "/bot", "mode": "ro"}
        assert all(v["mode"] == "ro" for v in cfg["volumes"].values())
        assert cfg["command"][0] == sys.executable
        assert cfg["working_dir"] == "/bot"
        # nothing of the host's environment leaks in
        assert set(cfg["environment"]) <= {"MOON_ADDRESS", "MOON_TOKEN", "MOON_BOT_NAME",
                                           "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
                                           "HOME"}

    def test_tcp_referee_is_refused(self):
        with pytest.raises(sd.SandboxError, match="Unix socket"):
            container_config(spec(), "127.0.0.1:5000", "tok", DockerLimits())

    def test_own_image_runs_its_own_python(self):
        cfg = container_config(spec(dockerfile="Dockerfile"), self.ADDRESS, "t",
                               DockerLimits())
        assert cfg["command"][0] == "python3"
        assert "working_dir" not in cfg
        assert str(BOTS) not in cfg["volumes"]
        assert "/usr" not in cfg["volumes"]

    def test_host_runtime_mounts_only_the_runtime(self):
        mounts = host_runtime_mounts()
        assert "/usr" in mounts and sys.prefix in mounts
        for path in mounts:
            p = Path(path)
            assert p not in (ROOT, ROOT / "example_bots", ROOT / "tests", Path("/"))
            assert ROOT / "example_bots" not in p.parents and ROOT / "tests" not in p.parents
            assert p != Path.home()


def test_make_process_picks_the_runner(tmp_path):
    local = make_process(example("random"), "unix:///x", "t", tmp_path / "l.log")
    assert isinstance(local, LocalProcess)
    assert exit_detail(local) == ""
    docker = make_process(sandbox_bot("play"), "unix:///x", "t", tmp_path / "d.log",
                          docker_limits=DockerLimits(pids=9), match_id="m", seat=1)
    assert isinstance(docker, DockerProcess)
    assert docker.limits.pids == 9 and docker.seat == 1
    docker.kill()  # never started: nothing to do
    assert docker.poll() is None
    with pytest.raises(ConfigError, match="runner 'vm'"):
        make_process(dataclasses.replace(example("random"), runner="vm"), "x", "t",
                     tmp_path / "v.log")


def test_no_engine_aborts_the_game_unscored(tmp_path, monkeypatch):
    """The sandbox failing is the infrastructure's fault: the game is aborted, no bot is
    faulted (a ladder replays aborted games)."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    sd._shared_client.cache_clear()

    async def go():
        referee = Referee(record_dir=tmp_path / "records")
        async with serving(referee, None) as ep:
            return await play_game(referee, ep, [example("heuristic"), sandbox_bot("play"),
                                                 example("heuristic")],
                                   Ruleset.preset("moon3"), preset="moon3", seed=1,
                                   tc=TimeControl(startup_ms=20_000))
    try:
        match = asyncio.run(go())
    finally:
        sd._shared_client.cache_clear()
    assert match.result.termination == pb.TERMINATION_ABORTED
    assert list(match.faults) == []


def test_docker_bot_build_command_is_not_run_on_the_host(tmp_path):
    from arena.sandbox import BuildError, build

    marker = tmp_path / "built"
    bot = dataclasses.replace(sandbox_bot("play"), build=f"touch {marker}")
    with pytest.raises(BuildError, match="unsandboxed"):
        build(bot)
    assert not marker.exists()


def test_bot_toml_refuses_unknown_keys(tmp_path):
    from arena.bots.manifest import MANIFEST_KEYS, load_bot

    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "b"\nrun = "{python} bot.py"\nimgae = "x"\n')
    with pytest.raises(ConfigError) as e:
        load_bot(folder)
    assert f"{folder / 'bot.toml'}:3: unknown key 'imgae' (did you mean 'image'?)" in str(e.value)
    # every key the Docker runner reads is a known key
    assert set(sd.MANIFEST_KEYS) <= MANIFEST_KEYS
    (folder / "bot.toml").write_text('name = "b"\nrun = "{python} bot.py"\nimage = "x"\n')
    assert load_bot(folder).extra == {"image": "x"}
    (folder / "bot.toml").write_text('name = "b"\nrun = "{python} bot.py"\nrunner = "podman"\n')
    with pytest.raises(ConfigError, match="runner 'podman' must be 'local' or 'docker'"):
        load_bot(folder)
    # a misspelt required key is named as such, not only as a missing one
    (folder / "bot.toml").write_text('nme = "b"\nrun = "{python} bot.py"\n')
    with pytest.raises(ConfigError, match="unknown key 'nme' \\(did you mean 'name'\\?\\)"):
        load_bot(folder)
