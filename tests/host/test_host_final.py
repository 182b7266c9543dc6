"""A whole competition by itself through a real `moon host run` with real bots, on
PostgreSQL alone (``postgres_only``: each of its parts is checked on SQLite and
PostgreSQL by its own test, and a real host on PostgreSQL is more than its statements:
tests/host/conftest.py says which and why), with the issue's checks folded into its one
timeline (one host a phase, one set of games): registration (accounts and invites;
uploads refused with when they open), the season coming by itself (bots built, validated
and rated; provisional until their placement series, the leaderboard's count of sets as
the games list's, one version joining later starting the next sets; a version that
forfeits in a row disabled, its owner reading why; challenges, unrated, over the quota a
429 with when to ask again; a participant disabled and enabled by the organiser), the
freeze (an upload refused for good; the games go on), the final starting by itself among
the season's versions, never running two games of a board at once, no public address
giving away a tile of a board in play (a visitor's crawl, checked against the deal once
the final's seed is published), resuming after a restart mid-final without playing a
finished game again or losing one, ending after its boards; then the end (nothing more
played, registration refused, each change of phase in the audit log), the front page
showing the final's standings, `moon host status` its progress, `moon host export`'s
archive refitting them from the games' own records, and a season game voided by the
organiser leaving the season's fit equal to a refit of the archive without it."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import tarfile
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from host_support import (
    EXAMPLES,
    HostProcess,
    board_hands,
    crawl,
    flaky_bot,
    leaks,
    make_competition,
    sleepy_weak,
    tar_folder,
    wait_for,
)

from arena.cli import main as moon
from arena.ladder.ratings import rate
from arena.ladder.schedule import board_seed
from arena.ladder.store import GameRow

RULES = {"preset": "moon3", "target_score": 7}
"""The competition's rules (host_support.FAST), which deal its boards."""
MAX_HANDS = 4
"""The hands a game of it deals at most (host_support.FAST)."""


