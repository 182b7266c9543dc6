"""A bot that writes without end to stderr, against a real `moon host run`: its log of a
game is capped (1 MiB and the last 8 KiB), and the host keeps the whole logs of only each
version's last ``[retention] full_logs`` games; older ones are cut to their last 8 KiB.
Before, every game's log stayed whole while the version was active: 1 MiB a game of the
host's disk (115 GB a day at 90 games a minute)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from arena.host.models import Bot, Game, GameSeat, Version
from arena.sandbox.local import LOG_MAX_BYTES, LOG_TAIL_BYTES

KEEP = 2


def chatty_bot(folder: Path) -> Path:
    """The random bot, writing 1.2 MB to stderr at each of its turns."""
    shutil.copytree(EXAMPLES / "random", folder)
    bot = folder / "bot.py"
    text = bot.read_text().replace("import random\n", "import random\nimport sys\n", 1)
    bot.write_text(text.replace(
        "        return random.choice(obs.legal_actions)",
        "        sys.stderr.write(('chatter ' * 128 + '\\n') * 1200)\n"
        "        return random.choice(obs.legal_actions)"))
    return folder


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory):
    folder = make_competition(tmp_path_factory.mktemp("logs") / "comp", concurrency=1)
    path = folder / "competition.toml"
    path.write_text(re.sub(r"(?m)^full_logs = \d+", f"full_logs = {KEEP}", path.read_text()))
    h = HostProcess(folder, None).start()
    try:
        yield h
    finally:
        h.stop()


def test_only_a_versions_last_games_keep_their_whole_logs(host: HostProcess,
                                                           tmp_path: Path) -> None:
    zed = host.register("zed")
    for folder, name in ((EXAMPLES / "random", "quiet"),
                         (chatty_bot(tmp_path / "chatty"), "chatty")):
        r = host.submit(zed, tar_folder(folder, rename=name))
        assert r.status_code == 201, r.text
        assert host.wait_version(zed, r.json()["id"], 300)["status"] == "active"
    wait_for(lambda: host.ok("GET", "/api/games?bot=chatty&status=finished")["total"]
             >= KEEP + 6, 300, f"{KEEP + 6} finished rated games of the chatty bot")
    host.stop()
    engine = create_engine(f"sqlite:///{host.folder / 'host.sqlite'}")
    with Session(engine) as s:  # its finished games, validation ones too, newest first
        rows = s.execute(select(GameSeat.game_id, GameSeat.seat).join(Game).join(Version)
                         .join(Bot).where(Bot.name == "chatty", Game.status == "finished")
                         .order_by(Game.seq.desc())).all()
    engine.dispose()
    games: dict[str, list[int]] = {}
    for gid, seat in rows:
        games.setdefault(gid, []).append(seat)
    sizes = [[(host.folder / "records" / "logs" / f"{gid}.seat{seat}.log").stat().st_size
              for seat in seats] for gid, seats in games.items()]
    assert len(sizes) >= KEEP + 6
    # its last KEEP games: whole (over the 1 MiB the log of a game keeps from the start)
    for size in sizes[:KEEP]:
        assert all(x > LOG_MAX_BYTES for x in size), sizes
    # one past them may be left whole by the stop; the older ones are cut to 8 KiB and a line
    for size in sizes[KEEP + 1:]:
        assert all(LOG_TAIL_BYTES < x < LOG_TAIL_BYTES + 200 for x in size), sizes
