"""The build and validation gate of a new version: the checks of `moon bot check`
(:mod:`arena.check.conformance`), one code path, so that a bot that passes the check on its
author's machine passes the gate.

1. **Build** in the competition's sandbox (:func:`arena.check.conformance.build_bot`: the image of
   a Docker bot, its ``build`` command for a trusted local one) with a time limit; the log
   is kept for the version's owner, with a warning line for a ``language`` the arena
   does not know (:func:`arena.bots.manifest.language_warning`: informative, never a refusal).
2. **Validate** (:meth:`arena.host.service.Host._gate`): the check's games
   (:func:`arena.check.conformance.check_games`) under the competition's rules and time control, the
   reference bots as the opponents: one hand against itself (the dealer forced to bid; an
   answer refused on purpose), a dropped stream (it must rejoin), and one complete game
   against the reference bots, recorded as the version's validation game. Each game is
   judged on the version's seats alone (:func:`arena.check.conformance.judge`): any fault fails it
   (a timeout forgiven by the bank still counts). As in `moon bot check`, once the bot
   fails its hand against itself the games after it are skipped
   (:func:`arena.check.conformance.blocks_the_rest`; a ``skip:`` line each in the log). A fault of
   a reference bot is the host's problem, not the version's: the game is voided, the
   version waits, and the host logs an error (a canary).

A failing version is rejected with the reason (the failed check and its problem line); the
version before it stays active.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path
from typing import Any

from ..bots.manifest import BotSpec
from ..check.conformance import LOG_LIMIT, build_bot


def build_version(spec: BotSpec, log_path: Path, timeout_s: float,
                  docker_limits: Any = None) -> str | None:
    """Build ``spec`` (:func:`arena.check.conformance.build_bot`); the log goes to ``log_path``.
    Returns why the build failed (one line), or None.

    Raises:
        InfrastructureError: no Docker engine answers (the host's failure: try later).
    """
    return build_bot(spec, log_path, timeout_s, docker_limits)


async def build_version_async(spec: BotSpec, log_path: Path, timeout_s: float,
                              docker_limits: Any = None) -> str | None:
    """:func:`build_version` in a daemon thread of its own: a host that stops (Ctrl-C,
    SIGTERM) while a build runs exits without waiting for it (the asyncio default
    executor's threads are waited for at exit, so a build of minutes held a stop for
    minutes); the version stays ``building`` and is built again at the next start
    (:meth:`arena.host.service.Host.recover`). A Docker build is cancelled by the engine
    when the host's connection closes.

    Raises:
        InfrastructureError: no Docker engine answers (the host's failure: try later).
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str | None] = loop.create_future()

    def settle(fn: Any, value: Any) -> None:
        if not done.done():
            fn(value)

    def work() -> None:
        try:
            why = build_version(spec, log_path, timeout_s, docker_limits)
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, done.set_exception, e)
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, done.set_result, why)

    threading.Thread(target=work, name=f"build-{spec.name}", daemon=True).start()
    return await done


__all__ = ["LOG_LIMIT", "build_version", "build_version_async"]
