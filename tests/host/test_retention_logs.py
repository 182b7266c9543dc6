"""Retention of seat logs (arena.host.retention.Retention.cut_logs), in process on a real
competition's database (SQLite and PostgreSQL): a version's logs of its last
``full_logs`` finished games stay whole, the one just past them is cut to its last 8 KiB
after a line saying so."""

from __future__ import annotations

from pathlib import Path

from host_support import add_active_versions, open_in_process

from arena.host.models import Game, GameSeat
from arena.host.retention import Retention, cut_log, seat_log_path
from arena.host.writer import Writer

TAIL = 8 * 1024
SIZE = 20_000


def log_text(gid: str, seat: int) -> bytes:
    line = f"{gid} seat {seat}: thinking\n".encode()
    return (line * (SIZE // len(line) + 1))[:SIZE]


def test_a_versions_logs_past_its_last_games_are_cut_to_the_tail(
        tmp_path: Path, database: str | None) -> None:
    host = open_in_process(tmp_path / "comp", database=database)
    ids = add_active_versions(host, "abc")
    a, b, c = ids["a"], ids["b"], ids["c"]
    with host.Session.begin() as s:
        # g1..g5 in result order; "c" plays g1 and g5 only
        plays = {"g1": (a, b, c), "g2": (a, b, b), "g3": (a, b, b), "g4": (a, b, b),
                 "g5": (a, b, c)}
        for gid, seats in plays.items():
            g = Game(id=gid, seed=1, status="running")
            g.seats = [GameSeat(seat=i, version_id=v, side=i) for i, v in enumerate(seats)]
            s.add(g)
    (host.record_dir / "logs").mkdir(parents=True, exist_ok=True)
    for gid in plays:
        for seat in range(3):
            seat_log_path(host.record_dir, gid, seat).write_bytes(log_text(gid, seat))

    def finish(ret: Retention, gid: str) -> int:
        with host.Session.begin() as s:
            g = s.get(Game, gid)
            assert g is not None
            g.status, g.seq = "finished", int(gid[1:])
        return ret.cut_logs(gid)

    def whole(gid: str, seat: int) -> bool:
        return seat_log_path(host.record_dir, gid, seat).read_bytes() == log_text(gid, seat)

    ret = Retention(host.Session, Writer(), host.record_dir, 3, 2, 0)
    assert finish(ret, "g1") == 0 and finish(ret, "g2") == 0
    assert finish(ret, "g3") == 2  # g1's seats of a (0) and b (1); c has one game
    cut = (f"[... {SIZE - TAIL} bytes cut by the host: a version's logs are kept whole for "
           "its last 2 games ...]\n").encode() + log_text("g1", 0)[-TAIL:]
    assert seat_log_path(host.record_dir, "g1", 0).read_bytes() == cut
    assert whole("g1", 2) and all(whole(g, seat) for g in ("g2", "g3") for seat in range(3))
    # a new start reads each version's last games from the database
    again = Retention(host.Session, Writer(), host.record_dir, 3, 2, 0)
    assert finish(again, "g4") == 3  # g2's seats of a and b; g1's, cut already, stay so
    assert seat_log_path(host.record_dir, "g1", 0).read_bytes() == cut
    assert not any(whole("g2", seat) for seat in range(3))
    assert finish(again, "g5") == 3  # g3's seats of a and b; c keeps g1 and g5 whole
    assert not any(whole("g3", seat) for seat in range(3))
    assert whole("g1", 2) and all(whole(g, seat) for g in ("g4", "g5") for seat in range(3))
    host.close()


def test_a_short_log_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "g.seat0.log"
    path.write_bytes(b"x" * (TAIL + 256))
    assert not cut_log(path, TAIL, 2) and path.read_bytes() == b"x" * (TAIL + 256)
    assert not cut_log(tmp_path / "missing.log", TAIL, 2)
