"""The live game page as the host serves it, in process (FastAPI's TestClient over the
real app on a real competition folder; the host's loops never start): the replay's board
with a seat per player named as the replay names them, the scoring sides, the pace
control, and not one tile (the page's script adds the played ones as they come)."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient
from host_support import make_competition

from arena.host.app import create_app
from arena.host.models import Bot, DuplicateSet, Game, GameSeat, Participant, Version
from arena.host.run import open_host

TILE = re.compile(r"\b[0-6]-[0-6]\b")


def test_a_running_game_is_served_as_the_live_board_without_a_tile(tmp_path: Path) -> None:
    folder = make_competition(tmp_path / "comp")  # 3 players: 22 tiles, one the widow
    host, _ = open_host(folder, None)
    try:
        client = TestClient(create_app(host))
        with host.Session.begin() as s:
            owner = Participant(name="ann", token_hash="x" * 64)
            s.add(owner)
            s.flush()
            bots = [Bot(owner_id=owner.id, name=n) for n in ("annbot", "ben", "cat")]
            s.add_all(bots)
            s.flush()
            versions = [Version(bot_id=b.id, number=1, hash=f"{i:02d}" * 32,
                                archive_sha256="cd" * 32, status="active")
                        for i, b in enumerate(bots)]
            s.add_all(versions)
            s.add(DuplicateSet(id=1, seed=99))
            s.flush()
            g = Game(id="s1-2", kind="rated", dset_id=1, seating=2, seed=99,
                     status="running")
            g.seats = [GameSeat(seat=i, version_id=v.id, side=i) for i, v in
                       enumerate(versions)]
            s.add(g)
        r = client.get("/games/s1-2")
        assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store"
        page = r.text
        assert 'id="live"' in page and 'data-players="3"' in page and 'data-widow="1"' in page
        names = re.findall(r'<span class="name">([^<]*)</span>', page)
        assert names == ["0:annbot", "1:ben", "2:cat"]
        sides = re.findall(r"<th>([^<]*)</th>", page.split('class="score live-score"')[1]
                           .split("</thead>")[0])
        assert sides == ["", "0:annbot", "1:ben", "2:cat"]  # a corner, then a side each
        assert re.findall(r'<option value="(\d+)"', page) == ["0", "250", "500", "1000",
                                                              "2000"]
        assert 'value="500" selected' in page  # 2 moves a second unless chosen
        assert not TILE.search(page) and "data-tile" not in page
        assert 'src="/static/live.js"' in page
        assert client.get("/static/live.css").status_code == 200
    finally:
        host.close()
