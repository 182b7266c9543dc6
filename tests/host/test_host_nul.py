"""Addresses with a NUL character (``%00``), against a real `moon host run` on SQLite and
on PostgreSQL: no name, id or filter holds one, so each gets the API's clear 422 or the
pages' Not found. Before, PostgreSQL refused the query's text ("cannot contain NUL"), and
every such address was a 500 with a traceback in the host's log."""

from __future__ import annotations

from pathlib import Path

import pytest
from host_support import HostProcess, make_competition

API = ["/api/games?bot=a%00", "/api/games?termination=%00", "/api/games/s1-0%00",
       "/api/games/%00/record", "/api/games/%00/logs/0", "/api/bots/%00",
       "/api/versions/1?x=%00"]
PAGES = ["/bots/%00", "/games/%00", "/games?bot=%00", "/games/%00/events",
         "/games/%00/stderr/0"]


@pytest.fixture
def host(tmp_path: Path, database: str | None):
    h = HostProcess(make_competition(tmp_path / "comp", concurrency=1), database).start()
    try:
        yield h
    finally:
        h.stop()


def test_a_nul_in_an_address_is_a_clear_refusal(host: HostProcess) -> None:
    for path in API:
        r = host.call("GET", path, host.admin)
        assert r.status_code == 422, (path, r.status_code, r.text[:300])
        assert "NUL character" in r.json()["detail"], path
    for path in PAGES:
        r = host.call("GET", path)
        assert r.status_code == 404, (path, r.status_code, r.text[:300])
        assert "Not found" in r.text, path
    # the same addresses without the NUL are answered as before
    assert host.call("GET", "/api/games?bot=a").status_code == 200
    assert host.call("GET", "/api/bots/a").status_code == 404
    host.stop()
    assert "Traceback" not in host.log.read_text()
