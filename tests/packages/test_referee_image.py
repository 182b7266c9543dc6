"""The referee image (the root Dockerfile), built here with no registry: FROM the Python
image made from this machine's Python (arena.sandbox.python_image), with the wheels of
this session and the wheelhouse. Run like a deployment: `moon serve` as user 10001,
healthy by its own HEALTHCHECK, TCP published on 127.0.0.1 only, MatchService behind an
admin token; real bot processes on the host play a whole game against it over TCP, and the
record written in the container verifies. It stops cleanly on SIGTERM."""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from moon_sdk.v1 import match_pb2 as mpb
from moon_sdk.v1 import match_pb2_grpc
from packages_support import ROOT, Dists

from arena.records.record import verify_record

pytestmark = pytest.mark.docker

BOTS = ("heuristic", "random", "heuristic")


def _context(dists: Dists, where: Path) -> Path:
    """A build context laid out as `make image` has the repository: the Dockerfile, its
    .dockerignore, dist/*.whl and dist/wheelhouse/*.whl (hard links where possible)."""
    shutil.copy(ROOT / "Dockerfile", where / "Dockerfile")
    shutil.copy(ROOT / ".dockerignore", where / ".dockerignore")
    (where / "dist" / "wheelhouse").mkdir(parents=True)
    files = [(w, where / "dist" / w.name) for w in dists.wheels.values()]
    files += [(s, where / "dist" / s.name) for s in dists.sdists.values()]  # ignored
    files += [(w, where / "dist" / "wheelhouse" / w.name)
              for w in dists.wheelhouse.glob("*.whl")]
    for source, dest in files:
        try:
            os.link(source, dest)
        except OSError:
            shutil.copy(source, dest)
    return where


