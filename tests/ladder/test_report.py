"""The ladder report from a results file built by hand: head-to-head counts and scores."""

from __future__ import annotations

import json

from arena.ladder.report import build_report
from arena.ladder.store import ResultsStore


def add(store: ResultsStore, gid: str, seats: list[str], places: list[int]) -> None:
    players = len(seats)
    side = (lambda s: s) if players == 3 else (lambda s: s % 2)
    store.add_game(
        {"id": gid, "board": 0, "dset": gid, "seed": 1, "players": players,
         "termination": "target", "winner": places.index(1),
         "scores": json.dumps([0] * len(places)), "places": json.dumps(places), "hands": 1,
         "wall_ms": 1, "think_ms": 0, "record_path": "", "finished_at": ""},
        [{"game_id": gid, "seat": s, "bot": b, "side": side(s), "place": places[side(s)],
          "score": 0} for s, b in enumerate(seats)], [], [])


def test_head_to_head_counts_games_not_seats(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite", "id", meta={"bots": [{"name": "x"},
                                                                     {"name": "y"}]})
    # 4 players, each bot partnering a copy of itself: x's side first, in one game
    add(store, "g4", ["x", "y", "x", "y"], [1, 2])
    # 3 players, x in two seats: first and third; y second. Each x seat is a player:
    # one x seat beat y, the other lost to it.
    add(store, "g3", ["x", "y", "x"], [1, 2, 3])
    rep = build_report(store, bootstrap=10)
    # x vs y: the 4-player game once (a win), the 3-player one twice (a win and a loss)
    assert rep.cross["x"]["y"] == (2 / 3, 3)
    assert rep.cross["y"]["x"] == (1 / 3, 3)
    assert rep.duplicate_sets == 2 and rep.unrated == []
