"""arena/cli/stops.py in process: a signal stops an event loop that waits by cancelling its
main task (its clean-up runs), and one that runs blocking code by interrupting it; a
command stopped says its line and exits 130 (click's CliRunner; the real processes and
signals are tests/e2e/test_stops.py)."""

from __future__ import annotations

import asyncio
import importlib
import os
import signal
import threading
import time

import pytest
from click.testing import CliRunner

from arena.cli import main, stops

submit_module = importlib.import_module("arena.cli.submit")  # not the command of that name


def signal_soon(sig: signal.Signals) -> threading.Timer:
    t = threading.Timer(0.2, os.kill, (os.getpid(), sig))
    t.start()
    return t


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_waiting_loop_is_cancelled_and_cleans_up(sig: signal.Signals) -> None:
    seen: list[str] = []

    async def work() -> None:
        try:
            await asyncio.sleep(60)
            seen.append("slept")
        except asyncio.CancelledError:
            seen.append("cancelled")  # the polite path: the coroutine hears of it
            raise
        finally:
            await asyncio.sleep(0)  # clean-up may still await
            seen.append("cleaned up")

    with stops.handling():
        t = signal_soon(sig)
        with pytest.raises(KeyboardInterrupt):
            stops.run(work())
        t.join()
    assert seen == ["cancelled", "cleaned up"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_blocking_code_in_the_loop_is_interrupted(sig: signal.Signals) -> None:
    seen: list[str] = []

    async def work() -> None:
        try:
            for _ in range(600):  # a build's wait: blocking, the loop cannot run
                time.sleep(0.1)
            seen.append("slept")
        finally:
            seen.append("cleaned up")

    with stops.handling():
        t = signal_soon(sig)
        with pytest.raises(KeyboardInterrupt):
            stops.run(work())
        t.join()
    assert seen == ["cleaned up"]


def test_the_handlers_before_are_put_back() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with stops.handling():
        assert signal.getsignal(signal.SIGTERM) is not before[0]
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_a_command_stopped_says_what_the_stop_left_and_exits_130(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    bot = tmp_path / "b"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "b"\nrun = "{python} bot.py"\n')
    (bot / "bot.py").write_text("")

    def upload(*args: object, **kw: object) -> None:
        raise KeyboardInterrupt  # as SIGINT or SIGTERM would, mid-upload

    monkeypatch.setattr(submit_module, "api", upload)
    out = CliRunner().invoke(main, ["submit", str(bot), "--server", "http://127.0.0.1:9",
                                    "--token", "t"])
    assert out.exit_code == 130, out.output
    assert out.output.strip().splitlines()[-1] == (
        "stopped during the upload: the host may or may not have the version; run the same "
        "command again (the same sources give back the same version)")
    assert "Aborted!" not in out.output
