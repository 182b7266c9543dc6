"""How every `moon` command stops: SIGINT (Ctrl-C) and SIGTERM alike, with one line on
stderr saying what was kept and what goes on, and exit code :data:`STOPPED_EXIT`.

A command says what a stop would leave as it goes (:func:`saying`: "the build goes on at
the host"); :class:`arena.cli.ArenaGroup` turns the ``KeyboardInterrupt`` a signal raises
into that line (:func:`stopped`), never click's "Aborted!" nor a traceback. A command's
event loop is run by :func:`run`: the first signal cancels its main task while the loop
waits (its ``finally`` blocks and context managers stop the referee, the bots, the fork
server); while the loop is busy it asks on the loop's next turn, and raises
``KeyboardInterrupt`` only if the loop has not turned within :data:`GRACE_S` (blocking
code, a build, which only that can stop); a second signal always raises.
"""

from __future__ import annotations

import asyncio
import selectors
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TypeVar

import click

from ..core.text import clean_line

T = TypeVar("T")

STOPPED_EXIT = 130
"""The exit code of a command stopped by SIGINT or SIGTERM (the shell's for Ctrl-C)."""
STOPPED = "stopped"
"""What a stop says when the command said nothing more precise."""
SIGNALS = (signal.SIGINT, signal.SIGTERM)

_line: str | Callable[[], str] = STOPPED
_main: asyncio.Task[Any] | None = None
_signals = 0


def saying(line: str | Callable[[], str]) -> None:
    """From now on, a stop says ``line`` (or what ``line()`` returns then)."""
    global _line
    _line = line


def _idle(frame: FrameType | None) -> bool:
    """Whether the signal found the event loop waiting in its selector (so cancelling its
    main task stops it at once), not running a coroutine's blocking code."""
    return frame is not None and frame.f_code.co_filename == selectors.__file__


GRACE_S = 1.0
"""How long a busy event loop has to take its main task's cancel before blocking code
that keeps it from turning is interrupted (:func:`_on_alarm`)."""
_turned = False


def _cancel_on_loop(task: asyncio.Task[Any]) -> None:
    global _turned
    _turned = True
    task.cancel()


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    """A signal found the loop busy :data:`GRACE_S` ago: if it has not turned since (a
    build's wait), nothing but an exception there stops it."""
    if not _turned:
        raise KeyboardInterrupt


def _on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGINT's and SIGTERM's handler (see the module's docstring)."""
    global _signals, _turned
    _signals += 1
    task = _main
    if _signals == 1 and task is not None and not task.done():
        if _idle(frame):
            task.cancel()
            task.get_loop().call_soon_threadsafe(lambda: None)  # wake the selector
            return
        # busy: an exception raised here would land in whatever the loop runs (a game's
        # clean-up, say); ask on the loop's next turn, and interrupt only a loop that does
        # not turn within GRACE_S (blocking code)
        _turned = False
        task.get_loop().call_soon_threadsafe(_cancel_on_loop, task)
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, GRACE_S)
        return
    raise KeyboardInterrupt


@contextmanager
def handling() -> Iterator[None]:
    """SIGINT and SIGTERM handled as the module says while the block runs (the main
    thread's; the handlers before are put back after, so an in-process caller such as
    click's test runner keeps its own)."""
    global _line, _signals, _main
    _line, _signals, _main = STOPPED, 0, None
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are the main thread's: nothing to handle here
        return
    before = {s: signal.getsignal(s) for s in (*SIGNALS, signal.SIGALRM)}
    for s in SIGNALS:
        signal.signal(s, _on_signal)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for s, h in before.items():
            signal.signal(s, h)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, stopped by a signal as the module says.

    Raises:
        KeyboardInterrupt: a signal stopped it (after the coroutine's clean-up ran).
    """

    async def main() -> T:
        global _main
        _main = asyncio.current_task()
        try:
            return await coro
        finally:
            _main = None

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if _signals:
            raise KeyboardInterrupt from None
        raise


def _said() -> str:
    """What :func:`saying` set, now; :data:`STOPPED` if working it out failed."""
    if not callable(_line):
        return _line
    try:
        return _line()
    except Exception:  # a stop must end with its line, never a traceback
        return STOPPED


def stopped(line: str | None = None) -> NoReturn:
    """Say ``line`` (else what :func:`saying` set) on stderr as the command's last line, and
    exit with :data:`STOPPED_EXIT`; further signals are ignored meanwhile."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    text = line if line is not None else _said()
    lead = "\n" if sys.stderr.isatty() else ""  # past the terminal's ^C
    click.echo(lead + text, err=True)
    raise SystemExit(STOPPED_EXIT)


def results_kept(kept: int, results: Path) -> str:
    """The line a stopped ladder or match ends with: what its results file keeps (every
    game there has its record) and that the games in flight are in neither.

    >>> results_kept(3, Path("runs/demo.sqlite"))  # doctest: +NORMALIZE_WHITESPACE
    'interrupted: 3 finished game(s) are kept in runs/demo.sqlite, each with its record;
    the games in flight are not (no result, no record): run the same command again to
    resume'
    """
    return (f"interrupted: {kept} finished game(s) are kept in {clean_line(str(results))}, "
            "each with its record; the games in flight are not (no result, no record): run "
            "the same command again to resume")


__all__ = ["STOPPED", "STOPPED_EXIT", "handling", "results_kept", "run", "saying", "stopped"]
