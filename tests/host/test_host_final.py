"""A whole competition by itself through a real `moon host run` with real bots, on SQLite
and on PostgreSQL (the long flow run on both: tests/host/conftest.py says why this one):
registration (uploads refused with when they open), the season coming by itself (bots
built, validated and rated; provisional until their placement series), the freeze (an
upload refused for good; the games go on), the final starting by itself among the
season's versions, never running two games of a board at once, resuming after a restart
mid-final without playing a finished game again or losing one, ending after its boards;
then the end (nothing more played, registration refused, each change of phase in the
audit log), the front page showing the final's standings, `moon host status` its
progress, and `moon host export`'s archive refitting them from the games' own records."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import tarfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

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


def test_a_competition_goes_by_itself_from_registration_to_final_standings(
        tmp_path: Path, database: str | None) -> None:
    # Each change of phase is due a few seconds after a start of the host, whose calendar
    # is then written for what comes next: a test of fixed windows (the season 25 s after
    # the first start) failed on a loaded machine whose host took longer than that to
    # start. The phase is kept across each restart; the calendar moves it by itself.
    far = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    past = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=2)
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    head, _, tail = toml.read_text().partition("[final]")
    plain = head + "[final]\nentrants = 3\nboards = 2\nmax_boards = 2\n\n" + \
        tail.split("\n\n", 1)[1]
    assert "placement_sets = 2" in plain  # one set here: the series is over sooner
    plain = plain.replace("placement_sets = 2", "placement_sets = 1")
    cli = CliRunner()

    def moon_host(*args: str) -> str:
        out = cli.invoke(moon, ["host", *args])
        assert out.exit_code == 0, out.output
        return out.output

    def start(**times: dt.datetime) -> HostProcess:
        cal = {"registration_opens": past, **times}
        toml.write_text(plain + "\n[calendar]\n" + "".join(f"{k} = {z(v)}\n"
                                                            for k, v in cal.items()))
        return HostProcess(folder, database).start()

    def soon() -> dt.datetime:
        return dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=5)

    def moved(host: HostProcess, phase: str) -> bool:
        """The host has written ``phase`` (the API shows the calendar's phase up to a
        second before the host's tick writes it and does what it brings)."""
        p = host.ok("GET", "/api/phase")
        return bool(p["phase"] == phase and p["since"] is not None)

    # registration: uploads refused with when they open
    host = start(submissions_open=far)
    try:
        tokens = [host.register(f"p{i}") for i in range(3)]
        early = host.submit(tokens[0], tar_folder(EXAMPLES / "heuristic"))
        assert (early.status_code, early.json()["detail"]) == (403, (
            f"submissions are closed in the registration phase: they open at {z(far)}"))
        status = moon_host("status", host.url)
        assert re.search(r"phase\W+registration\W", status), status
        assert re.search(rf"next phase\W+season at {z(far)}", status), status
    finally:
        host.stop()
    # the season comes by itself: three bots are built, validated and play rated games
    opens = soon()
    host = start(submissions_open=opens, submissions_close=far)
    try:
        assert host.ok("GET", "/api/phase")["phase"] in ("registration", "season")
        wait_for(lambda: moved(host, "season"), 60, "the season")
        ids = []
        for token, bot in zip(tokens, ("heuristic", "random", "weak"), strict=True):
            r = host.submit(token, tar_folder(EXAMPLES / bot))
            assert r.status_code == 201, r.text
            ids.append(r.json()["id"])
        for token, vid in zip(tokens, ids, strict=True):
            assert host.wait_version(token, vid)["status"] == "active"
        # provisional until its placement series (a duplicate set played whole), which
        # the last one to turn active cannot have played yet; then no more
        marks = [host.ok("GET", f"/api/versions/{vid}") for vid in ids]
        assert all(v["provisional"] == (v["sets"] < 1) for v in marks), marks
        assert any(v["provisional"] for v in marks), marks
        wait_for(lambda: not any(host.ok("GET", f"/api/versions/{vid}")["provisional"]
                                 for vid in ids), 180, "the placement series")
        assert "Provisional" not in host.call("GET", f"/versions/{ids[-1]}").text
        assert "provisional" not in host.call("GET", "/").text
        assert host.ok("GET", "/api/status")["finished"] >= 6  # a set of 3 bots: 6 games
        assert host.ok("GET", "/api/final")["state"] == "not started"
    finally:
        host.stop()
    # the freeze by itself: no uploads, never again; the games go on
    host = start(submissions_open=opens, submissions_close=soon(), ends=far)
    try:
        wait_for(lambda: moved(host, "freeze"), 60, "the freeze")
        late = host.submit(tokens[1], tar_folder(EXAMPLES / "random", edit="v2"))
        assert (late.status_code, late.json()["detail"]) == (403, (
            "submissions are closed in the freeze phase: they do not open again in this "
            "competition"))
        played = host.ok("GET", "/api/status")["finished"]
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] > played, 120,
                 "a game in the freeze")
        freeze = dt.datetime.fromisoformat(host.ok("GET", "/api/phase")["since"])
    finally:
        host.stop()
    # the final by itself, a few seconds after a start
    final_starts = soon()
    host = start(submissions_open=opens, submissions_close=freeze,
                 final_starts=final_starts, ends=far)
    try:
        wait_for(lambda: host.ok("GET", "/api/final")["state"] == "playing", 60, "the final")
        f = host.ok("GET", "/api/final")
        assert (f["boards"], len(f["entrants"])) == (2, 3)
        assert f["seed"] is None  # a secret while it is played
        wait_for(lambda: sum(g["status"] == "finished" for g in one_per_board(
            final_games(host))) >= 3, 180, "3 final games")
    finally:
        host.stop()  # mid-final
    host = start(submissions_open=opens, submissions_close=freeze,
                 final_starts=final_starts, ends=far)
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
    # the end: nothing more is played, registrations are refused; the front page is the
    # final's standings; the status says it is over
    host = start(submissions_open=opens, submissions_close=freeze,
                 final_starts=final_starts, ends=soon())
    try:
        wait_for(lambda: moved(host, "ended"), 60, "the end")
        wait_for(lambda: host.ok("GET", "/api/status")["running"] == 0, 60,
                 "the last games to end")
        ended = host.ok("GET", "/api/status")
        assert ended["queued"] == 0 and ended["next_phase"] is None
        front = host.call("GET", "/").text
        assert "Final standings" in front
        first = f["standings"][0]["bot"]
        assert front.index(f'data-bot="{first}"') < front.index("The season's leaderboard")
        out = moon_host("status", host.url)
        assert re.search(r"final\W+over \(2 board\(s\) played\): 12 of 12 games finished",
                         out), out
        csv_rows = host.call("GET", "/api/final.csv").text.splitlines()
        assert len(csv_rows) == 4 and csv_rows[1].startswith(f"{f['standings'][0]['place']},"
                                                             f"{first},")
        invite = host.ok("POST", "/api/invites", host.admin)["code"]
        r = host.call("POST", "/api/register", json={"name": "carol", "invite": invite})
        assert (r.status_code, r.json()["detail"]) == (403, (
            "registration is closed in the ended phase: it does not open again in this "
            "competition"))
        assert "phase: ended since " in moon_host("phase", host.url)
        log = moon_host("audit", host.url, "--folder", str(folder)).splitlines()
        details = [line.split("  ", 2)[2] for line in log]
        assert details[0].startswith("phase: final -> ended (the calendar)")
        # (the final cancels the season's queued games: as many as were queued then)
        assert details[1].startswith("phase: freeze -> final (the calendar)")
        assert details[2:] == ["phase: season -> freeze (the calendar)",
                               "phase: registration -> season (the calendar)",
                               "phase: registration (the host's first phase)"], log
        # the export while the host serves
        args = ["host", "export", str(folder), "--output", str(tmp_path / "out.tar.gz")]
        moon_host(*args[1:], *(["--database", database] if database else []))
        # (no wall-clock assertion: a game would have started meanwhile)
        assert host.ok("GET", "/api/status")["finished"] == ended["finished"]
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
