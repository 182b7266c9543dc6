"""Submissions sent at once by one participant, against a real `moon host run` over HTTP:
each is checked against the quota and numbered as if sent one after another. Before, the
quota's count and the new version's number were read and written apart, so a dozen
submissions at once got past ``max_versions_per_day``, took the same version number (a
500 from the database's unique constraint) or raced to make one new bot (a 409 to its own
owner)."""

from __future__ import annotations

import concurrent.futures
import re

import httpx
import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder

PER_DAY = 3
AT_ONCE = 12


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory):
    folder = make_competition(tmp_path_factory.mktemp("race") / "comp", concurrency=1)
    path = folder / "competition.toml"
    text = re.sub(r"(?m)^max_waiting = \d+", "max_waiting = 100", path.read_text())
    path.write_text(re.sub(r"(?m)^max_versions_per_day = \d+",
                           f"max_versions_per_day = {PER_DAY}", text))
    h = HostProcess(folder, None).start()
    try:
        yield h
    finally:
        h.stop()


def at_once(host: HostProcess, token: str, archives: list[bytes]) -> list[httpx.Response]:
    with concurrent.futures.ThreadPoolExecutor(len(archives)) as pool:
        return list(pool.map(lambda a: host.submit(token, a), archives))


@pytest.mark.parametrize("who", ["ann", "ben", "cat", "dan"])
def test_submissions_at_once_keep_the_quota_and_the_numbers(host: HostProcess,
                                                            who: str) -> None:
    token = host.register(who)
    archives = [tar_folder(EXAMPLES / "random", rename=f"{who}bot", edit=f"v{i}")
                for i in range(AT_ONCE)]
    answers = at_once(host, token, archives)
    codes = sorted(r.status_code for r in answers)
    # PER_DAY new versions, every other one refused by the quota: nothing else
    assert codes == [201] * PER_DAY + [429] * (AT_ONCE - PER_DAY), \
        [(r.status_code, r.text[:200]) for r in answers]
    made = [r.json() for r in answers if r.status_code == 201]
    assert sorted(v["number"] for v in made) == [1, 2, 3]
    bot = host.ok("GET", f"/api/bots/{who}bot")
    assert len(bot["versions"]) == PER_DAY


def test_one_archive_sent_at_once_is_one_version(host: HostProcess) -> None:
    token = host.register("eve")
    archive = tar_folder(EXAMPLES / "random", rename="evebot")
    answers = at_once(host, token, [archive] * AT_ONCE)
    codes = sorted(r.status_code for r in answers)
    assert codes == [200] * (AT_ONCE - 1) + [201], [(r.status_code, r.text[:200])
                                                    for r in answers]
    assert {r.json()["id"] for r in answers} == {answers[0].json()["id"]}
    assert [v["number"] for v in host.ok("GET", "/api/bots/evebot")["versions"]] == [1]
