"""A challenge cut by a crash of the host, end to end on SQLite and PostgreSQL: a real
`moon host run` with the example bots, killed (kill -9) mid-challenge. (A challenge's
result through `moon challenge`, never in the ratings, the 429 over the quota, and a
participant disabled and enabled by the organiser are checked in the flow on both
databases, tests/host/test_host_final.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

from arena.cli import main


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
