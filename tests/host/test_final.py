"""The final in process (no server, no bots; on SQLite and PostgreSQL where the final's
queries run): `[final]`'s settings, the balanced schedule
among the season's best, one game of a board at a time, the board's records withheld
while it is in play, a board more until the top places are told apart, the standings
against a fit recomputed here from the results the test wrote, the API, CSV and pages,
`moon host status`'s line and the export's archive refitted."""

from __future__ import annotations

import csv
import datetime as dt
import io
import itertools
import json
import shutil
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import select

from arena.cli import main as moon
from arena.core.results import GameResult, Termination
from arena.errors import ConfigError
from arena.host import init_competition
from arena.host.app import create_app
from arena.host.executor import FinishedGame, GameRequest
from arena.host.final import board_games, final_rows, fit_final, read_state
from arena.host.models import Bot, DuplicateSet, Game, GameSeat, Participant, Version
from arena.host.run import open_host
from arena.host.service import Host
from arena.host.settings import ADMIN_TOKEN_FILE, load_settings
from arena.ladder.ratings import rate
from arena.ladder.store import GameRow


def z(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def competition(folder: Path, final: str, final_starts: dt.datetime,
                ends: dt.datetime | None = None, database: str | None = None) -> Host:
    init_competition(folder, trust_local=True, seed=(1 << 62) + 11)
    toml = folder / "competition.toml"
    cal = f"\n[calendar]\nsubmissions_close = {z(final_starts - dt.timedelta(hours=1))}\n" \
          f"final_starts = {z(final_starts)}\n" + (f"ends = {z(ends)}\n" if ends else "")
    toml.write_text(with_final(toml.read_text(), final) + cal)
    host, _ = open_host(folder, database)
    return host


def with_final(text: str, table: str) -> str:
    """competition.toml's text with ``table`` as its ``[final]`` (the template's, replaced)."""
    head, _, tail = text.partition("[final]")
    return head + "[final]\n" + table + "\n\n" + tail.split("\n\n", 1)[1]


def entrants(host: Host, ratings: dict[str, float | None]) -> dict[str, int]:
    """One participant's bots, one active version each with a season rating; ids."""
    with host.Session.begin() as s:
        p = Participant(name="ann", token_hash="a" * 64)
        s.add(p)
        s.flush()
        ids = {}
        for n, r in ratings.items():
            b = Bot(owner_id=p.id, name=n)
            s.add(b)
            s.flush()
            v = Version(bot_id=b.id, number=1, hash=n * 64, archive_sha256="0" * 64,
                        status="active", rating=r)
            s.add(v)
            s.flush()
            b.active_version_id = v.id
            shutil.copytree(host.folder / "reference" / "random",
                            host.store / "versions" / v.hash)  # its code: a bot to start
            ids[n] = v.id
        return ids


def finish(host: Host, job: tuple[str, int, tuple], order: list[int]) -> list[int]:
    """Claimed game ``job`` finished through the recorder, the versions placed in the
    order ``order`` (best first); the places per seat."""
    with host.Session() as s:
        g = s.get(Game, job[0])
        assert g is not None and g.status == "running"
        seats = [x.version_id for x in g.seats]
    places = [order.index(v) + 1 for v in seats]
    scores = tuple(10 - p for p in places)
    result = GameResult(Termination.TARGET, places.index(1), scores, tuple(places), 3)
    req = GameRequest(job[0], (), host.ruleset, "moon3", job[1], host.tc)
    host.recorder.record_now(FinishedGame(req, result, (), (), None, 1000, 100))
    return places


def fit_now(host: Host) -> None:
    """What the final's loop does in its worker: fit the finished final games."""
    with host.Session() as s:
        st = read_state(s)
        assert st is not None
        rows = final_rows(s)
    host.final.store_standings(len(rows), fit_final(rows, st.entrants, host.final.bootstrap,
                                                     st.seed))


@pytest.mark.parametrize(("table", "line"), [
    ("boards = 5\nmax_boards = 3",
     "final: max_boards = 3 is below boards = 5: the cap must allow the boards asked for"),
    ("entrants = 2\nseparate = 3", "final: separate = 3 is more places than entrants = 2"),
    ("boards = 0", "final.boards: Input should be greater than or equal to 1"),
    ("rounds = 3", "final.rounds: Extra inputs are not permitted"),
])
def test_a_bad_final_table_is_one_line_naming_it(tmp_path: Path, table: str, line: str
                                                 ) -> None:
    init_competition(tmp_path, trust_local=True, seed=(1 << 62) + 1)
    toml = tmp_path / "competition.toml"
    toml.write_text(with_final(toml.read_text(), table))
    with pytest.raises(ConfigError) as e:
        load_settings(tmp_path)
    assert str(e.value) == f"{toml}: {line}"


def test_every_entrant_plays_the_same_boards_from_every_seat() -> None:
    # 4 entrants, 3 seats: the 4 triples, each in its 6 seatings, on one deal per board
    b0 = board_games([1, 2, 3, 4], 3, 0, seed=99)
    b1 = board_games([1, 2, 3, 4], 3, 1, seed=99)
    assert len(b0) == len(b1) == 4 * 6
    assert len({g.seed for g in b0}) == 1 and {g.seed for g in b0} != {g.seed for g in b1}
    for games in (b0, b1):
        # each entrant is in 3 of the 4 triples: twice in each seat per triple
        per_seat = Counter((v, seat) for g in games for seat, v in enumerate(g.seats))
        assert per_seat == {(str(v), seat): 6 for v in range(1, 5) for seat in range(3)}
        # and meets each other entrant in 2 triples, 6 games each
        met = Counter(frozenset(p) for g in games for p in itertools.combinations(
            set(g.seats), 2))
        assert set(met.values()) == {12}


def test_the_final_plays_its_boards_one_game_of_a_board_at_a_time(
        tmp_path: Path, database: str | None) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    host = competition(tmp_path, "entrants = 3\nboards = 2\nmax_boards = 2",
                       now - dt.timedelta(minutes=1), database=database)
    try:
        ids = entrants(host, {"a": 1600.0, "b": 1400.0, "c": None, "d": 1500.0})
        assert host.season.tick_now() == "final"
        assert host.final.tick_now().startswith("final: started among 3 versions")
        with host.Session() as s:
            st = read_state(s)
            assert st is not None
            # the top 3 of the season by its batch rating: a, d, b (c is not fitted)
            assert st.entrants == [ids["a"], ids["d"], ids["b"]]
            assert (st.boards, len(st.set_ids)) == (2, 2)
            games = s.scalars(select(Game).where(Game.kind == "final")).all()
            assert len(games) == 12 and {g.status for g in games} == {"queued"}
            assert {g.dset_id for g in games} == set(st.set_ids)
        # one game of each board, then nothing: a board's games never run at once
        first, second = host.final.claim(), host.final.claim()
        assert first is not None and second is not None
        assert host.final.claim() is None
        with host.Session() as s:
            running = s.scalars(select(Game).where(Game.status == "running")).all()
            assert sorted(g.dset_id for g in running) == sorted(st.set_ids)
        order = [ids["d"], ids["a"], ids["b"]]  # d finishes ahead of a, a ahead of b
        finish(host, first, order)
        # its record is withheld while 5 games of its board are to be played
        c = TestClient(create_app(host), headers={"Cache-Control": "no-cache"})
        r = c.get(f"/api/games/{first[0]}/record")
        assert r.status_code == 409
        assert "shown when the 5 other games of its set end" in r.json()["detail"]
        assert c.get(f"/api/games/{first[0]}").json()["kind"] == "final"
        assert "shown when the 5 other games of its set end" in c.get(
            f"/games/{first[0]}").text
        assert c.get("/api/games?kind=final").json()["total"] == 12
        # the season's loop never takes a final game
        assert host.matchmaker.claim() is None
        played = [first[0]]
        finish(host, second, order)
        played.append(second[0])
        while (job := host.final.claim()) is not None:
            finish(host, job, order)
            played.append(job[0])
        assert len(played) == len(set(played)) == 12
        assert host.final.tick_now() is None  # its last fit is still to come
        fit_now(host)
        assert host.final.tick_now() == "final: over: 2 board(s) played"
        with host.Session() as s:
            # never in the season's ratings
            assert {v.games for v in s.scalars(select(Version))} == {0}
        # the standings: the fit of the results written above, computed here
        rows = [GameRow(f"g{k}", board, "", 3, "target", None, [], places,
                        [str(v) for v in seats], 0, 0, 0)
                for k, (board, seats, places) in enumerate(written(host))]
        with host.Session() as s:
            st = read_state(s)
            assert st is not None
        want = rate(rows, [str(v) for v in st.entrants], bootstrap=host.final.bootstrap,
                    seed=st.seed)
        got = c.get("/api/final").json()
        assert got["state"] == "over" and got["seed"] == str(st.seed)
        assert [(x["version_id"], x["rating"]) for x in got["standings"]] == [
            (int(r.bot), round(r.rating, 1)) for r in want]
        assert [x["bot"] for x in got["standings"]] == ["d", "a", "b"]
        assert (got["games_finished"], got["boards_done"], got["fitted_games"]) == (12, 2, 12)
    finally:
        host.close()


def written(host: Host) -> list[tuple[int, list[int], list[int]]]:
    """Each finished final game's board, versions per seat and places per seat, in the
    order written."""
    with host.Session() as s:
        return [(g.dset_id or 0, [x.version_id for x in g.seats], list(g.places or []))
                for g in s.scalars(select(Game).where(Game.kind == "final",
                                                      Game.status == "finished")
                                   .order_by(Game.seq))]


def play_board(host: Host, order: list[int]) -> None:
    while (job := host.final.claim()) is not None:
        finish(host, job, order)
    fit_now(host)


def test_a_board_more_until_the_top_places_are_told_apart_up_to_the_cap(tmp_path: Path
                                                                        ) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    host = competition(tmp_path, "boards = 1\nseparate = 1\nmax_boards = 3",
                       now - dt.timedelta(minutes=1))
    try:
        ids = entrants(host, {"a": 1600.0, "b": 1500.0, "c": 1400.0})
        host.season.tick_now()
        host.final.tick_now()
        # a and b trade first place game for game: never told apart
        flip = [[ids["a"], ids["b"], ids["c"]], [ids["b"], ids["a"], ids["c"]]]
        for board in range(3):
            k = 0
            while (job := host.final.claim()) is not None:
                finish(host, job, flip[k % 2])
                k += 1
            fit_now(host)
            line = host.final.tick_now()
            if board < 2:
                assert line == f"final: board {board + 2} scheduled (6 games)"
        assert line == ("final: over: max_boards: 3 board(s) played, its top 1 place(s) not "
                        "all told apart")
        c = TestClient(create_app(host), headers={"Cache-Control": "no-cache"})
        places = [x["place"] for x in c.get("/api/final").json()["standings"]]
        assert places[:2] == ["1=", "1="]
    finally:
        host.close()


def test_the_final_on_the_pages_the_api_the_status_and_the_export(
        tmp_path: Path, database: str | None) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    folder = tmp_path / "comp"
    host = competition(folder, "boards = 2\nmax_boards = 2", now - dt.timedelta(minutes=1),
                       ends=now + dt.timedelta(hours=1), database=database)
    on = ["--database", database] if database else []
    admin = (folder / ADMIN_TOKEN_FILE).read_text().strip()
    try:
        ids = entrants(host, {"a": 1600.0, "b": 1500.0, "c": 1400.0})
        c = TestClient(create_app(host), headers={"Cache-Control": "no-cache"})
        assert c.get("/api/final").json()["state"] == "not started"
        host.season.tick_now()
        host.final.tick_now()
        job = host.final.claim()
        assert job is not None
        status = c.get("/api/status").json()
        assert status["final"] == "board 2 (at most 2): 0 of 12 games finished, 1 running"
        page = c.get("/final").text
        assert "Playing: board 2 (at most 2)" in page and "live" in page
        # no export while it is played: its seed is still secret
        out = CliRunner().invoke(moon, ["host", "export", str(folder), *on])
        assert out.exit_code == 1
        assert out.output.strip() == (
            "Error: the final is still being played (its boards' seed is secret until it "
            "is over): export once `moon host status` says `final  over`")
        order = [ids["c"], ids["a"], ids["b"]]
        finish(host, job, order)
        play_board(host, order)
        assert host.final.tick_now() == "final: over: 2 board(s) played"
        # the front page shows the final's standings once the competition has ended
        assert "Final standings" not in c.get("/").text
        with host.Session.begin() as s:
            host.season.move(s, "ended", "admin")
        front = c.get("/").text
        assert "Final standings" in front and "The season's leaderboard" in front
        assert front.index('data-bot="c"') < front.index('data-bot="a"')
        got = c.get("/api/final").json()
        table = list(csv.DictReader(io.StringIO(c.get("/api/final.csv").text)))
        assert [(r["place"], r["bot"], r["rating"]) for r in table] == [
            (x["place"], x["bot"], str(x["rating"])) for x in got["standings"]]
        assert c.get("/api/final.csv").headers["content-type"].startswith("text/csv")
        assert f"<code>{got['seed']}</code>" in c.get("/final").text
        assert c.get("/api/status", headers={"Authorization": f"Bearer {admin}"}).json()[
            "final"] == "over (2 board(s) played): 12 of 12 games finished, 0 running"
        # the export: the published standings, refitted from its results and seeds
        out = CliRunner().invoke(moon, ["host", "export", str(folder), *on, "--output",
                                        str(tmp_path / "x.tar.gz")])
        assert out.exit_code == 0, out.output
        assert out.output.strip() == (f"wrote {tmp_path / 'x.tar.gz'}: 12 games (12 of the "
                                      "final), 0 records")
        files = archive(tmp_path / "x.tar.gz")
        assert files["competition.toml"] == (folder / "competition.toml").read_bytes()
        results = json.loads(files["results.json"])["games"]
        seeds = json.loads(files["seeds.json"])
        final = json.loads(files["standings/final.json"])
        assert seeds["final_master_seed"] == int(got["seed"])
        rows = [GameRow(g["id"], g["set"], "", 3, "", None, [], g["places"],
                        [str(v) for v in g["seats"]], 0, 0, 0)
                for g in results if g["kind"] == "final"]
        refit = rate(rows, [str(v) for v in final["final"]["entrants"]],
                     bootstrap=final["bootstrap"], seed=seeds["final_master_seed"])
        assert [(int(r.bot), r.rating, r.low, r.high) for r in refit] == [
            (x["version_id"], x["rating"], x["low"], x["high"])
            for x in final["final"]["standings"]["rows"]]
        assert files["standings/final.csv"].decode().splitlines()[0].startswith("place,bot")
    finally:
        host.close()


def archive(path: Path) -> dict[str, bytes]:
    """The files of an export, by their path below its one top folder."""
    with tarfile.open(path) as tf:
        names = tf.getnames()
        tops = {n.split("/", 1)[0] for n in names}
        assert len(tops) == 1
        out = {}
        for m in tf.getmembers():
            f = tf.extractfile(m)
            assert f is not None
            out[m.name.split("/", 1)[1]] = f.read()
        return out


def test_an_export_in_the_season_leaves_out_the_records_of_sets_in_play(tmp_path: Path
                                                                       ) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    host = competition(tmp_path, "", now + dt.timedelta(days=1))
    try:
        ids = entrants(host, {"a": None, "b": None, "c": None})
        host.record_dir.mkdir(exist_ok=True)
        with host.Session.begin() as s:
            for k in range(2):  # set 1: both games over; set 2: one over, one queued
                d = DuplicateSet(seed=k)
                s.add(d)
                s.flush()
                for j, status in enumerate(("finished", "finished" if k == 0 else "queued")):
                    g = Game(id=f"s{d.id}-{j}", kind="rated", dset_id=d.id, seed=k,
                             status=status, places=[1, 2, 3], scores=[7, 3, 1],
                             seq=2 * k + j + 1 if status == "finished" else None,
                             record_path=str(host.record_dir / f"s{d.id}-{j}.json"))
                    g.seats = [GameSeat(seat=i, version_id=v, side=i)
                               for i, v in enumerate(ids.values())]
                    s.add(g)
                    (host.record_dir / f"s{d.id}-{j}.json").write_text("{}")
        out = CliRunner().invoke(moon, ["host", "export", str(tmp_path), "--output",
                                        str(tmp_path / "x.tar.gz")])
        assert out.exit_code == 0, out.output
        assert out.output.strip().endswith(": 3 games (0 of the final), 2 records")
        files = archive(tmp_path / "x.tar.gz")
        assert sorted(n for n in files if n.startswith("records/")) == [
            "records/s1-0.json", "records/s1-1.json"]
        results = json.loads(files["results.json"])["games"]
        assert [(g["id"], g["record"]) for g in results] == [
            ("s1-0", "records/s1-0.json"), ("s1-1", "records/s1-1.json"), ("s2-0", None)]
        assert json.loads(files["seeds.json"])["final_master_seed"] is None
    finally:
        host.close()


def test_an_export_refuses_what_it_cannot_do_in_one_line(tmp_path: Path) -> None:
    def export(*args: str) -> tuple[int, str]:
        out = CliRunner().invoke(moon, ["host", "export", *args])
        return out.exit_code, out.output.strip()

    never = tmp_path / "never"
    init_competition(never, trust_local=True, seed=(1 << 62) + 11)
    # a competition never run has no database, and the export makes none
    assert export(str(never)) == (1, f"Error: no database at {never / 'host.sqlite'}: "
                                  "this competition has not been run (`moon host run` "
                                  "makes it), or name it with --database URL")
    assert not (never / "host.sqlite").exists()
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")  # an SQLite file of no tables
    assert export(str(never), "--database", f"sqlite:///{empty}") == (
        1, f"Error: database sqlite:///{empty} holds no competition (no games table): "
        "name the host's own with --database URL")
    assert export(str(never), "--database", "postgresql://u@127.0.0.1:1/db")[1].startswith(
        "Error: database postgresql+psycopg://u@127.0.0.1:1/db: cannot read it: ")
    folder = tmp_path / "comp"
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    competition(folder, "", now + dt.timedelta(days=1)).close()
    settings = (folder / "competition.toml").read_bytes()
    # a mistyped --output leaves the file there as it was
    assert export(str(folder), "--output", str(folder / "competition.toml")) == (
        1, f"Error: {folder / 'competition.toml'} is there already: choose another "
        "--output, or --force to replace it")
    assert (folder / "competition.toml").read_bytes() == settings
    (tmp_path / "a-file").write_text("")
    assert export(str(folder), "--output", str(tmp_path / "a-file" / "x.tar.gz")) == (
        1, f"Error: cannot write {tmp_path / 'a-file' / 'x.tar.gz'}: File exists: choose "
        "another --output")
    assert export(str(folder))[0] == 0
    assert export(str(folder))[0] == 1  # the default archive is there now
    code, line = export(str(folder), "--force")
    assert (code, line) == (0, f"wrote {folder / 'export.tar.gz'}: 0 games (0 of the "
                            "final), 0 records")


def test_an_export_reads_one_snapshot_while_the_host_writes(
        tmp_path: Path, database: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # The host commits a new fit while an export is reading (here: right after the export
    # has read the games, before it reads the fit): the archive holds the fit as it was
    # when the export began, the one its games and ratings go with.
    import arena.host.export as export_module
    from arena.host.models import Meta

    folder = tmp_path / "comp"
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    host = competition(folder, "", now + dt.timedelta(days=1), database=database)
    try:
        with host.Session.begin() as s:
            s.merge(Meta(key="batch", value={"fit": "before"}))
        real_in_play = export_module.in_play

        def in_play(s, sets):  # the export is mid-way: the host's fit lands now
            with host.Session.begin() as w:
                w.merge(Meta(key="batch", value={"fit": "after"}))
            return real_in_play(s, sets)

        monkeypatch.setattr(export_module, "in_play", in_play)
        out = tmp_path / "x.tar.gz"
        export_module.export(folder, out, database)
        season = json.loads(archive(out)["standings/season.json"])
        assert season["batch"] == {"fit": "before"}
        with host.Session() as s:  # the host's write did land
            assert s.get(Meta, "batch").value == {"fit": "after"}
    finally:
        host.close()
