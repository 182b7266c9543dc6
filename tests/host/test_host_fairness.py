"""Fairness between participants, against a real `moon host run` over HTTP, on SQLite and
PostgreSQL: open registration is limited (per client address and hour, and a cap on
participants), so one person cannot make account after account, each with its own
submission limits; and the build queue takes participants in turn, so one who submits
several versions does not hold everyone else's behind them."""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from host_support import (
    EXAMPLES,
    HostProcess,
    make_competition,
    sleepy_example,
    tar_folder,
    wait_for,
)

from arena.host.registrations import WINDOW_S


def register(h: HostProcess, name: str, address: str | None = None, **body: str):
    """POST /api/register as a client at ``address`` (the host trusts X-Forwarded-For from
    127.0.0.1, as behind a reverse proxy on its machine: uvicorn's default)."""
    headers = {"X-Forwarded-For": address} if address else {}
    token = body.pop("token", None)
    return h.call("POST", "/api/register", token, json={"name": name, **body},
                  headers=headers)


def test_open_registration_is_limited(tmp_path: Path, database: str | None) -> None:
    folder = make_competition(tmp_path / "comp", concurrency=1)
    path = folder / "competition.toml"
    text = path.read_text().replace('registration = "invite"', 'registration = "open"')
    text = text.replace("max_participants = 0", "max_participants = 8")
    path.write_text(text.replace("registrations_per_hour = 5", "registrations_per_hour = 2"))
    h = HostProcess(folder, database).start()
    try:
        # two an hour from one address, even of five sent at once; one more is refused,
        # saying when to try again
        names = [f"p{i}" for i in range(5)]
        with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
            codes = dict(zip(names, pool.map(lambda n: register(h, n).status_code, names),
                             strict=True))
        assert sorted(codes.values()) == [201, 201, 429, 429, 429], codes
        r = register(h, "p9")
        assert r.status_code == 429, r.text
        detail = r.json()["detail"]
        # the first of the two leaves the hour within the hour (less the seconds since)
        wait = int(r.headers["retry-after"])
        assert WINDOW_S - 120 < wait <= WINDOW_S, wait
        assert detail == (
            "too many registrations from your address: 2 in the last hour, the most this "
            "competition takes ([competition] registrations_per_hour = 2): try again in "
            f"{-(-wait // 60)} minutes, or ask the organiser for an invite code")
        # an IPv6 address counts by its /64: one machine has a whole /64 to choose from
        assert register(h, "q1", "2001:db8:0:1::1").status_code == 201
        assert register(h, "q2", "2001:db8:0:1::2").status_code == 201
        assert register(h, "q3", "2001:db8:0:1:ffff::9").status_code == 429
        # registrations with an invite code are the organiser's say-so: not counted
        for name in ("i1", "i2"):
            code = h.ok("POST", "/api/invites", h.admin)["code"]
            assert register(h, name, "198.51.100.1", invite=code).status_code == 201
        assert register(h, "r0", "198.51.100.1").status_code == 201
        # 7 participants now, max_participants = 8 whatever the address: of six sent at
        # once from six addresses, one takes the last place
        rs = [f"r{i}" for i in range(1, 7)]
        with concurrent.futures.ThreadPoolExecutor(len(rs)) as pool:
            codes.update(zip(rs, pool.map(lambda n: register(h, n, f"203.0.113.{n[1]}")
                                          .status_code, rs), strict=True))
        assert sorted(codes[n] for n in rs) == [201, 403, 403, 403, 403, 403], codes
        r = register(h, "r9", "198.51.100.9")
        assert r.status_code == 403, r.text
        assert r.json()["detail"] == (
            "this competition is full: it has 8 participants, the most it takes "
            "([competition] max_participants = 8); ask the organiser for an invite code")
        # an invite still registers, from the address over its hour, in a full competition
        code = h.ok("POST", "/api/invites", h.admin)["code"]
        assert register(h, "p9", invite=code).status_code == 201
        # the organiser registers anyone, with no invite, never limited
        assert register(h, "s1", token=h.admin).status_code == 201
        assert register(h, "s2", token=h.admin).status_code == 201
        # the refused registrations made no account (their names are free); the others did
        made = {n for n, c in codes.items() if c == 201} | {
            "q1", "q2", "i1", "i2", "r0", "p9", "s1", "s2"}
        assert len(made) == 2 + 8 + 1
        for name in sorted(made):
            assert register(h, name, token=h.admin).status_code == 409, name
        for name in sorted({*codes, "q3", "r9"} - made):
            assert register(h, name, token=h.admin).status_code == 201, name
    finally:
        h.stop()


