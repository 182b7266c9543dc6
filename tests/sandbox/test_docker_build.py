"""The build stage of Docker bots against a real engine: a Dockerfile bot is built (log
kept) and plays; a broken or hanging build is a clear BuildError with its log, and the bot
is left out; a bot whose image was never built forfeits clearly; leftovers are cleaned."""

from __future__ import annotations

import dataclasses
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sandbox_support import (
    BAD_SEAT,
    BOTS,
    assert_clean_game,
    assert_forfeit,
    checked_record,
    containers_of,
    example,
    play,
    sandbox_bot,
    unique,
)

from arena.bots.manifest import BotSpec, load_bot
from arena.core.timecontrol import TimeControl
from arena.errors import BotError
from arena.sandbox import build, cleanup_stale
from arena.sandbox.docker import (
    BASE_IMAGE,
    LABEL,
    BuildError,
    DockerLimits,
    _owner,
    image_tag,
)

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_engine")]


@pytest.fixture
def built_images(docker_engine):
    """Tags to remove after the test."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        try:
            docker_engine.images.remove(tag, force=True)
        except Exception:  # noqa: BLE001 - not built, or already gone
            pass


def test_dockerfile_bot_is_built_and_plays(tmp_path, docker_engine, built_images):
    # a copy: its own folder, so its own tag (test runs may share the engine)
    spec = load_bot(shutil.copytree(BOTS / "dockerfile", tmp_path / "dockerfile"))
    built_images.append(image_tag(spec))
    log_path = tmp_path / "build.log"
    out = build(spec, log_path=log_path)
    assert "Successfully built" in out or "writing image" in out, out
    assert log_path.read_text() == out
    labels = docker_engine.images.get(image_tag(spec)).labels
    assert labels.get(LABEL) == "1"
    match = play(tmp_path, [example("heuristic"), spec, example("random", "docker")],
                 tc=TimeControl(startup_ms=30_000), match_id=unique("dockerfile"))
    record = checked_record(match)
    assert_clean_game(match, record)
    # it ran from the image's WORKDIR, with only its own files (the folder is not mounted)
    assert "IMAGE BOT in /app: ['bot.py']" in record["logs"]["1"]
    assert containers_of(docker_engine, match.match_id) == []


def _bot_folder(tmp_path: Path, dockerfile: str, name: str = "broken") -> BotSpec:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "Dockerfile").write_text(dockerfile)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nrunner = "docker"\ndockerfile = "Dockerfile"\n'
        'host_runtime = true\nrun = "{python} bot.py"\n')
    return load_bot(folder)


def test_broken_dockerfile_is_a_clear_build_error(tmp_path, built_images):
    spec = _bot_folder(tmp_path, f"FROM {BASE_IMAGE}\nCOPY no-such-file /app/\n")
    built_images.append(image_tag(spec))
    log_path = tmp_path / "logs" / "build-broken.log"
    with pytest.raises(BuildError) as err:
        build(spec, log_path=log_path)
    e = err.value
    assert isinstance(e, BotError)  # the bot's own fault: a ladder leaves the bot out
    assert e.bot == "broken"
    assert "the build failed" in str(e)
    assert "no-such-file" in e.log
    assert log_path.read_text() == e.log


def test_a_build_step_runs_with_a_low_cpu_weight(tmp_path, built_images):
    """A build's steps get a quarter of a bot container's CPU weight (cpushares 256 against
    Docker's 1024), so a build burning every core yields to the games' bots. A RUN step
    (a static program: the base image has no shell) prints its own cgroup's weight:
    cgroup v1's cpu.shares is the number given; v2's cpu.weight is its conversion,
    1 + (256 - 2) * 9999 // 262142 = 10."""
    spec = _bot_folder(tmp_path, f"FROM {BASE_IMAGE}\nCOPY cgcat /cgcat\n"
                       'RUN ["/cgcat", "/sys/fs/cgroup/cpu/cpu.shares", '
                       '"/sys/fs/cgroup/cpu.weight"]\n', name="weighed")
    source = tmp_path / "cgcat.c"
    source.write_text(
        "#include <stdio.h>\n"
        "int main(int argc, char **argv) {\n"
        "  for (int i = 1; i < argc; i++) {\n"
        "    FILE *f = fopen(argv[i], \"r\"); char b[64]; size_t n;\n"
        "    if (!f) continue;\n"
        "    n = fread(b, 1, sizeof b - 1, f); b[n] = 0; printf(\"cpu: %s\", b);\n"
        "    return 0;\n"
        "  }\n"
        "  return 1;\n"
        "}\n")
    subprocess.run(["gcc", "-static", "-O2", "-o", str(spec.folder / "cgcat"), str(source)],
                   check=True)
    built_images.append(image_tag(spec))
    out = build(spec, log_path=tmp_path / "build.log")
    assert DockerLimits().build_cpu_shares == 256
    assert ("cpu: 256\n" in out) or ("cpu: 10\n" in out), out


def test_hanging_build_times_out(tmp_path, built_images):
    """``ADD`` from a server that never answers: the build hangs until the time limit."""
    connections: list[socket.socket] = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]

        def accept() -> None:
            try:
                while True:
                    connections.append(server.accept()[0])  # and never answer
            except OSError:
                pass

        threading.Thread(target=accept, daemon=True).start()
        spec = _bot_folder(tmp_path, f"FROM {BASE_IMAGE}\nADD http://127.0.0.1:{port}/x /x\n",
                           name="hanging")
        built_images.append(image_tag(spec))
        with pytest.raises(BuildError) as err:
            build(spec, docker_limits=DockerLimits(build_timeout_s=3))
    assert "timed out after 3 s" in str(err.value)
    assert "timed out" in err.value.log
    assert connections, "the build never reached the silent server"
    for c in connections:
        c.close()


