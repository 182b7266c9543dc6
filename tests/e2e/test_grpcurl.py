"""A real third-party gRPC client, grpcurl, against `moon serve`: it lists the services
through server reflection, checks health, and creates a match (JSON in, JSON out) that bots
then play to the end, and cancels another.

grpcurl is installed into tools/bin by `make grpcurl` (`make test` does it); without it
(no go toolchain) these tests are skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_support import EXAMPLES, ROOT, moon_serve

from arena.records.record import load_record, verify_record

GRPCURL = ROOT / "tools" / "bin" / "grpcurl"


def grpcurl_path() -> str:
    if GRPCURL.is_file():
        return str(GRPCURL)
    found = shutil.which("grpcurl")
    if found is None:
        pytest.skip("grpcurl is not installed: `make grpcurl` installs it into tools/bin "
                    "(needs the go toolchain)")
    return found


ADMIN_TOKEN = "grpcurl-test-token"
"""The token `moon serve` is started with; every call carries it."""


class Server:
    def __init__(self, address: str, records: Path) -> None:
        self.address = address
        self.records = records
        self.grpcurl = grpcurl_path()

    def call(self, *args: str, data: dict | None = None) -> subprocess.CompletedProcess[str]:
        argv = [self.grpcurl, "-plaintext", "-max-time", "60",
                "-H", f"authorization: Bearer {ADMIN_TOKEN}"]
        if data is not None:
            argv += ["-d", json.dumps(data)]
        done = subprocess.run([*argv, self.address, *args], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, f"grpcurl {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done

    def json(self, method: str, data: dict) -> dict:
        return json.loads(self.call(method, data=data).stdout)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    grpcurl_path()  # skip before starting anything
    tmp = tmp_path_factory.mktemp("serve")
    with moon_serve(tmp, "--admin-token", ADMIN_TOKEN) as served:
        yield Server(served.address, tmp / "records")


def test_grpcurl_lists_services_through_reflection(server: Server) -> None:
    services = server.call("list").stdout.split()
    for name in ("moon.v1.BotService", "moon.v1.MatchService", "grpc.health.v1.Health"):
        assert name in services
    described = server.call("describe", "moon.v1.MatchService").stdout
    assert "rpc CreateMatch ( .moon.v1.CreateMatchRequest )" in described
    message = server.call("describe", "moon.v1.Turn").stdout
    assert "repeated .moon.v1.Action legal_actions" in message


def test_grpcurl_checks_health(server: Server) -> None:
    assert server.json("grpc.health.v1.Health/Check", {}) == {"status": "SERVING"}
    status = server.json("grpc.health.v1.Health/Check", {"service": "moon.v1.MatchService"})
    assert status == {"status": "SERVING"}


def test_grpcurl_creates_a_match_that_bots_play(server: Server, tmp_path: Path) -> None:
    created = server.json("moon.v1.MatchService/CreateMatch", {
        "ruleset": {"preset": "moon3"},
        "seed": "4242",
        "seats": [{"name": "heuristic", "version": "1.0"}] * 3,
        "timeControl": {"startupMs": 60000},
        "matchId": "grpcurl-play",
    })
    match = created["match"]
    assert match["match_id"] == "grpcurl-play"
    assert match["status"] == "MATCH_STATUS_WAITING"
    # the seed would reveal every deal: it is shown only once the match is over
    assert match["ruleset"]["players"] == 3 and "seed" not in match
    tokens = {t.get("seat", 0): t["token"] for t in created["tokens"]}
    assert sorted(tokens) == [0, 1, 2]
    # three bots join with the tokens grpcurl got, and play the game out
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOON_")}
    bots = [subprocess.Popen([sys.executable, "bot.py"], cwd=EXAMPLES / "heuristic",
                             env={**env, "MOON_ADDRESS": server.address,
                                  "MOON_TOKEN": tokens[seat]},
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for seat in range(3)]
    try:
        for bot in bots:
            _, err = bot.communicate(timeout=240)
            assert bot.returncode == 0, err
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait()
    done = server.json("moon.v1.MatchService/GetMatch", {"matchId": "grpcurl-play"})["match"]
    assert done["status"] == "MATCH_STATUS_FINISHED" and done["seed"] == "4242"
    assert done["result"]["termination"] in ("TERMINATION_TARGET", "TERMINATION_MOON")
    assert Path(done["record_path"]) == server.records / "grpcurl-play.json"
    record = load_record(Path(done["record_path"]))
    assert verify_record(record) == []


def test_grpcurl_cancels_a_match(server: Server) -> None:
    server.json("moon.v1.MatchService/CreateMatch", {
        "seats": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "matchId": "grpcurl-cancel"})
    listed = server.json("moon.v1.MatchService/ListMatches", {})["matches"]
    assert "grpcurl-cancel" in [m["match_id"] for m in listed]
    cancelled = server.json("moon.v1.MatchService/CancelMatch",
                            {"matchId": "grpcurl-cancel", "reason": "test over"})["match"]
    assert cancelled["status"] == "MATCH_STATUS_FINISHED"
    assert cancelled["result"]["termination"] == "TERMINATION_CANCELLED"
