"""Before a game, a local bot with a ``build`` command is built where it will run: by
`moon play` (:func:`arena.cli.play.build_local_bots`) and by a cluster worker
(:func:`arena.cluster.worker.prepare`, in the version it unpacked)."""

from __future__ import annotations

from pathlib import Path

from arena.bots.manifest import BotSpec
from arena.cli.play import build_local_bots
from arena.cluster.artifacts import BotCache, pack_folder
from arena.cluster.worker import prepare

BUILD = "printf '#!/bin/sh\\n' > bot; chmod +x bot"
"""A build that makes the program ``./bot`` (a shell script doing nothing)."""


def _bot(folder: Path) -> BotSpec:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(f'name = "built"\nrun = "./bot"\nbuild = "{BUILD}"\n')
    return BotSpec(name="built", folder=folder, run="./bot", build=BUILD)


def test_moon_play_builds_a_local_bot_before_its_game(tmp_path: Path) -> None:
    spec = _bot(tmp_path / "bot")
    build_local_bots([spec])
    assert (tmp_path / "bot" / "bot").read_text() == "#!/bin/sh\n"


def test_a_worker_builds_the_version_it_unpacked(tmp_path: Path) -> None:
    spec = _bot(tmp_path / "bot")
    version, artifact = pack_folder(spec.folder)
    local, unpacked = prepare(spec, version, artifact, BotCache(tmp_path / "cache"))
    assert unpacked == 1
    assert local.folder != spec.folder
    assert (local.folder / "bot").read_text() == "#!/bin/sh\n"
    assert not (spec.folder / "bot").exists()