@pytest.fixture(scope="module")
def image(docker_engine, dists: Dists, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[str]:
    import docker.errors

    from arena.sandbox.python_image import ensure_python_image

    base = ensure_python_image(docker_engine)
    tag = f"moon-arena/referee:test-{secrets.token_hex(4)}"
    context = _context(dists, tmp_path_factory.mktemp("image-context"))
    try:
        _, log = docker_engine.images.build(
            path=str(context), tag=tag, buildargs={"BASE": base}, labels={"moon-arena": "1"},
            rm=True, forcerm=True, timeout=900)
    except docker.errors.BuildError as e:
        text = "".join(str(chunk.get("stream", chunk.get("error", ""))) for chunk in e.build_log)
        pytest.fail(f"the referee image did not build: {e}\n{text[-4000:]}", pytrace=False)
    stages = _stage_images("".join(str(chunk.get("stream", "")) for chunk in log))
    try:
        yield tag
    finally:
        for name in (tag, *stages):  # the install stage too: 400 MB left behind otherwise
            try:
                docker_engine.images.remove(name, force=name == tag)
            except docker.errors.DockerException:
                pass


def _stage_images(log: str) -> list[str]:
    """The images of the build's earlier stages (the last ``---> ID`` before each ``FROM``
    step but the first), from the classic builder's log."""
    out, last = [], None
    for line in log.splitlines():
        line = line.strip()
        if line.startswith("Step ") and " : FROM " in line and last is not None:
            out.append(last)
        elif line.startswith("---> ") and " " not in line[5:].strip():
            last = line[5:].strip()
    return out


@pytest.fixture
def referee(docker_engine, image: str) -> Iterator[tuple[object, str, str]]:
    """A running referee container: ``(container, "127.0.0.1:PORT", admin token)``."""
    import docker.errors

    token = secrets.token_hex(16)
    container = docker_engine.containers.run(
        image, detach=True, name=f"moon-referee-test-{secrets.token_hex(4)}",
        ports={"50051/tcp": ("127.0.0.1", None)}, environment={"MOON_ADMIN_TOKEN": token},
        labels={"moon-arena": "1"},
        healthcheck={"interval": 1_000_000_000})  # the image's check, every second
    try:
        container.reload()
        port = container.ports["50051/tcp"][0]["HostPort"]
        yield container, f"127.0.0.1:{port}", token
    finally:
        try:
            container.remove(force=True, v=True)
        except docker.errors.DockerException:
            pass


def _health(container) -> str:
    container.reload()
    return container.attrs["State"].get("Health", {}).get("Status", "")


def _wait_healthy(container, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while _health(container) != "healthy":
        state = container.attrs["State"]
        assert state["Running"], f"the referee exited:\n{container.logs().decode()}"
        assert time.monotonic() < deadline, (
            f"not healthy within {timeout_s} s: {json.dumps(state.get('Health'))}\n"
            f"{container.logs().decode()}")
        time.sleep(0.5)


def _record(container, path: str) -> dict:
    stream, _ = container.get_archive(path)
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        [member] = tar.getmembers()
        data = tar.extractfile(member)
        assert data is not None
        return json.loads(data.read())


def test_image_runs_as_an_unprivileged_user_with_a_health_check(docker_engine,
                                                                 image: str) -> None:
    config = docker_engine.images.get(image).attrs["Config"]
    assert config["User"] == "10001:10001"
    assert config["Healthcheck"]["Test"] == ["CMD", "python3", "-m", "arena.referee.healthcheck"]
    assert "50051/tcp" in config["ExposedPorts"]
    out = docker_engine.containers.run(image, ["--version"], remove=True).decode()
    import arena

    assert f"version {arena.__version__}" in out


def test_a_game_against_the_container_over_tcp(referee) -> None:
    container, address, token = referee
    _wait_healthy(container)
    # the server process (PID 1 after the entry point's exec) is not root
    uid = container.exec_run(["python3", "-c", "print(open('/proc/1/status').read()"
                              ".split('Uid:')[1].split()[0])"])
    assert uid.exit_code == 0 and uid.output.decode().strip() == "10001"
    auth = (("authorization", f"Bearer {token}"),)
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                            timeout=10)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        matches = match_pb2_grpc.MatchServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:  # the admin token guards it
            matches.ListMatches(mpb.ListMatchesRequest(), timeout=10)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        created = matches.CreateMatch(mpb.CreateMatchRequest(
            match_id="image-game", seed=77,
            seats=[mpb.SeatConfig(name=name, version="1.0") for name in BOTS]),
            metadata=auth, timeout=10)
        tokens = {t.seat: t.token for t in created.tokens}
        assert sorted(tokens) == [0, 1, 2]
        # real bot processes on this machine, reaching the container over TCP
        env = {k: v for k, v in os.environ.items() if not k.startswith("MOON_")}
        bots = [subprocess.Popen([sys.executable, "bot.py"], cwd=ROOT / "example_bots" / name,
                                 env={**env, "MOON_ADDRESS": address,
                                      "MOON_TOKEN": tokens[seat]},
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                for seat, name in enumerate(BOTS)]
        try:
            for bot in bots:
                _, err = bot.communicate(timeout=240)
                assert bot.returncode == 0, err
        finally:
            for bot in bots:
                if bot.poll() is None:
                    bot.kill()
                    bot.wait()
        done = matches.GetMatch(mpb.GetMatchRequest(match_id="image-game"), metadata=auth,
                                timeout=10).match
    assert done.status == mpb.MATCH_STATUS_FINISHED
    assert done.seed == 77
    assert done.record_path == "/data/records/image-game.json"
    record = _record(container, done.record_path)
    assert verify_record(record) == []
    assert record["faults"] == []
    assert [s["name"] for s in record["seats"]] == list(BOTS)
    assert record["result"]["termination"] in ("target", "moon")
    # SIGTERM (docker stop): the referee shuts down cleanly
    container.stop(timeout=30)
    assert container.wait(timeout=60)["StatusCode"] == 130  # stopped by a signal
    assert "shutting down" in container.logs().decode()


def test_other_moon_commands_run_in_the_image(docker_engine, image: str) -> None:
    """The entry point runs any `moon` command; the competition host once it exists."""
    out = docker_engine.containers.run(image, ["--help"], remove=True).decode()
    assert "serve" in out
    if " host " in out or "\n  host" in out:
        help_ = docker_engine.containers.run(image, ["host", "run", "--help"], remove=True)
        assert b"--address" in help_
