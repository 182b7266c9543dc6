"""A reference bot that faults judges nobody. (A version that forfeits ``forfeit_limit``
rated games in a row, disabled with the reason for its owner while the others play on, is
checked in the flow on both databases, tests/host/test_host_final.py.)"""

from __future__ import annotations

from pathlib import Path

from host_support import (
    EXAMPLES,
    HostProcess,
    make_competition,
    tar_folder,
    wait_for,
)


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
