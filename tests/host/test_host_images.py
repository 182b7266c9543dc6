"""The host never makes its Docker engine pull an image a submission names: an image the
engine lacks is a one-line rejection; only images the organiser lists (``[runner] images``)
may be named then, and only those are pulled. The "registry" here is a stub HTTP server on
127.0.0.1 that records every request the engine sends it (nothing leaves the machine)."""

from __future__ import annotations

import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

pytestmark = pytest.mark.docker
DOCKERFILE_BOT = Path(__file__).resolve().parents[1] / "sandbox" / "bots" / "dockerfile"


@pytest.fixture
def registry() -> Iterator[tuple[str, list[str]]]:
    """A registry that has nothing: ``(host:port, the paths asked for)``."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(404)
            self.end_headers()

        do_HEAD = do_GET

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def bot_naming(tmp: Path, image: str) -> bytes:
    """The random example bot with ``image = ...`` in its bot.toml."""
    folder = tmp / "bot"
    shutil.copytree(EXAMPLES / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = folder / "bot.toml"
    toml.write_text(toml.read_text() + f'image = "{image}"\n')
    return tar_folder(folder)


def image_ids(engine) -> set[str]:
    return {i.id for i in engine.images.list(all=True)}


def test_an_image_the_engine_lacks_is_refused_without_a_pull(
        tmp_path: Path, docker_engine, registry: tuple[str, list[str]]) -> None:
    address, asked = registry
    image = f"{address}/moon-test/not-here:1"
    # the stub answers the engine's pull (so a pull by the host would be seen)
    with pytest.raises(Exception, match="(?i)error|not found|manifest"):
        docker_engine.images.pull(f"{address}/moon-test/probe", tag="1")
    assert asked, "the engine reaches the stub registry"
    asked.clear()
    before = image_ids(docker_engine)
    host = HostProcess(make_competition(tmp_path / "comp", runner="docker"), None).start()
    try:
        token = host.register("dora")
        v = host.submit(token, bot_naming(tmp_path, image))
        assert v.status_code == 201, v.text
        done = host.wait_version(token, v.json()["id"], timeout=240)
        assert done["status"] == "rejected"
        reason = done["reason"]
        assert "\n" not in reason and image in reason
        assert "not on this host's Docker engine" in reason and "organiser" in reason
        # nor one that a Dockerfile builds from (the engine fetches a missing base image)
        for name, dockerfile, said in [
                ("dfrom", f"FROM {address}/moon-test/base:1\n", f"{address}/moon-test/base:1"),
                ("dcopy", f"FROM moon-arena/base:1\nCOPY --from={address}/moon-test/x:1 "
                 "/a /b\n", f"{address}/moon-test/x:1"),
                ("dvar", "ARG B\nFROM ${B}\n", "named by a variable")]:
            folder = tmp_path / name
            shutil.copytree(DOCKERFILE_BOT, folder)
            (folder / "Dockerfile").write_text(dockerfile + "COPY bot.py /app/bot.py\n")
            r = host.submit(token, tar_folder(folder, rename=name))
            assert r.status_code == 201, r.text
            done = host.wait_version(token, r.json()["id"], timeout=240)
            assert done["status"] == "rejected" and said in done["reason"], done
            assert "organiser" in done["reason"] and "\n" not in done["reason"]
    finally:
        host.stop()
    assert asked == [], "the host asked a registry for the image"
    assert image_ids(docker_engine) == before


def test_the_organisers_list_of_images(
        tmp_path: Path, docker_engine, registry: tuple[str, list[str]]) -> None:
    address, asked = registry
    listed = f"{address}/moon-test/listed:1"
    folder = make_competition(tmp_path / "comp", runner="docker")
    toml = folder / "competition.toml"
    assert "# images = [" in toml.read_text()  # the setting is in the file `host init` writes
    toml.write_text(toml.read_text().replace("# images = [", "images = [").replace(
        '"python:3.12-slim"]', f'"{listed}"]'))
    host = HostProcess(folder, None).start()
    try:
        token = host.register("dan")
        # an image not on the list: refused at once, saying which images may be named
        r = host.submit(token, bot_naming(tmp_path / "a", f"{address}/moon-test/other:1"))
        assert r.status_code == 400 and listed in r.text and "organiser" in r.text, r.text
        # a listed image the engine lacks is pulled (from the stub, which has nothing)
        v = host.submit(token, bot_naming(tmp_path / "b", listed)).json()
        done = host.wait_version(token, v["id"], timeout=240)
        assert done["status"] == "rejected" and "pulling the image" in done["reason"]
        wait_for(lambda: any("moon-test/listed" in p for p in asked), 10, "the pull")
        assert not any("moon-test/other" in p for p in asked)
    finally:
        host.stop()
