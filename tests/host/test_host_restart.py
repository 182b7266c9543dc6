"""`kill -9` of the host in the middle of games, then a restart: no finished game is lost,
the games in flight are voided and replayed (never rated), no game is rated twice, and a
submission caught in its build is kept and built. On SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import httpx
from click.testing import CliRunner
from host_support import (
    EXAMPLES,
    HostProcess,
    make_competition,
    stopped_line,
    tar_folder,
    wait_for,
)
from openskill.models import PlackettLuce
from sqlalchemy import select

from arena.cli import main
from arena.host.models import Game, Version
from arena.host.run import open_host


def all_games(host: HostProcess) -> list[dict]:
    return host.ok("GET", "/api/games", params={"limit": 500})["games"]


def bots_running_in(folder: Path) -> list[int]:
    """Pids of the processes whose working folder is under ``folder`` (the bots)."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            if cwd.startswith(str(folder)):
                out.append(int(pid))
    return out


def replay_live_ratings(games: list[dict]) -> dict[int, tuple[float, float]]:
    """OpenSkill from scratch over the finished rated games in result order (a version
    seated twice in one game gets the mean of its seats' updates)."""
    model = PlackettLuce()
    ratings: dict[int, tuple[float, float]] = {}
    for g in sorted(games, key=lambda g: g["seq"]):
        seats = [s["version_id"] for s in g["seats"]]
        teams = [[model.rating(*ratings.get(v, (25.0, 25.0 / 3)))] for v in seats]
        new = model.rate(teams, ranks=[s["place"] for s in g["seats"]])
        acc: dict[int, list[tuple[float, float]]] = {}
        for v, team in zip(seats, new, strict=True):
            acc.setdefault(v, []).append((team[0].mu, team[0].sigma))
        for v, vals in acc.items():
            ratings[v] = (sum(x[0] for x in vals) / len(vals), sum(x[1] for x in vals) / len(vals))
    return ratings


def test_kill_9_and_restart(tmp_path: Path, database: str | None) -> None:
    folder = make_competition(tmp_path / "comp")
    host = HostProcess(folder, database).start()
    try:
        tokens = {n: host.register(n) for n in ("alice", "bob", "carol")}
        versions = {}
        for (name, token), bot in zip(tokens.items(), ("heuristic", "random", "weak"),
                                      strict=True):
            versions[name] = host.submit(token, tar_folder(EXAMPLES / bot)).json()
        for name, v in versions.items():
            assert host.wait_version(tokens[name], v["id"])["status"] == "active"
        wait_for(lambda: sum(g["status"] == "finished" for g in all_games(host)) >= 6
                 and any(g["status"] == "running" for g in all_games(host)), 120,
                 "6 finished games and one running")
        # a new version, still in its build or validation when the host dies
        v2 = host.submit(tokens["alice"], tar_folder(EXAMPLES / "heuristic", edit="v2")).json()
        before = {g["id"]: g for g in all_games(host) if g["status"] == "finished"}
        wait_for(lambda: bots_running_in(folder / "store"), 20, "bots mid-game", every=0.05)
        host.kill9()
        # the bots die with the host (nothing of a killed host keeps playing)
        wait_for(lambda: not bots_running_in(folder / "store"), 20, "the bots to die")

        host = HostProcess(folder, database).start()
        after = {g["id"]: g for g in all_games(host)}
        for gid, g in before.items():  # no finished game lost, none changed
            assert after[gid]["status"] == "finished"
            assert after[gid]["scores"] == g["scores"] and after[gid]["seq"] == g["seq"]
        voided = [g for g in after.values() if g["status"] == "voided"]
        assert voided, "the games in flight at the kill are voided"
        for g in voided:  # ... and replayed: same board, same seats, a new id
            replay = after.get(f"{g['id'].split('-r')[0]}-r{g['attempt'] + 1}")
            assert replay is not None and replay["status"] in ("queued", "running", "finished")
            assert [s["version_id"] for s in replay["seats"]] == \
                [s["version_id"] for s in g["seats"]]
        # the submission survived and is built now
        assert host.wait_version(tokens["alice"], v2["id"])["status"] == "active"
        wait_for(lambda: sum(g["status"] == "finished" and g["attempt"] > 0
                             for g in all_games(host)) >= 1, 120, "a replayed game finished")
        host.stop()  # a clean stop: nothing more is written after this

        host = HostProcess(folder, database).start()
        # the restarted host plays on while the test reads: the games and the versions
        # are read until a game list read before and one read after the versions agree
        while True:
            done = [g for g in all_games(host) if g["status"] == "finished"]
            bots = host.ok("GET", "/api/bots")
            if {g["id"] for g in all_games(host) if g["status"] == "finished"} == \
                    {g["id"] for g in done}:
                break
        assert len({g["id"] for g in done}) == len(done)
        seqs = sorted(g["seq"] for g in done)
        assert seqs == sorted(set(seqs))  # every result written once
        # none rated twice: every version's game count and live rating equal what its
        # finished games give, worked out again from scratch
        expected = replay_live_ratings(done)
        for bot in bots:
            for v in bot["versions"]:
                mine = [g for g in done if any(s["version_id"] == v["id"] for s in g["seats"])]
                assert v["games"] == len(mine), v["label"]
                if mine:
                    mu, sigma = expected[v["id"]]
                    assert abs(v["mu"] - mu) < 1e-3 and abs(v["sigma"] - sigma) < 1e-3
        assert all(not any(s["version_id"] is None for s in g["seats"]) for g in done)
    finally:
        host.stop()
    # the host may have finished games after those reads: what it left is read from its
    # database now that it is stopped, and worked out again the same way
    again, _ = open_host(folder, database, recover=False)
    with again.Session() as s:
        rows = s.scalars(select(Game).where(Game.kind == "rated",
                                            Game.status == "finished")).all()
        final = [{"id": g.id, "seq": g.seq,
                  "seats": [{"version_id": x.version_id, "place": x.place} for x in g.seats]}
                 for g in rows]
        stored = {v.id: (v.games, v.mu, v.sigma) for v in s.scalars(select(Version))}
    again.close()  # its locks: `moon host rerate` takes them too
    assert {g["id"] for g in done} <= {g["id"] for g in final}
    expected = replay_live_ratings(final)
    for vid, (n, mu, sigma) in stored.items():
        assert n == sum(any(x["version_id"] == vid for x in g["seats"]) for g in final)
        if n:
            assert abs(mu - expected[vid][0]) < 1e-3 and abs(sigma - expected[vid][1]) < 1e-3
    # `moon host rerate` recomputes the same ratings from all results
    argv = ["host", "rerate", str(folder)] + (["--database", database] if database else [])
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 0 and f"from {len(final)} games" in r.output, r.output
    again, _ = open_host(folder, database, recover=False)
    with again.Session() as s:
        for v in s.scalars(select(Version)):
            assert v.games == stored[v.id][0]
            assert abs(v.mu - stored[v.id][1]) < 1e-3
            assert abs(v.sigma - stored[v.id][2]) < 1e-3
    again.close()


