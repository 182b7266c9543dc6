"""The host's one writer thread (:class:`Writer`): every write of the host's loops runs on
it, in order, so results, rating updates, claims and status changes never race."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class Writer:
    """One thread that runs the host's database writes one after another."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="moon-host-writer")

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the writer thread; its result, or what it raised."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, fn, *args)

    def write_now(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`write` from a thread that is not the event loop's, waiting for it."""
        return self._thread.submit(fn, *args).result()

    def shutdown(self) -> None:
        """Wait for the writes queued, then end the thread."""
        self._thread.shutdown(wait=True)


__all__ = ["Writer"]