def z(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def final_games(host: HostProcess) -> list[dict[str, Any]]:
    return host.ok("GET", "/api/games?kind=final&limit=500")["games"]


def games_of(host: HostProcess, vid: int, status: str, kind: str = "rated") -> int:
    """How many games of ``kind`` and ``status`` version ``vid`` sat in (the organiser's
    view: every game)."""
    return int(host.ok("GET", "/api/games", params={"version": vid, "status": status,
                                                    "kind": kind}, token=host.admin)["total"])


def season_rows(results: list[dict[str, Any]], leave_out: str = "") -> list[GameRow]:
    """The season's rated games of an export's results, but ``leave_out``, as the batch fit
    reads them (bots are version ids as text; a board is a duplicate set)."""
    return [GameRow(g["id"], g["set"], "", 3, "", None, [], g["places"],
                    [str(v) for v in g["seats"]], 0, 0, 0)
            for g in results if g["kind"] == "rated" and g["id"] != leave_out]


def rated_games(host: HostProcess) -> list[dict[str, Any]]:
    """The public games list's rated games."""
    return host.ok("GET", "/api/games", params={"limit": 500})["games"]  # type: ignore


def whole_sets(games: list[dict[str, Any]]) -> dict[int, int]:
    """Sets each version has played whole, from a games list: a set with a finished game
    and none queued or running."""
    by_set: dict[int, list[dict[str, Any]]] = {}
    for g in games:
        by_set.setdefault(g["set"], []).append(g)
    out: dict[int, int] = {}
    for gs in by_set.values():
        if any(g["status"] in ("queued", "running") for g in gs) or \
                not any(g["status"] == "finished" for g in gs):
            continue
        for v in {x["version_id"] for g in gs for x in g["seats"]}:
            out[v] = out.get(v, 0) + 1
    return out


def one_per_board(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``games``, after checking no two of one board (set) are running."""
    running = [g["set"] for g in games if g["status"] == "running"]
    assert len(running) == len(set(running)), running
    return games


@pytest.mark.postgres_only
def test_a_competition_goes_by_itself_from_registration_to_final_standings(
        tmp_path: Path, database: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
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
    # two challenges an hour (the third is over the quota); two forfeits in a row disable
    assert re.search(r"(?m)^per_hour = 10 ", plain) and "forfeit_limit = 5 " in plain
    plain = re.sub(r"(?m)^per_hour = 10 ", "per_hour = 2 ", plain).replace(
        "forfeit_limit = 5 ", "forfeit_limit = 2 ")
    # a visitor's crawl in the final is a few hundred requests at once: over the rate of
    # one address it would wait its turn (host_support.crawl), and a board end meanwhile
    assert "per_client_per_s = 20 " in plain and re.search(r"(?m)^burst = 60 ", plain)
    plain = re.sub(r"(?m)^burst = 60 ", "burst = 1000 ", plain.replace(
        "per_client_per_s = 20 ", "per_client_per_s = 1000 "))
    cli = CliRunner()
    # zed's token is kept in his config file by `moon host register`
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("MOON_TOKEN", raising=False)
    # the weak bot, sleeping a while before each move while `slow` exists (in the final:
    # a board of six games one after another then lasts longer than a visitor's crawl)
    slow = tmp_path / "slow"
    weak = sleepy_weak(tmp_path / "weak", slow, 0.25)

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
        # accounts: invite codes, tokens, authorisation
        assert host.call("POST", "/api/register", json={"name": "mallory"}).status_code == 403
        tokens = [host.register(f"p{i}") for i in range(3)]
        assert host.call("GET", "/api/me").status_code == 401
        assert host.call("GET", "/api/me", "moon_forged-token-0000").status_code == 401
        assert host.call("GET", "/api/me", headers={"Authorization": "Basic eA=="}
                         ).status_code == 401
        assert host.ok("GET", "/api/me", tokens[0])["name"] == "p0"
        assert host.call("POST", "/api/invites", tokens[0]).status_code == 403
        # zed through the CLI: the organiser's invite (its token read from the folder),
        # his registration, his token kept in his config file; a forged token in one line
        r = cli.invoke(moon, ["host", "invite", host.url, "--folder", str(folder)])
        assert r.exit_code == 0, r.output
        invite = r.output.strip()
        r = cli.invoke(moon, ["host", "invite", host.url, "--admin-token", "moon_forged"])
        assert r.exit_code == 1 and "unknown token" in r.output
        r = cli.invoke(moon, ["host", "register", host.url, "zed", "--invite", invite])
        assert r.exit_code == 0, r.output
        zed = r.stdout.strip().splitlines()[0]
        assert zed in (tmp_path / "config" / "moon" / "config.toml").read_text()
        # `moon submit` reads it there (and is refused by the phase, not for want of one)
        flaky_dir = tmp_path / "flaky"
        with tarfile.open(fileobj=io.BytesIO(flaky_bot(tmp_path / "runs.txt"))) as tf:
            tf.extractall(flaky_dir, filter="data")
        r = cli.invoke(moon, ["submit", str(flaky_dir), "--server", host.url])
        assert r.exit_code == 1 and "submissions are closed in the registration phase" \
            in r.output and "Traceback" not in r.output, r.output
        early = host.submit(tokens[0], tar_folder(EXAMPLES / "heuristic"))
        assert (early.status_code, early.json()["detail"]) == (403, (
            f"submissions are closed in the registration phase: they open at {z(far)}"))
        status = moon_host("status", host.url)
        assert re.search(r"phase\W+registration\W", status), status
        assert re.search(rf"next phase\W+season at {z(far)}", status), status
    finally:
        host.stop()
    # the season comes by itself: three bots are built, validated and play rated games
    # (p0's through `moon submit --wait`), and zed's, which crashes once validated
    opens = soon()
    host = start(submissions_open=opens, submissions_close=far)
    try:
        assert host.ok("GET", "/api/phase")["phase"] in ("registration", "season")
        wait_for(lambda: moved(host, "season"), 60, "the season")
        subs = []
        for token, bundle in ((tokens[1], tar_folder(EXAMPLES / "random")),
                               (tokens[2], tar_folder(weak))):
            r = host.submit(token, bundle)
            assert r.status_code == 201, r.text
            subs.append(r.json()["id"])
        # zed's through `moon submit`
        r = cli.invoke(moon, ["submit", str(flaky_dir), "--server", host.url, "--token",
                              zed])
        assert r.exit_code == 0 and r.output.startswith("flaky@"), r.output
        subs.append(host.ok("GET", "/api/bots/flaky")["versions"][0]["id"])
        r = cli.invoke(moon, ["submit", str(EXAMPLES / "heuristic"), "--server", host.url,
                              "--token", tokens[0], "--wait", "--timeout", "180"])
        assert r.exit_code == 0 and "heuristic@" in r.output and "active" in r.output, \
            r.output
        ids = [host.ok("GET", "/api/bots/heuristic")["versions"][0]["id"], *subs[:2]]
        flaky = subs[2]
        for token, vid in zip(tokens, ids, strict=True):
            assert host.wait_version(token, vid)["status"] == "active"
        # provisional until its placement series (a duplicate set played whole); then
        # no more (the one joining later below is seen provisional)
        marks = [host.ok("GET", f"/api/versions/{vid}") for vid in ids]
        assert all(v["provisional"] == (v["sets"] < 1) for v in marks), marks
        # zed's version passed its validation: active, or, its crashes being quick,
        # already disabled between two polls by forfeits, which only its rated games
        # (played once it is active) count
        passed = host.wait_version(zed, flaky)
        why = host.ok("GET", f"/api/versions/{flaky}", host.admin)["reason"] or ""
        assert passed["status"] == "active" or (
            passed["status"] == "disabled" and "forfeits in a row" in why), (passed, why)

        def disabled() -> dict | None:
            v = host.ok("GET", f"/api/versions/{flaky}", zed)
            return v if v["status"] == "disabled" else None
        v = wait_for(disabled, 120, "the flaky version to be disabled")
        assert "2 forfeits in a row" in v["reason"] and "crash" in v["reason"]
        assert host.ok("GET", f"/api/versions/{flaky}", tokens[0])["reason"] is None
        n = host.ok("GET", "/api/status")["finished"]
        wait_for(lambda: not any(host.ok("GET", f"/api/versions/{vid}")["provisional"]
                                 for vid in ids), 180, "the placement series")
        assert "Provisional" not in host.call("GET", f"/versions/{ids[-1]}").text
        assert "provisional" not in host.call("GET", "/").text
        assert host.ok("GET", "/api/status")["finished"] >= 6  # a set of 3 bots: 6 games
        # the leaderboard's count of sets lies between two counts of the public games
        # list taken around it (sets only grow)
        low = whole_sets(rated_games(host))
        board = host.ok("GET", "/api/leaderboard")
        high = whole_sets(rated_games(host))
        for row in board:
            assert low.get(row["version_id"], 0) <= row["sets"] <= high[row["version_id"]]
            assert row["provisional"] is False
        # the rest of the pool plays on without the disabled version
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= n + 3, 60,
                 "more games without the disabled version")
        # disabled at the limit: the game still in flight then (2 at once) may finish
        # (on a loaded machine after the others' games: its bot is slower to start than
        # theirs are to play), and no game starts after it
        wait_for(lambda: games_of(host, flaky, "running") == 0, 60,
                 "the flaky version's game in flight to end")
        games = host.ok("GET", "/api/games", params={"version": flaky,
                                                     "status": "finished"})["games"]
        assert 2 <= len(games) <= 3
        assert host.ok("GET", f"/api/versions/{flaky}", zed)["games"] == len(games)
        for g in games:
            # (one seat, or two: while fewer versions than seats were active, one sat twice)
            seats = {s["seat"] for s in g["seats"] if s["version_id"] == flaky}
            assert g["termination"] == "forfeit"
            forfeits = {(f["seat"], f["reason"]) for f in g["faults"] if f["forfeit"]}
            assert len(forfeits) == 1 and forfeits <= {(s, "crash") for s in seats}, \
                (g["seats"], g["faults"])
        assert host.ok("GET", "/api/bots/flaky")["active_version"] is None
        assert "flaky" not in {r["bot"] for r in host.ok("GET", "/api/leaderboard")}
        assert games_of(host, flaky, "running") + games_of(host, flaky, "queued") == 0
        status = moon_host("status", host.url)
        assert "disabled 1" in status and "active 3" in status, status
        # the CLI's errors are one line: a forged token
        r = cli.invoke(moon, ["submit", str(EXAMPLES / "weak"), "--server", host.url,
                              "--token", "moon_forged"])
        assert r.exit_code == 1 and "unknown token" in r.output and "Traceback" not in r.output

        # p0's challenge through the CLI, which waits for the result
        ann, bob = tokens[0], tokens[1]
        r = cli.invoke(moon, ["challenge", "random", "--server", host.url, "--token", ann,
                              "--timeout", "240"])
        assert r.exit_code == 0, r.output
        last = r.output.strip().splitlines()[-1]
        assert last.startswith("challenge c1: heuristic@") and " finished: you placed " in \
            last and "unrated; replay /games/c1" in last, r.output
        c1 = host.ok("GET", "/api/challenges/c1", ann)
        assert c1["status"] == "finished" and c1["record"] == "/api/games/c1/record"
        assert host.call("GET", "/api/games/c1/record", ann).status_code == 200
        # the opponent's owner sees it was played, not its record; a visitor nothing
        seen = host.ok("GET", "/api/games/c1", bob)
        assert seen["kind"] == "challenge" and seen["record"] is False
        assert host.call("GET", "/api/games/c1/record", bob).status_code == 409
        assert host.call("GET", "/api/games/c1").status_code == 404
        # a second against the host's reference bot; a third is over the quota (2 an
        # hour): it waits for c1 to leave the hour, one hour after it was asked
        c2 = host.ok("POST", "/api/challenges", ann, json={"opponent": "reference-random"})
        asked = time.time()
        r = host.call("POST", "/api/challenges", ann, json={"opponent": "weak"})
        answered = time.time()
        assert r.status_code == 429, r.text
        # (created_at is to the second, cut: c1 was asked up to 1 s after it; the wait is
        # rounded up to a second)
        leaves = dt.datetime.fromisoformat(c1["game"]["created_at"].replace(
            "Z", "+00:00")).timestamp() + 3600
        assert leaves - answered - 1 <= int(r.headers["Retry-After"]) <= leaves - asked + 2
        assert "per_hour = 2" in r.json()["detail"] and "ask again in" in r.json()["detail"]
        wait_for(lambda: host.ok("GET", f"/api/challenges/{c2['id']}", ann)["status"]
                 == "finished", 120, "the second challenge to finish")
        # never in a rating: the season's games (the end checks each version's count and
        # fit against the rated games alone)
        assert games_of(host, ids[0], "finished", "challenge") == 2
        assert "c1" not in {g["id"] for g in host.ok("GET", "/api/games", params={
            "limit": 500})["games"]}

        # the organiser disables p1: his version stops, he reads why
        r = cli.invoke(moon, ["host", "disable-participant", host.url, "p1", "--reason",
                              "plays for p0", "--folder", str(folder)])
        assert r.exit_code == 0 and "participant p1: disabled (plays for p0)" in r.output, \
            r.output
        assert host.ok("GET", "/api/me", bob)["disabled"] == "plays for p0"
        v = host.ok("GET", f"/api/versions/{ids[1]}", bob)
        assert v["status"] == "disabled" and v["reason"].endswith("plays for p0")
        r = host.submit(bob, tar_folder(EXAMPLES / "random", edit="again"))
        assert r.status_code == 403 and r.json()["detail"] == (
            "your account is disabled by the organiser (plays for p0): ask the organiser "
            "to enable it")
        assert games_of(host, ids[1], "queued") == 0
        wait_for(lambda: games_of(host, ids[1], "running") == 0, 60,
                 "p1's game in flight to end")
        his = games_of(host, ids[1], "finished")
        n = host.ok("GET", "/api/status")["finished"]
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= n + 3, 120,
                 "games without p1")
        assert games_of(host, ids[1], "finished") == his
        assert games_of(host, ids[1], "running") + games_of(host, ids[1], "queued") == 0
        # enabled again, he plays again
        r = cli.invoke(moon, ["host", "enable-participant", host.url, "p1", "--folder",
                              str(folder)])
        assert r.exit_code == 0 and "participant p1: enabled" in r.output, r.output
        wait_for(lambda: games_of(host, ids[1], "finished") > his, 120,
                 "a game of p1's after he was enabled")
        audit = [(e["action"], e["detail"]) for e in host.ok("GET", "/api/audit", host.admin)]
        assert [x for x, _ in audit[:2]] == ["enable", "disable"]
        assert audit[1][1].startswith("participant p1: plays for p0; 1 version(s) disabled")

        # a version that joins later (p0's second: the first retired, its games counted
        # apart) is provisional, starts every new set until its series is played, and is
        # so no more
        first = host.ok("GET", f"/api/versions/{ids[0]}")
        slow.touch()  # its series lasts a while: it is seen provisional
        v2 = host.submit(ann, tar_folder(EXAMPLES / "heuristic", edit="version 2")).json()
        assert v2["number"] == 2 and v2["hash"] != first["hash"]
        assert host.wait_version(ann, v2["id"])["status"] == "active"
        last_set = max(g["set"] for g in rated_games(host))  # made before it was seen active
        assert host.ok("GET", f"/api/versions/{ids[0]}")["status"] == "retired"
        seen = False
        for _ in range(100):  # its page and the front page, between two answers that agree
            api = host.ok("GET", f"/api/versions/{v2['id']}")
            page = host.call("GET", f"/versions/{v2['id']}").text
            front = host.call("GET", "/").text
            again = host.ok("GET", f"/api/versions/{v2['id']}")
            if not again["provisional"]:
                break
            assert api["provisional"] and api["sets"] < 1
            if api["sets"] == again["sets"]:
                assert "Provisional: it has played 0 of its 1 placement sets" in page, page
                assert "provisional" in front
                seen = True
                break
        # its row on the leaderboard, between two counts of the games list
        low = whole_sets(rated_games(host))
        board = host.ok("GET", "/api/leaderboard")
        high = whole_sets(rated_games(host))
        row = next(r for r in board if r["version_id"] == v2["id"])
        assert low.get(v2["id"], 0) <= row["sets"] <= high.get(v2["id"], 0)
        assert row["provisional"] == (row["sets"] < 1)
        assert seen, "the new version was never seen provisional"
        slow.unlink()
        wait_for(lambda: not host.ok("GET", f"/api/versions/{v2['id']}")["provisional"],
                 180, "the new version's placement series")
        assert host.ok("GET", f"/api/versions/{v2['id']}")["sets"] >= 1
        assert "Provisional" not in host.call("GET", f"/versions/{v2['id']}").text
        new_sets: dict[int, set[int]] = {}
        for g in rated_games(host):
            if g["set"] > last_set:
                new_sets.setdefault(g["set"], set()).update(
                    x["version_id"] for x in g["seats"])
        assert v2["id"] in new_sets[min(new_sets)], new_sets
        mine = host.ok("GET", "/api/games", params={"version": v2["id"], "status": "finished",
                                                    "limit": 500})["games"]
        assert mine and not any(s["version_id"] == ids[0] for g in mine for s in g["seats"])
        assert host.ok("GET", f"/api/versions/{ids[0]}")["games"] == games_of(
            host, ids[0], "finished")
        bot = host.ok("GET", "/api/bots/heuristic")
        assert bot["active_version"] == v2["label"]
        assert [v["number"] for v in bot["versions"]] == [1, 2]
        retired, ids[0] = ids[0], v2["id"]
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
    # the final by itself, a few seconds after a start; its weak bot slow for a while
    final_starts = soon()
    slow.touch()
    host = start(submissions_open=opens, submissions_close=freeze,
                 final_starts=final_starts, ends=far)
    try:
        wait_for(lambda: host.ok("GET", "/api/final")["state"] == "playing", 60, "the final")
        f = host.ok("GET", "/api/final")
        assert (f["boards"], len(f["entrants"])) == (2, 3)
        assert f["seed"] is None  # a secret while it is played

        # a visitor's crawl while a board has a finished game and more to play: every
        # answer is checked against the boards' deals once the final's seed is out
        def sibling_done() -> list[dict[str, Any]] | None:
            games = one_per_board(final_games(host))
            boards = {g["set"] for g in games}
            return games if any(
                any(g["status"] == "finished" for g in games if g["set"] == b) and
                sum(g["status"] in ("queued", "running") for g in games if g["set"] == b)
                >= 2 for b in boards) else None
        crawled = wait_for(sibling_done, 180, "a final board with a finished game")
        received: dict[str, float] = {}
        pages = crawl(host.url, [g["id"] for g in crawled], received)
        slow.unlink()
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
        # (nor the challenges)
        season_games = {r["version_id"]: r["games"]
                        for r in host.ok("GET", "/api/leaderboard")}
        assert set(season_games) == set(ids)
        rated = host.ok("GET", "/api/games?limit=500")["games"]
        assert all(g["kind"] == "rated" for g in rated)
        for vid, n in season_games.items():
            assert n == sum(1 for g in rated if g["status"] == "finished"
                            and any(x["version_id"] == vid for x in g["seats"]))
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
        details = [d for line in log if (d := line.split("  ", 2)[2]).startswith("phase: ")]
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
        files = archive(tmp_path / "out.tar.gz")
        results = json.loads(files["results.json"])["games"]
        seeds = json.loads(files["seeds.json"])
        final = json.loads(files["standings/final.json"])

        # the crawl in the final, now that its seed is out: no answer that came in before
        # a board's last game ended (its result written) held a tile of the board beyond
        # its plays (a dealt hand), nor the board's seed
        def hands(set_id: int) -> list[frozenset[str]]:
            """Set ``set_id``'s dealt hands, but those another board deals too (a
            bidder's with the widow: a run of 8 holds a hand of 7), which say nothing
            of this one's wherever they are shown."""
            others = [h for k, v in seeds["sets"].items() if int(k) != set_id
                      for h in board_hands(v, RULES, MAX_HANDS)[1]]
            dealt = board_hands(seeds["sets"][str(set_id)], RULES, MAX_HANDS)[0]
            return [h for h in dealt if not any(h <= o for o in others)]
        board_of = {g["set"]: int(re.match(r"fb(\d+)-", g["id"]).group(1))  # type: ignore
                    for g in results if g["kind"] == "final"}
        ends: dict[int, float] = {}
        for g in (g for g in final_games(host) if g["status"] == "finished"):
            t = dt.datetime.fromisoformat(g["finished_at"].replace("Z", "+00:00")).timestamp()
            ends[g["set"]] = max(ends.get(g["set"], 0.0), t)
        told = ""
        for sid in sorted(ends):
            seed = seeds["sets"][str(sid)]
            assert seed == board_seed(seeds["final_master_seed"], board_of[sid])
            dealt = hands(sid)
            assert dealt
            while_in_play = {a: body for a, body in pages.items() if received[a] < ends[sid]}
            found = {a: what for a, body in while_in_play.items()
                     if (what := leaks(body, seed, dealt))}
            assert found == {}, (sid, found)
            # what a visitor was told instead of a finished game of it
            for g in crawled:
                addresses = [f"/api/games/{g['id']}", f"/api/games/{g['id']}/record",
                             f"/games/{g['id']}"]
                if not told and g["set"] == sid and g["status"] == "finished" and all(
                        a in while_in_play for a in addresses) and len(while_in_play) > 50:
                    told = g["id"]
                    assert json.loads(pages[addresses[0]])["withheld"].startswith(
                        "shown when the ")
                    assert "other game" in json.loads(pages[addresses[1]])["detail"]
                    assert "shown when the " in pages[addresses[2]]
        # (over 50 answers, the pages, API and streams, while the board was in play)
        assert told, ("the crawl outlasted the boards with a finished game",
                      {k: sum(received[a] < t for a in pages) for k, t in ends.items()})
        # once its board is over, a game's record is shown, and the same check finds the
        # hands in it (the check can see a leak)
        sid = next(g["set"] for g in crawled if g["id"] == told)
        record = host.call("GET", f"/api/games/{told}/record")
        assert record.status_code == 200
        assert leaks(record.text, seeds["sets"][str(sid)], hands(sid))
        assert leaks(host.call("GET", f"/games/{told}").text, seeds["sets"][str(sid)],
                     hands(sid))
        assert host.ok("GET", f"/api/games/{told}")["withheld"] is None

        # the season's fit is the batch fit of the archive's rated games (the challenges
        # never in it), and each version's count its rated games there
        boot = tomllib.loads(files["competition.toml"].decode())["matchmaking"]["bootstrap"]

        def fit(rows: list[GameRow]) -> dict[int, tuple[float, float | None, float | None]]:
            bots = sorted({b for r in rows for b in r.seats}, key=int)
            return {int(r.bot): (r.rating, r.low, r.high) for r in rate(
                rows, bots, bootstrap=boot, seed=seeds["season_master_seed"])}

        def fitted(season: dict[str, Any]) -> dict[int, tuple[float, Any, Any]]:
            return {r["version_id"]: (r["rating"], r["rating_low"], r["rating_high"])
                    for r in season["ratings"]}

        def counts(rows: list[GameRow]) -> dict[int, int]:
            return {int(b): sum(b in r.seats for r in rows)
                    for b in {b for r in rows for b in r.seats}}

        season = json.loads(files["standings/season.json"])
        rows = season_rows(results)
        assert season["batch"]["games"] == len(rows)
        assert fitted(season) == fit(rows)
        assert {r["version_id"]: r["games"] for r in season["ratings"]} == counts(rows)
        assert {*ids, retired, flaky} == set(counts(rows))
        # the organiser voids one: the season's fit is then the archive's without it
        gone = next(g["id"] for g in results if g["kind"] == "rated"
                    and set(g["seats"]) == set(ids))
        said = moon_host("void", host.url, gone, "--reason", "a host fault", "--folder",
                         str(folder))
        assert said.strip() == f"game {gone}: voided; the ratings are recomputed without it"
        again = tmp_path / "again.tar.gz"

        def refitted() -> dict[str, Any] | None:
            moon_host("export", str(folder), "--output", str(again), "--force",
                      *(["--database", database] if database else []))
            season = json.loads(archive(again)["standings/season.json"])
            return season if season["batch"]["games"] == len(rows) - 1 else None
        wait_for(refitted, 60, "the season's fit without the voided game", 2)
        # once more: an export on PostgreSQL reads statement by statement, and one that
        # straddled the fit's commit held the ratings before it beside the new count
        without = refitted()
        assert without is not None
        assert gone not in {g["id"] for g in json.loads(archive(again)["results.json"])[
            "games"]}
        rest = season_rows(results, leave_out=gone)
        assert fitted(without) == fit(rest) != fitted(season)
        assert {r["version_id"]: r["games"] for r in without["ratings"]} == counts(rest)
        entry = host.ok("GET", "/api/audit", host.admin)[0]
        assert (entry["action"], entry["detail"]) == ("void", f"game {gone}: a host fault")
    finally:
        host.stop()
    log = host.log.read_text()
    assert "Traceback" not in log, log[-3000:]
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
