"""A record read once into a typed GameRecord: a well-formed one has no errors and
verifies; each damaged field is named in `errors` (and by verify), with a default that
the viewers show, never an exception."""

from __future__ import annotations

import copy
import errno
import json

import pytest
from moon_sdk.rules import DEAL_VERSION, GameState, Ruleset
from rich.console import Console

from arena.core.results import GameResult
from arena.core.timecontrol import TimeControl
from arena.records.printing import print_game
from arena.records.record import (
    SCHEMA,
    SCHEMA_VERSION,
    GameRecord,
    hands_from_actions,
    read_record,
    result_dict,
    verify_record,
    write_json_atomic,
)
from arena.web.replay import render_html


def record(seed: int = 3) -> dict:
    """The record of a whole moon3 game where every seat takes its last legal action,
    as the referee writes one (ms 1 per action)."""
    r = Ruleset.preset("moon3")
    s = GameState(r, seed)
    while not s.is_terminal():
        s.apply(s.legal_actions()[-1])
    hands, _ = hands_from_actions(r, seed, s.history, [1] * len(s.history))
    assert s.outcome is not None
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "match_id": "m1",
            "created_at": "", "finished_at": "", "preset": "moon3", "ruleset": r.to_dict(),
            "seed": seed, "deal_version": DEAL_VERSION,
            "time_control": TimeControl().__dict__.copy(),
            "seats": [{"seat": i, "name": f"bot{i}", "version": "1", "reported_name": "",
                       "reported_version": ""} for i in range(3)],
            "hands": hands, "actions": list(s.history),
            "result": result_dict(GameResult.of_outcome(s.outcome, len(s.hand_records))),
            "faults": [], "bank_ms_left": [30_000] * 3, "logs": {"0": "hello"}}


def test_a_well_formed_record_reads_without_errors_and_verifies(tmp_path):
    data = record()
    path = tmp_path / "m1.json"
    path.write_text(json.dumps(data))
    rec = read_record(path)
    assert rec.errors == () and verify_record(rec) == [] and verify_record(data) == []
    assert rec.source == str(path) and rec.seed == 3 and rec.max_hands == 200
    assert [s.name for s in rec.seats] == ["bot0", "bot1", "bot2"]
    assert rec.result.winner == data["result"]["winner"]
    assert [h.facts()["tricks"] for h in rec.hands] == [h["tricks"] for h in data["hands"]]
    assert rec.hands[0].plays[0].ms == 1 and rec.logs == {"0": "hello"}
    assert rec.side_labels() == ["0:bot0", "1:bot1", "2:bot2"] and rec.seat_label(5) == "5:?"


def test_damaged_fields_are_named_defaulted_and_reported_by_verify():
    data = copy.deepcopy(record())
    data["hands"][0]["bidder"] = "x"
    del data["hands"][0]["dealer"]
    data["hands"][0]["bids"][0] = {"seat": 1, "bid": True}
    data["result"]["scores"] = "lots"
    data["faults"] = [7]
    rec = GameRecord.from_dict(data)
    assert list(rec.errors) == [
        "hand 1 bid 1 bid: True is not an int",
        "hand 1 dealer: missing",
        "hand 1 bidder: 'x' is not an int or null",
        "result scores: 'lots' is not a list of ints",
        "fault 0: 7 is not an object",
    ]
    assert (rec.hands[0].bidder, rec.hands[0].dealer, rec.result.scores) == (None, None, ())
    problems = verify_record(rec)
    assert problems[:len(rec.errors)] == list(rec.errors)
    assert any(p.startswith("hand 1 dealer: recorded None, replay gives ") for p in problems)
    # the viewers show what is there, and say what is damaged
    page = render_html(rec, logs=True)
    assert "hand 1 bidder: &#39;x&#39; is not an int or null" in page  # quotes escaped
    console = Console(record=True, width=200)
    print_game(console, rec, plays=True)
    assert "damaged: result scores: 'lots' is not a list of ints" in console.export_text()


def test_a_seed_that_is_not_a_number_stops_the_replay_with_one_sentence():
    data = record()
    data["seed"] = "seven"
    assert verify_record(data) == ["seed: 'seven' is not an int"]
    data["seed"] = "3"  # its digits are fine
    assert verify_record(data) == []


def test_a_record_that_cannot_be_written_leaves_no_temp_file(tmp_path, monkeypatch):
    """A full disk mid-write: the error is raised, and no half-written file stays."""
    import os

    real_fsync = os.fsync
    written = []

    def fsync(fd):  # a full disk shows when the written bytes are flushed to it
        written.extend(p.stat().st_size for p in tmp_path.iterdir())
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError) as e:
        write_json_atomic(tmp_path / "g.json", {"a": 1})
    # a temporary file held the bytes when the disk failed, and is gone now
    assert written and written[0] > 0
    assert e.value.errno == errno.ENOSPC and list(tmp_path.iterdir()) == []
    monkeypatch.setattr(os, "fsync", real_fsync)
    write_json_atomic(tmp_path / "g.json", {"a": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["g.json"]
