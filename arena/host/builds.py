"""The build and validation gate of a new version.

1. **Build** in the competition's sandbox (:func:`arena.sandbox.build`: the image of a
   Docker bot, its ``build`` command for a trusted local one) with a time limit; the log is
   kept for the version's owner.
2. **Validate**: one complete game against the host's reference bots over the real
   protocol (a fresh process or container per seat, as in rated games). The version passes
   only if its seat had no fault at all (a timeout forgiven by the bank still counts: a
   bot that needs the bank in its first game is not ready). Each seat is judged, not the
   game: a game that "ended fine" on a hand limit still fails a version that faulted. A
   fault of a reference bot is the host's problem, not the version's: the game is voided,
   the version waits, and the host logs an error (a canary).

A failing version is rejected with the reason; the version before it stays active.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .. import sandbox
from ..bots import BotSpec
from ..errors import ConfigError
from .executor import FinishedGame, name_of

LOG_LIMIT = 256 * 1024
"""Most of a build log kept (its end), bytes."""


def build_version(spec: BotSpec, log_path: Path, timeout_s: float,
                  docker_limits: object | None = None) -> str | None:
    """Build ``spec`` (its runner says how); the log goes to ``log_path``. Returns why the
    build failed (one line), or None.

    Raises:
        sandbox.SandboxError: no Docker engine answers (the host's failure: try later).
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    limits = docker_limits
    if spec.runner == "docker" and limits is not None:
        limits = dataclasses.replace(limits, build_timeout_s=timeout_s)  # type: ignore[type-var]
    try:
        out = sandbox.build(spec, docker_limits=limits, log_path=log_path,  # type: ignore[arg-type]
                            timeout_s=timeout_s)
    except ConfigError as e:
        if sandbox.is_infrastructure_error(e):
            raise
        text = str(e) + "\n" + str(getattr(e, "log", "") or "")
        log_path.write_text(text[-LOG_LIMIT:])
        first = next((x for x in str(e).splitlines() if x.strip()), "build failed")
        return f"build failed: {first}"
    log_path.write_text((out or "(no build step: nothing to build)\n")[-LOG_LIMIT:])
    return None


def validation_verdict(game: FinishedGame, seats: set[int]) -> str | None:
    """Why the version in ``seats`` fails its validation game, or None if it passed."""
    mine = [f for f in game.faults if f.seat in seats]
    if not mine:
        return None
    f = mine[0]
    return (f"validation game {game.request.game_id}: seat {f.seat} {name_of(f.reason)}"
            + (f" ({f.detail})" if f.detail else "")
            + (", forfeit" if f.forfeit else ""))