def test_ctrl_c_stops_the_host_quietly_mid_games(tmp_path: Path) -> None:
    # Ctrl-C (SIGINT) while rated games of Python bots (forked by the fork server) run:
    # the host exits 0, and the games it stopped are not reported as failures
    host = HostProcess(make_competition(tmp_path / "comp", concurrency=2), None).start()
    try:
        tokens = {n: host.register(n) for n in ("ann", "ben", "cy")}
        for who, bot in zip(tokens, ("heuristic", "random", "weak"), strict=True):
            v = host.submit(tokens[who], tar_folder(EXAMPLES / bot)).json()
            assert host.wait_version(tokens[who], v["id"])["status"] == "active"
        wait_for(lambda: [g for g in all_games(host) if g["status"] == "running"], 120,
                 "a game in flight")
        assert host.proc is not None
        host.proc.send_signal(signal.SIGINT)
        assert host.proc.wait(60) == 130  # stopped by a signal
    finally:
        host.stop()
    log = host.log.read_text()
    assert "fork server died" not in log and "WARNING" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    # its last line says what the stop left, as the database has it
    assert stopped_line(tmp_path / "comp") == log.splitlines()[-1]



def test_a_stop_with_a_person_mid_turn_prints_only_the_hosts_line(tmp_path: Path) -> None:
    # a table's person is thinking (their stream open, nothing read from it) when the host
    # is stopped: the person's stream is ended before the referee's server stops, so gRPC
    # has no call to cancel and writes nothing of its own ("Got goaway", "Aborting method")
    folder = make_competition(tmp_path / "comp", extra='\n[tables]\nenabled = true\n'
                              'who = "anyone"\nmax_open = 1\n')
    host = HostProcess(folder, None).start()
    try:
        (_, heuristic), _ = host.enter(("heuristic", "random"))
        with httpx.Client(base_url=host.url, timeout=60) as web:
            form = web.get(f"/tables/new?version={heuristic['id']}")
            csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
            assert csrf is not None, form.text[:500]
            r = web.post("/tables", data={"csrf": csrf.group(1), "version": heuristic["id"],
                                          "opponent": ["bot:random"]})
            assert r.status_code == 303, r.text[:500]
            state = r.headers["location"].replace("?k=", "/state?k=") + "&since=0"
            wait_for(lambda: web.get(state).json().get("turn"), 120, "the person's turn")
        assert host.proc is not None
        host.proc.send_signal(signal.SIGTERM)
        assert host.proc.wait(60) == 130
    finally:
        host.stop()
    log = host.log.read_text()
    assert "goaway" not in log and "Aborting method" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert stopped_line(folder) == log.splitlines()[-1]



def test_refused_uploads_still_count_after_a_restart(tmp_path: Path) -> None:
    """Three refused uploads of a day's quota of 3, a real host stopped and started again:
    the next upload is still refused before it is read, the three counted."""
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    toml.write_text(toml.read_text().replace("max_versions_per_day = 50",
                                             "max_versions_per_day = 3"))
    host = HostProcess(folder, None).start()
    try:
        ann = host.register("ann")
        codes = [host.submit(ann, b"not an archive").status_code for _ in range(2)]
        assert codes == [400, 400]
    finally:
        host.stop()
    assert host.proc is not None and host.proc.returncode is not None  # stopped
    host = HostProcess(folder, None).start()
    try:
        assert host.submit(ann, b"still not one").status_code == 400
        r = host.submit(ann, tar_folder(EXAMPLES / "random"))
        assert r.status_code == 429, r.text
        assert "0 new versions and 3 uploads that were refused in the last 24 hours" in \
            r.json()["detail"]
    finally:
        host.stop()