def test_invite_registration_is_unchanged(tmp_path: Path, database: str | None) -> None:
    """registration = "invite" (the default): each code registers one participant, from
    any one address, however many; the open registration's limits do not apply."""
    folder = make_competition(tmp_path / "comp", concurrency=1)
    path = folder / "competition.toml"
    path.write_text(path.read_text().replace("max_participants = 0", "max_participants = 1")
                    .replace("registrations_per_hour = 5", "registrations_per_hour = 1"))
    h = HostProcess(folder, database).start()
    try:
        r = register(h, "nobody")
        assert r.status_code == 403 and "needs an invite code" in r.json()["detail"]
        r = register(h, "nobody", invite="not-a-code")
        assert r.status_code == 403 and "not valid" in r.json()["detail"]
        for i in range(4):
            h.register(f"invited{i}")
    finally:
        h.stop()


def gated_bot(tmp: Path, marker: Path) -> Path:
    """The random bot whose build waits until ``marker`` exists: the build queue fills up
    behind it meanwhile, whatever the machine's speed."""
    folder = tmp / "gated"
    shutil.copytree(EXAMPLES / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = folder / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "random"', 'name = "many"')
                    + f'build = "while [ ! -e {marker} ]; do sleep 0.1; done"\n')
    return folder


def one_builder(folder: Path) -> None:
    """``[runner] builders = 1``: one version built and validated at a time."""
    path = folder / "competition.toml"
    text = path.read_text()
    assert "builders = 2" in text  # what `moon host init` writes
    path.write_text(text.replace("builders = 2", "builders = 1"))


def kill_gated_builds(marker: Path) -> None:
    """Kill a build still waiting for ``marker`` (a test that failed leaves one)."""
    for pid in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if pid.name.isdigit() and str(marker).encode() in (pid / "cmdline").read_bytes():
                os.kill(int(pid.name), signal.SIGKILL)


@pytest.mark.one_database
def test_a_slow_build_holds_back_no_other_bot_and_a_bots_versions_go_in_order(
        tmp_path: Path, database: str | None) -> None:
    """With the default two builders, Ann's version whose build waits for a marker holds
    back neither Bob's bot, which is built, validated and playing meanwhile, nor the
    order of Ann's own versions: her second waits for her first (with one builder, Bob
    waited for Ann's build, however long it took)."""
    marker = tmp_path / "release-the-build"
    folder = make_competition(tmp_path / "comp", concurrency=1)
    h = HostProcess(folder, database).start()
    try:
        ann, bob = h.register("ann"), h.register("bob")
        bot = gated_bot(tmp_path, marker)
        a1 = h.submit(ann, tar_folder(bot, edit="ann 1")).json()["id"]
        a2 = h.submit(ann, tar_folder(bot, edit="ann 2")).json()["id"]
        b1 = h.submit(bob, tar_folder(EXAMPLES / "weak", rename="bobbot")).json()["id"]
        assert h.wait_version(bob, b1, timeout=600)["status"] == "active"
        status = {v: h.ok("GET", f"/api/versions/{v}", ann)["status"] for v in (a1, a2)}
        assert status == {a1: "building", a2: "pending"}, status
        marker.touch()
        h.wait_version(ann, a2, timeout=600)
        done = {v: h.ok("GET", f"/api/versions/{v}", ann) for v in (a1, a2)}
        # the second went after the first (its build started later) and replaced it
        assert done[a1]["build_started_at"] < done[a2]["build_started_at"], done
        assert (done[a1]["status"], done[a2]["status"]) == ("retired", "active"), done
    finally:
        marker.touch()
        h.stop()
        kill_gated_builds(marker)


@pytest.mark.one_database
def test_the_build_queue_takes_participants_in_turn(tmp_path: Path,
                                                    database: str | None) -> None:
    """Ann submits three versions, then Bob one and Cat one: the queue takes Ann's first,
    then Bob's and Cat's, then Ann's other two (in arrival order it took all of Ann's
    first, so Bob and Cat waited for three builds and validations)."""
    marker = tmp_path / "release-the-build"
    folder = make_competition(tmp_path / "comp", concurrency=1)
    one_builder(folder)
    h = HostProcess(folder, database).start()
    try:
        ann, bob, cat = h.register("ann"), h.register("bob"), h.register("cat")
        bot = gated_bot(tmp_path, marker)
        order: list[tuple[str, int]] = []
        for i in range(3):
            r = h.submit(ann, tar_folder(bot, edit=f"ann {i}"))
            assert r.status_code == 201, r.text
            order.append((ann, r.json()["id"]))
        for token, name, example in ((bob, "bobbot", "random"), (cat, "catbot", "weak")):
            r = h.submit(token, tar_folder(EXAMPLES / example, rename=name))
            assert r.status_code == 201, r.text
            order.append((token, r.json()["id"]))
        a1, a2, a3, b1, c1 = (v for _, v in order)
        # Ann's first is being built (its build waits for the marker); the rest wait
        status = {v: h.ok("GET", f"/api/versions/{v}", t)["status"] for t, v in order}
        assert status[a2] == status[a3] == status[b1] == status[c1] == "pending", status
        marker.touch()
        done = {v: h.wait_version(t, v, timeout=600) for t, v in order}
        assert all(d["status"] in ("active", "retired") for d in done.values()), done
        started = {v: d["build_started_at"] for v, d in done.items()}
        by_start = sorted(started, key=lambda v: started[v])
        names = {a1: "ann 1", a2: "ann 2", a3: "ann 3", b1: "bob 1", c1: "cat 1"}
        assert [names[v] for v in by_start] == ["ann 1", "bob 1", "cat 1", "ann 2", "ann 3"], \
            started
    finally:
        marker.touch()
        h.stop()
        kill_gated_builds(marker)


