"""A version that forfeits ``forfeit_limit`` rated games in a row is disabled, with the
reason for its owner, and leaves the pool; the others play on. On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from host_support import (
    EXAMPLES,
    HostProcess,
    make_competition,
    tar_files,
    tar_folder,
    wait_for,
)

from arena.cli import main


def flaky_bot(counter: Path) -> bytes:
    """Plays like the random bot in its validation (the checks of `moon bot check` with 3
    players: a hand against itself, 3 runs; no trumps and doubles as trumps, 2 each; its own
    bid, 1; a dropped stream, 1; a whole game, 1: 10 runs), then
    crashes at the start of every later game: it counts its runs in ``counter``, one byte
    appended a run (atomic, so the 3 runs started at once each get their own number)."""
    random_py = (EXAMPLES / "random" / "bot.py").read_text()
    bot_py = (f"import os, sys\nfd = os.open({str(counter)!r}, "
              "os.O_WRONLY | os.O_APPEND | os.O_CREAT)\nos.write(fd, b'x')\n"
              "n = os.lseek(fd, 0, os.SEEK_CUR) - 1\nos.close(fd)\n"
              "if n >= 10:\n    print('crashing on purpose', file=sys.stderr)\n"
              "    sys.exit(1)\n" + random_py)
    files = {"bot.toml": b'name = "flaky"\nrun = "{python} bot.py"\n',
             "bot.py": bot_py.encode()}
    return tar_files(files)


@pytest.mark.one_database
def test_forfeits_in_a_row_disable_a_version(tmp_path: Path, monkeypatch,
                                             database: str | None) -> None:
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    toml.write_text(toml.read_text().replace("forfeit_limit = 5", "forfeit_limit = 2"))
    host = HostProcess(folder, database).start()
    try:
        # alice uses the CLI: register (the token kept in her config file), submit, wait
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        monkeypatch.delenv("MOON_TOKEN", raising=False)
        cli = CliRunner()
        r = cli.invoke(main, ["host", "invite", host.url, "--folder", str(folder)])
        assert r.exit_code == 0, r.output
        invite = r.output.strip()
        r = cli.invoke(main, ["host", "invite", host.url, "--admin-token", "moon_forged"])
        assert r.exit_code == 1 and "unknown token" in r.output
        r = cli.invoke(main, ["host", "register", host.url, "alice", "--invite", invite])
        assert r.exit_code == 0, r.output
        alice = r.stdout.strip().splitlines()[0]
        assert alice in (tmp_path / "config" / "moon" / "config.toml").read_text()
        r = cli.invoke(main, ["submit", str(EXAMPLES / "heuristic"), "--server", host.url,
                              "--wait", "--timeout", "120"])
        assert r.exit_code == 0 and "heuristic@" in r.output and "active" in r.output, r.output
        bob, zed = (host.register(n) for n in ("bob", "zed"))
        v = host.submit(bob, tar_folder(EXAMPLES / "random")).json()
        assert host.wait_version(bob, v["id"])["status"] == "active"
        flaky = host.submit(zed, flaky_bot(tmp_path / "runs.txt")).json()
        passed = host.wait_version(zed, flaky["id"])
        why = host.ok("GET", f"/api/versions/{flaky['id']}", host.admin)["reason"] or ""
        # it passed its validation: active, or, its crashes being quick (a forked bot starts
        # in milliseconds), already disabled between two polls by forfeits, which only its
        # rated games (played once it is active) count
        assert passed["status"] == "active" or (
            passed["status"] == "disabled" and "forfeits in a row" in why), (passed, why)

        def disabled() -> dict | None:
            v = host.ok("GET", f"/api/versions/{flaky['id']}", zed)
            return v if v["status"] == "disabled" else None
        v = wait_for(disabled, 120, "the flaky version to be disabled")
        assert "2 forfeits in a row" in v["reason"] and "crash" in v["reason"]
        assert host.ok("GET", f"/api/versions/{flaky['id']}", alice)["reason"] is None
        # the rest of the pool plays on without it
        n = host.ok("GET", "/api/status")["finished"]
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= n + 3, 60,
                 "more games without the disabled version")
        games = host.ok("GET", "/api/games", params={"version": flaky["id"],
                                                     "status": "finished"})["games"]
        # disabled at the limit: the game still in flight then (2 at once) may finish,
        # and no game starts after it
        assert 2 <= len(games) <= 3
        assert host.ok("GET", f"/api/versions/{flaky['id']}", zed)["games"] == len(games)
        for g in games:
            seat = next(s["seat"] for s in g["seats"] if s["version_id"] == flaky["id"])
            assert g["termination"] == "forfeit"
            assert {(f["seat"], f["reason"]) for f in g["faults"] if f["forfeit"]} \
                == {(seat, "crash")}
        assert host.ok("GET", "/api/bots/flaky")["active_version"] is None
        assert "flaky" not in {r["bot"] for r in host.ok("GET", "/api/leaderboard")}
        assert host.ok("GET", "/api/games", params={"version": flaky["id"], "status":
                                                    "running"})["total"] == 0
        r = cli.invoke(main, ["host", "status", host.url])
        assert r.exit_code == 0 and "disabled 1" in r.output and "active 2" in r.output
        # the CLI's errors are one line: a forged token, a host that is not there
        r = cli.invoke(main, ["submit", str(EXAMPLES / "weak"), "--server", host.url,
                              "--token", "moon_forged"])
        assert r.exit_code == 1 and "unknown token" in r.output and "Traceback" not in r.output
    finally:
        host.stop()


def test_a_faulting_reference_bot_judges_nobody(tmp_path: Path) -> None:
    """A reference bot that crashes is the host's canary: the validation game is voided
    and the version waits (never rejected for the host's fault)."""
    folder = make_competition(tmp_path / "comp")
    ref = folder / "reference" / "random" / "bot.py"
    ref.write_text("import sys\nsys.exit(1)\n")
    host = HostProcess(folder, None).start()
    try:
        alice = host.register("alice")
        v = host.submit(alice, tar_folder(EXAMPLES / "heuristic")).json()
        wait_for(lambda: host.ok("GET", "/api/games", alice, params={
            "kind": "validation", "status": "voided"})["total"] >= 1, 60,
            "the validation game to be voided")
        assert host.ok("GET", f"/api/versions/{v['id']}", alice)["status"] in (
            "pending", "building", "validating")
        assert "reference bot" in host.log.read_text()
    finally:
        host.stop()
