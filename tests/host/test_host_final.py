"""A real `moon host run` (SQLite, real bots; the final's queries run on PostgreSQL in
process, tests/host/test_final.py) through a season into its
final and its end: the final starts by itself among the season's versions, never runs two
games of a board at once, resumes after a restart mid-final without playing a finished
game again or losing one, ends after its boards; the front page then shows its standings,
`moon host status` its progress, and `moon host export`'s archive refits them from the
games' own records."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from host_support import HostProcess, make_competition, wait_for

from arena.cli import main as moon
from arena.ladder.ratings import rate
from arena.ladder.store import GameRow


def z(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def final_games(host: HostProcess) -> list[dict[str, Any]]:
    return host.ok("GET", "/api/games?kind=final&limit=500")["games"]


def one_per_board(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``games``, after checking no two of one board (set) are running."""
    running = [g["set"] for g in games if g["status"] == "running"]
    assert len(running) == len(set(running)), running
    return games


@pytest.mark.one_database  # a flow: its queries run on PostgreSQL in process (conftest.py)
def test_a_season_ends_in_a_final_whose_export_refits_its_standings(
        tmp_path: Path, database: str | None) -> None:
    far = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    head, _, tail = toml.read_text().partition("[final]")
    plain = head + "[final]\nentrants = 3\nboards = 2\nmax_boards = 2\n\n" + \
        tail.split("\n\n", 1)[1]

    def start(**times: dt.datetime) -> HostProcess:
        cal = {"registration_opens": now - dt.timedelta(minutes=2),
               "submissions_open": now - dt.timedelta(minutes=1), **times}
        toml.write_text(plain + "\n[calendar]\n" + "".join(f"{k} = {z(v)}\n"
                                                            for k, v in cal.items()))
        return HostProcess(folder, database).start()

    def soon() -> dt.datetime:
        return dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=4)

    # the season: three bots, rated games
    host = start(submissions_close=far)
    try:
        host.enter(("heuristic", "random", "weak"))
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= 3, 180, "rated games")
        assert host.ok("GET", "/api/final")["state"] == "not started"
    finally:
        host.stop()
    # the final by itself, a few seconds after a start
    freeze = dt.datetime.now(dt.UTC).replace(microsecond=0)
    final_starts = soon()
    host = start(submissions_close=freeze, final_starts=final_starts, ends=far)
    try:
        wait_for(lambda: host.ok("GET", "/api/final")["state"] == "playing", 60, "the final")
        f = host.ok("GET", "/api/final")
        assert (f["boards"], len(f["entrants"])) == (2, 3)
        assert f["seed"] is None  # a secret while it is played
        wait_for(lambda: sum(g["status"] == "finished" for g in one_per_board(
            final_games(host))) >= 3, 180, "3 final games")
    finally:
        host.stop()  # mid-final
    host = start(submissions_close=freeze, final_starts=final_starts, ends=far)
    try:
        games = final_games(host)
        before = {g["id"]: g["seq"] for g in games if g["status"] == "finished"}
        assert len(before) >= 3

        def over() -> bool:
            one_per_board(final_games(host))
            return bool(host.ok("GET", "/api/final")["state"] == "over")
        wait_for(over, 300, "the final's end")
        games = final_games(host)
        done = [g for g in games if g["status"] == "finished"]
        # nothing finished was lost or played again: one finished game a seating and board
        assert {g["id"]: g["seq"] for g in done if g["id"] in before} == before
        assert len(done) == 12 and len({(g["set"], g["seating"]) for g in done}) == 12
        f = host.ok("GET", "/api/final")
        assert f["why"] == "2 board(s) played" and f["seed"] is not None
        assert f["fitted_games"] == 12 and len(f["standings"]) == 3
        # never in the season's ratings: their games are the season's rated games alone
        season_games = {r["bot"]: r["games"] for r in host.ok("GET", "/api/leaderboard")}
        rated = host.ok("GET", "/api/games?limit=500")["games"]
        assert all(g["kind"] == "rated" for g in rated)
        for bot, n in season_games.items():
            assert n == sum(1 for g in rated if g["status"] == "finished"
                            and any(x["bot"] == bot for x in g["seats"]))
    finally:
        host.stop()
    # the end: the front page is the final's standings; the status says it is over
    host = start(submissions_close=freeze, final_starts=final_starts, ends=soon())
    try:
        wait_for(lambda: host.ok("GET", "/api/phase")["phase"] == "ended", 60, "the end")
        front = host.call("GET", "/").text
        assert "Final standings" in front
        first = f["standings"][0]["bot"]
        assert front.index(f'data-bot="{first}"') < front.index("The season's leaderboard")
        out = CliRunner().invoke(moon, ["host", "status", host.url])
        assert out.exit_code == 0, out.output
        assert re.search(r"final\W+over \(2 board\(s\) played\): 12 of 12 games finished",
                         out.output), out.output
        csv_rows = host.call("GET", "/api/final.csv").text.splitlines()
        assert len(csv_rows) == 4 and csv_rows[1].startswith(f"{f['standings'][0]['place']},"
                                                             f"{first},")
        # the export while the host serves
        args = ["host", "export", str(folder), "--output", str(tmp_path / "out.tar.gz")]
        out = CliRunner().invoke(moon, args + (["--database", database] if database else []))
        assert out.exit_code == 0, out.output
    finally:
        host.stop()
    log = host.log.read_text()
    assert "Traceback" not in log, log[-3000:]
    files = archive(tmp_path / "out.tar.gz")
    results = json.loads(files["results.json"])["games"]
    seeds = json.loads(files["seeds.json"])
    final = json.loads(files["standings/final.json"])
    assert str(seeds["final_master_seed"]) == f["seed"]
    # the re-fit: who sat where from the results, each side's place from its own record
    rows = []
    for g in (g for g in results if g["kind"] == "final"):
        record = json.loads(files[g["record"]])
        places = [record["result"]["places"][side] for side in g["sides"]]
        assert places == g["places"]
        rows.append(GameRow(g["id"], g["set"], "", 3, "", None, [], places,
                            [str(v) for v in g["seats"]], 0, 0, 0))
    refit = rate(rows, [str(v) for v in final["final"]["entrants"]],
                 bootstrap=final["bootstrap"], seed=seeds["final_master_seed"])
    published = final["final"]["standings"]["rows"]
    assert [(int(r.bot), r.rating, r.low, r.high) for r in refit] == [
        (x["version_id"], x["rating"], x["low"], x["high"]) for x in published]
    assert [x["version_id"] for x in f["standings"]] == [int(r.bot) for r in refit]
    assert [x["rating"] for x in f["standings"]] == [round(r.rating, 1) for r in refit]
    # the records replay: `moon replay verify` re-simulates every one
    rec_dir = tmp_path / "records"
    rec_dir.mkdir()
    for name, data in files.items():
        if name.startswith("records/"):
            (rec_dir / name.split("/", 1)[1]).write_bytes(data)
    out = CliRunner().invoke(moon, ["replay", "verify", *map(str, sorted(rec_dir.iterdir()))])
    assert out.exit_code == 0, out.output


def archive(path: Path) -> dict[str, bytes]:
    """An export's files, by their path below its one top folder."""
    with tarfile.open(path) as tf:
        out = {}
        for m in tf.getmembers():
            data = tf.extractfile(m)
            assert data is not None
            out[m.name.split("/", 1)[1]] = io.BytesIO(data.read()).getvalue()
        return out
