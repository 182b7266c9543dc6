"""Spectators' live event streams (``/games/ID/events``) against a real `moon host run`:
one client address may hold only a few at once, and the host only so many. Before, one
client could hold any number, and each read the database on the event loop that keeps the
games' clocks (400 streams on a queued game: every page and API answer took 1-5 s)."""

from __future__ import annotations

import re
import shutil
import socket
from pathlib import Path

import httpx
import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

from arena.host.pages.live import STREAMS_MAX, STREAMS_PER_CLIENT

SLEEP_S = 45
"""How long the sleepy bot sleeps before it connects, once told to: each of its games runs
at least this long, time for the test's streams."""


def sleepy_bot(folder: Path, flag: Path, asleep: Path) -> Path:
    """The random bot, sleeping :data:`SLEEP_S` before it starts while ``flag`` exists,
    with a line appended to ``asleep`` first."""
    shutil.copytree(EXAMPLES / "random", folder)
    bot = folder / "bot.py"
    bot.write_text(f"import os, time\nif os.path.exists({str(flag)!r}):\n"
                   f"    with open({str(asleep)!r}, 'a') as f:\n"
                   f"        f.write(str(os.getpid()) + '\\n')\n"
                   f"    time.sleep({SLEEP_S})\n" + bot.read_text())
    return folder


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory):
    folder = make_competition(tmp_path_factory.mktemp("streams") / "comp", concurrency=1)
    path = folder / "competition.toml"
    path.write_text(re.sub(r"(?m)^startup_ms = \d+", f"startup_ms = {(SLEEP_S + 20) * 1000}",
                           path.read_text()))
    h = HostProcess(folder, None).start()
    try:
        yield h
    finally:
        h.stop()


def organiser_cookie(host: HostProcess) -> str:
    """A ``Cookie`` header's value for a web session of the organiser's, who may watch
    every game live (a visitor's stream of a game whose set has other games still to be
    played is refused: :mod:`arena.host.embargo`)."""
    form = httpx.get(host.url + "/signin")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert csrf is not None
    r = httpx.post(host.url + "/signin", data={"token": host.admin, "csrf": csrf.group(1)},
                   cookies=form.cookies)
    assert r.status_code == 303, r.text
    return "; ".join(f"{k}={v}" for k, v in {**form.cookies, **r.cookies}.items())


def open_stream(host: HostProcess, game: str, cookie: str, client: str | None = None
                ) -> tuple[socket.socket, int, bytes]:
    """A stream of ``game``'s events, left open and unread past its answer's head: the
    socket, the status code and the head (``client``: the address a proxy on 127.0.0.1
    says it is for, in X-Forwarded-For), with a web session's ``cookie``."""
    port = int(host.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    extra = f"X-Forwarded-For: {client}\r\n" if client else ""
    extra += f"Cookie: {cookie}\r\n"
    sock.sendall(f"GET /games/{game}/events HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    code = int(head.split(b" ", 2)[1])
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    if code != 200 and length:  # a refusal: its body too
        while len(head.split(b"\r\n\r\n", 1)[1]) < int(length.group(1)):
            head += sock.recv(4096)
    return sock, code, head


def test_a_client_and_the_host_hold_a_few_streams(host: HostProcess, tmp_path: Path) -> None:
    flag, asleep = tmp_path / "sleep", tmp_path / "asleep"
    alice = host.register("alice")
    for name in ("sleepy", "drowsy"):
        r = host.submit(alice, tar_folder(sleepy_bot(tmp_path / name, flag, asleep),
                                          rename=name))
        assert r.status_code == 201, r.text
        assert host.wait_version(alice, r.json()["id"], 300)["status"] == "active"
    flag.touch()
    # One game slot, and both versions in every game: the matchmaker marks a game running
    # (before its bots start) only once the one before it has left `running`, so the one
    # running once a bot has said it sleeps is that bot's, in its start-up for SLEEP_S.
    # (The first game started a second after the flag, by its started_at in whole
    # seconds, waited SLEEP_S more whenever a game started in between: its bots slept
    # too, holding the slot.)
    wait_for(asleep.exists, 120, "a bot of the sleepy ones asleep")

    def sleeping_game() -> str | None:
        games = host.ok("GET", "/api/games?status=running")["games"]
        assert len(games) <= 1, games
        return games[0]["id"] if games else None

    game = wait_for(sleeping_game, 30, "the rated game of the sleeping bot")
    organiser = organiser_cookie(host)
    held = []
    try:
        for _ in range(STREAMS_PER_CLIENT):
            sock, code, head = open_stream(host, game, organiser)
            held.append(sock)
            assert code == 200, head
        sock, code, head = open_stream(host, game, organiser)  # one more
        sock.close()
        assert code == 429, head
        assert f"{STREAMS_PER_CLIENT} live game streams open".encode() in head, head
        # another client (behind the same proxy) is not refused
        other, code, head = open_stream(host, game, organiser, client="10.1.2.3")
        other.close()
        assert code == 200, head
        # a stream closed gives its place back
        held.pop().close()

        def again() -> bool:
            sock, code, _ = open_stream(host, game, organiser)
            held.append(sock)
            return code == 200

        wait_for(again, 20, "a stream's place to be given back")
        # the host's own limit: other clients fill it, STREAMS_PER_CLIENT each
        for i in range(STREAMS_MAX - STREAMS_PER_CLIENT):
            sock, code, head = open_stream(host, game, organiser,
                                           client=f"10.9.{i // STREAMS_PER_CLIENT}.1")
            held.append(sock)
            assert code == 200, (i, head)
        sock, code, head = open_stream(host, game, organiser, client="10.8.0.1")
        sock.close()
        assert code == 503, head
        assert f"the host has {STREAMS_MAX} live game streams open".encode() in head, head
    finally:
        for s in held:
            s.close()
    assert host.ok("GET", f"/api/games/{game}")["status"] == "running"  # still its start-up