def test_named_image_is_used_with_the_folder_mounted(tmp_path, docker_engine):
    spec = dataclasses.replace(sandbox_bot("play"),
                               extra={"image": BASE_IMAGE, "host_runtime": True})
    assert "using the image" in build(spec)
    match = play(tmp_path, [example("heuristic"), spec, example("heuristic")],
                 tc=TimeControl(startup_ms=30_000), match_id=unique("named"))
    record = checked_record(match)
    assert_clean_game(match, record)
    assert "uid=65534 cwd=/bot" in record["logs"][str(BAD_SEAT)]


def test_missing_image_cannot_be_had(tmp_path):
    spec = dataclasses.replace(sandbox_bot("play"),
                               extra={"image": "moon-arena-test/no-such-image:0"})
    with pytest.raises(BuildError) as err:
        build(spec, docker_limits=DockerLimits(build_timeout_s=120))
    assert "moon-arena-test/no-such-image:0" in str(err.value)


def test_unbuilt_image_forfeits_with_a_clear_reason(tmp_path, docker_engine):
    spec = _bot_folder(tmp_path, f"FROM {BASE_IMAGE}\n", name="unbuilt")
    match = play(tmp_path, [example("heuristic"), spec, example("heuristic")],
                 tc=TimeControl(startup_ms=30_000), match_id=unique("unbuilt"))
    record = checked_record(match)
    assert_forfeit(match, record, "crash")
    assert "build it first" in record["result"]["forfeit"]["detail"]
    assert containers_of(docker_engine, match.match_id) == []


def test_cleanup_stale_removes_only_dead_runners_containers(docker_engine):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    host = socket.gethostname()
    tag = unique("stale")
    made = []
    try:
        for owner in (f"{host}:{dead.stdout.strip()}:1", _owner(), f"{host}-elsewhere:1:1"):
            made.append(docker_engine.containers.create(
                BASE_IMAGE, ["/nothing"], labels={LABEL: "1", f"{LABEL}.owner": owner,
                                                   f"{LABEL}.match": tag}))
        assert cleanup_stale() >= 1
        left = {c.id for c in containers_of(docker_engine, tag)}
        assert made[0].id not in left  # its runner is dead
        assert made[1].id in left  # ours: alive
        assert made[2].id in left  # another host's: not ours to judge
    finally:
        for c in made:
            try:
                c.remove(force=True)
            except Exception:  # noqa: BLE001 - removed already
                pass
    assert containers_of(docker_engine, tag) == []

