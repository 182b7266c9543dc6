"""Challenges and a disabled participant end to end: a real `moon host run` on SQLite (a
flow: challenges' queries run on PostgreSQL in process, tests/host/test_challenges.py)
with the example bots. A participant's `moon challenge` waits for its result,
which never enters the ratings; over the quota the API says 429 and when to ask again;
the organiser disables a participant with `moon host disable-participant`, after which
their version plays no more game and they read why, and enabling them undoes it."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

from arena.cli import main


def _t(iso: str) -> float:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _games_of(host: HostProcess, vid: int, status: str, kind: str = "rated") -> int:
    return int(host.ok("GET", "/api/games", params={"version": vid, "status": status,
                                                    "kind": kind}, token=host.admin)["total"])


@pytest.mark.one_database  # a flow: its queries run on PostgreSQL in process (conftest.py)
def test_challenges_and_a_disabled_participant(tmp_path: Path, database: str | None
                                                ) -> None:
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    toml.write_text(toml.read_text().replace("per_hour = 10", "per_hour = 2"))
    host = HostProcess(folder, database).start()
    cli = CliRunner()
    try:
        (ann, a), (bob, b), (_, w) = host.enter(("heuristic", "random", "weak"))
        # ann's challenge through the CLI, which waits for the result
        r = cli.invoke(main, ["challenge", "random", "--server", host.url, "--token", ann,
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
        before = time.time()
        r = host.call("POST", "/api/challenges", ann, json={"opponent": "weak"})
        after = time.time()
        assert r.status_code == 429, r.text
        # (created_at is to the second, cut: c1 was asked up to 1 s after it; the wait is
        # rounded up to a second)
        leaves = _t(c1["game"]["created_at"]) + 3600
        assert leaves - after - 1 <= int(r.headers["Retry-After"]) <= leaves - before + 2
        assert "per_hour = 2" in r.json()["detail"] and "ask again in" in r.json()["detail"]
        wait_for(lambda: host.ok("GET", f"/api/challenges/{c2['id']}", ann)["status"]
                 == "finished", 120, "the second challenge to finish")
        # never in a rating: each version's rated games are its finished rated games,
        # counted while no game runs (the organiser holds the games a moment)
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= 6, 120,
                 "a rated set")
        host.ok("POST", "/api/phase", host.admin, json={"phase": "final"})
        wait_for(lambda: host.ok("GET", "/api/status")["running"] == 0, 60,
                 "the games in flight to end")
        for vid in (a["id"], b["id"], w["id"]):
            n = host.ok("GET", f"/api/versions/{vid}", host.admin)["games"]
            assert n == _games_of(host, vid, "finished"), vid
        assert _games_of(host, a["id"], "finished", "challenge") == 2
        assert "c1" not in {g["id"] for g in host.ok("GET", "/api/games", params={
            "limit": 500})["games"]}
        host.ok("POST", "/api/phase", host.admin, json={"phase": "season"})

        # the organiser disables bob: his version stops, he reads why
        r = cli.invoke(main, ["host", "disable-participant", host.url, "p1", "--reason",
                              "plays for ann", "--folder", str(folder)])
        assert r.exit_code == 0 and "participant p1: disabled (plays for ann)" in r.output, \
            r.output
        assert host.ok("GET", "/api/me", bob)["disabled"] == "plays for ann"
        v = host.ok("GET", f"/api/versions/{b['id']}", bob)
        assert v["status"] == "disabled" and v["reason"].endswith("plays for ann")
        r = host.submit(bob, tar_folder(EXAMPLES / "random", edit="again"))
        assert r.status_code == 403 and r.json()["detail"] == (
            "your account is disabled by the organiser (plays for ann): ask the organiser "
            "to enable it")
        assert _games_of(host, b["id"], "queued") == 0
        wait_for(lambda: _games_of(host, b["id"], "running") == 0, 60,
                 "bob's game in flight to end")
        his = _games_of(host, b["id"], "finished")
        n = host.ok("GET", "/api/status")["finished"]
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= n + 3, 120,
                 "games without bob")
        assert _games_of(host, b["id"], "finished") == his
        assert _games_of(host, b["id"], "running") + _games_of(host, b["id"], "queued") == 0
        # enabled again, he plays again
        r = cli.invoke(main, ["host", "enable-participant", host.url, "p1", "--folder",
                              str(folder)])
        assert r.exit_code == 0 and "participant p1: enabled" in r.output, r.output
        wait_for(lambda: _games_of(host, b["id"], "finished") > his, 120,
                 "a game of bob's after he was enabled")
        log = [(e["action"], e["detail"]) for e in host.ok("GET", "/api/audit", host.admin)]
        assert [x for x, _ in log[:2]] == ["enable", "disable"]
        assert log[1][1].startswith("participant p1: plays for ann; 1 version(s) disabled")
    finally:
        host.stop()


def test_a_challenge_cut_by_a_crash_is_played_again(tmp_path: Path, database: str | None
                                                     ) -> None:
    # a challenge game under way when the host is killed (kill -9) is voided at the next
    # start, as every game in flight is; its asker reads that it is played again, under
    # which id, and gets its result: the game they asked for is not lost
    folder = make_competition(tmp_path / "comp")
    slow = tmp_path / "slow"  # 30 ms a decision: the challenge lasts a few seconds
    shutil.copytree(EXAMPLES / "weak", slow)
    source = (slow / "bot.py").read_text()
    assert "    def act(self, obs):\n" in source
    (slow / "bot.py").write_text(source.replace(
        "    def act(self, obs):\n", "    def act(self, obs):\n        time.sleep(0.03)\n")
        .replace("from moon_sdk import", "import time\n\nfrom moon_sdk import"))
    host = HostProcess(folder, database).start()
    try:
        ann, bob = host.register("ann"), host.register("bob")
        a = host.submit(ann, tar_folder(EXAMPLES / "heuristic")).json()
        b = host.submit(bob, tar_folder(slow)).json()
        assert host.wait_version(ann, a["id"])["status"] == "active"
        assert host.wait_version(bob, b["id"])["status"] == "active"
        c1 = host.ok("POST", "/api/challenges", ann, json={"opponent": "weak"})
        assert c1["id"] == "c1"
        wait_for(lambda: host.ok("GET", "/api/challenges/c1", ann)["status"] == "running",
                 120, "the challenge to start")
        host.kill9()
        host = HostProcess(folder, database).start()
        got = host.ok("GET", "/api/challenges/c1", ann)
        assert (got["status"], got["again"]) == ("voided", "c1-r1"), got
        assert got["note"] == ("the host stopped while the game was being played; played "
                               "again as c1-r1")
        done = wait_for(lambda: (x := host.ok("GET", "/api/challenges/c1-r1", ann))[
            "status"] in ("finished", "voided", "cancelled") and x, 240, "c1-r1 to end")
        assert done["status"] == "finished", done
        assert all(p in (1, 2, 3) for p in done["places"]), done
        assert done["record"] == "/api/games/c1-r1/record"
        assert [x["version_id"] for x in done["game"]["seats"]] == \
            [x["version_id"] for x in got["game"]["seats"]] == [a["id"], b["id"], b["id"]]
        assert host.call("GET", "/api/games/c1-r1/record", ann).status_code == 200
        # its asker's list has both, the voided one pointing at its replay
        mine = host.ok("GET", "/api/challenges", ann)["challenges"]
        assert [(x["id"], x["status"], x["again"]) for x in mine] == [
            ("c1-r1", "finished", None), ("c1", "voided", "c1-r1")]
        # the organiser voids the finished replay with `moon host void`: unlike the
        # host's failure, not played again; its asker reads why; in the audit log
        out = CliRunner().invoke(main, ["host", "void", host.url, "c1-r1", "--reason",
                                        "a bot hung the host", "--folder", str(folder)])
        assert out.exit_code == 0, out.output
        assert out.output.strip() == ("game c1-r1: voided; a challenge, never rated: not "
                                      "played again, its asker reads why")
        got = host.ok("GET", "/api/challenges/c1-r1", ann)
        assert (got["status"], got["again"], got["record"]) == ("voided", None, None)
        assert got["note"] == ("voided by the organiser: a bot hung the host; not played "
                               "again (ask again: a voided challenge is not counted in "
                               "your quota)")
        assert [x["id"] for x in host.ok("GET", "/api/challenges", ann)["challenges"]] \
            == ["c1-r1", "c1"]
        assert host.ok("GET", "/api/games", host.admin, params={
            "kind": "challenge", "status": "queued"})["total"] == 0
        entry = host.ok("GET", "/api/audit", host.admin)[0]
        assert (entry["action"], entry["detail"]) == (
            "void", "challenge c1-r1 (asked by ann): a bot hung the host")
    finally:
        host.stop()