@pytest.mark.parametrize("address,key", [
    ("203.0.113.9", "203.0.113.9"), ("::ffff:203.0.113.9", "203.0.113.9"),
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"), ("2001:db8:1:2::", "2001:db8:1:2::/64"),
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"), (None, "unknown")])
def test_client_key(address: str | None, key: str) -> None:
    from arena.host.registrations import client_key

    assert client_key(address) == key


def slow_bot(tmp: Path, flag: Path) -> Path:
    """The random bot thinking 0.8 s a decision (inside the competitions' 1 s) in the games
    it starts while ``flag`` exists (a game it was playing then stays fast, and soon over):
    legal, but those games last some 30 s against the others' one. The
    test makes ``flag`` once every bot is validated: its validation game, at that pace, was
    30 s of waiting for nothing the test checks, and its games with the first bots
    validated (all its own while two are active) filled both slots for two minutes more,
    the others' validation games waiting behind them."""
    folder = sleepy_example(tmp / "slow", "random", 0.8, flag, whole_games=True)
    (folder / "bot.toml").write_text((folder / "bot.toml").read_text().replace(
        'name = "random"', 'name = "slowbot"'))
    return folder


@pytest.mark.one_database
def test_a_slow_bot_sits_in_at_most_half_the_running_games(tmp_path: Path,
                                                            database: str | None) -> None:
    """Five bots, one slow, two game slots: while the slow bot plays, the other slot
    plays the others' games (a version sits in at most half the running games, rounded
    up: one of two). Before, a set with the slow bot filled both slots with its long
    games (all of a set's games hold the same bots), and the host's games per minute fell
    some twentyfold."""
    folder = make_competition(tmp_path / "comp", concurrency=2)
    slow = tmp_path / "slow-now"
    h = HostProcess(folder, database).start()
    try:
        owners = {}
        for name, folder_ in (("slowbot", slow_bot(tmp_path, slow)), ("r1", EXAMPLES / "random"),
                              ("r2", EXAMPLES / "random"), ("w1", EXAMPLES / "weak"),
                              ("w2", EXAMPLES / "weak")):
            token = h.register(f"owner-{name}")
            r = h.submit(token, tar_folder(folder_, rename=name))
            assert r.status_code == 201, r.text
            owners[name] = (token, r.json()["id"])
        _, slow_id = owners["slowbot"]
        for token, v in owners.values():
            assert h.wait_version(token, v, timeout=600)["status"] == "active"
        slow.touch()  # slow from its next decision on, in whatever game

        def running() -> list[dict]:
            return h.ok("GET", "/api/games?status=running&limit=500")["games"]

        def finished() -> list[dict]:
            return h.ok("GET", "/api/games?status=finished&limit=500")["games"]

        def has_slow(g: dict) -> bool:
            return slow_id in [x["version_id"] for x in g["seats"]]

        # from the moment a game of the slow bot that started after it was made slow
        # runs until it is over: never two of its games at once, and the others' games
        # go on meanwhile (those finished since)
        started_fast = {g["id"] for g in running()}
        first = wait_for(lambda: next((g for g in running() if has_slow(g)
                                       and g["id"] not in started_fast), None),
                         300, "a game of the slow bot")
        done_before = {g["id"] for g in finished()}
        seen_at_once, others_done = 0, set()
        while True:
            now = running()
            seen_at_once = max(seen_at_once, len([g for g in now if has_slow(g)]))
            done = finished()
            others_done |= {g["id"] for g in done
                            if not has_slow(g) and g["id"] not in done_before}
            if first["id"] in {g["id"] for g in done} or len(others_done) >= 12:
                break
            time.sleep(0.2)
        assert seen_at_once == 1, f"{seen_at_once} games of the slow bot ran at once"
        assert len(others_done) >= 6, others_done  # the other slot kept playing
    finally:
        h.stop()
