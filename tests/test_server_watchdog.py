"""The referee server's write limit (arena/referee/server.py ``_WriteWatchdog``): a write to a bot's
stream that takes longer than the limit ends the stream, as ``asyncio.timeout`` around each
write did, with one timer per stream; writes that each stay under the limit are never cut,
however long the stream lives; any other cancel goes through."""

from __future__ import annotations

import asyncio

import pytest

from arena.referee.server import _WriteWatchdog


async def _writer(durations: list[float], limit_s: float) -> tuple[int, str]:
    """Writes that take ``durations`` seconds each (a sleep stands in for the transport):
    (how many finished, "ok" or "cut")."""
    wd = _WriteWatchdog(limit_s)
    done = 0
    try:
        for d in durations:
            wd.started = asyncio.get_running_loop().time()
            await asyncio.sleep(d)
            wd.started = 0.0
            done += 1
    except asyncio.CancelledError:
        if not wd.expired():
            raise
        return done, "cut"
    finally:
        wd.stop()
    return done, "ok"


def test_a_write_over_the_limit_is_cut_and_shorter_ones_never_are():
    async def go():
        loop = asyncio.get_running_loop()
        # 0.6 s of writes, each 0.05 s: the limit (0.2 s) is passed in total, never by one
        short = await _writer([0.05] * 12, 0.2)
        t0 = loop.time()
        long = await _writer([0.05, 0.05, 30.0], 0.2)
        took = loop.time() - t0
        after = await asyncio.sleep(0, "the task goes on after a cut")
        return short, long, took, after

    short, long, took, after = asyncio.run(go())
    assert short == (12, "ok")
    assert long == (2, "cut")
    assert 0.3 <= took < 20  # cut 0.2 s into the third write, not when it ended (30 s)
    assert after == "the task goes on after a cut"


def test_another_cancel_is_not_taken_for_a_cut():
    async def go():
        task = asyncio.create_task(_writer([30.0], 60.0))
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
