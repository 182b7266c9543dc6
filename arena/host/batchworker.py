"""The process in which the host runs its periodic batch fit (:class:`BatchWorker`).

It never outlives the host, however the host ends:

- killed with ``kill -9`` (or any signal) while the worker runs: the kernel kills the worker
  too (Linux ``PR_SET_PDEATHSIG``, asked for by the worker's first code);
- killed before the worker got as far as asking (a spawned Python takes a second or so to
  start): the worker sees on its first code that its parent is gone and exits, and a thread
  of the worker watches the host's end of the pipe it was started through, which only the
  host holds and the kernel closes whatever kills it;
- stopped normally, even in the middle of a fit: :meth:`BatchWorker.stop` kills the worker
  (the fit only reads the database; its result is no longer wanted) instead of waiting for
  it, so a long fit never holds up the host's exit.

multiprocessing's resource tracker, the other process a spawned pool starts, ends when the
host and the worker have both ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

T = TypeVar("T")

PR_SET_PDEATHSIG = 1


def _exit_when_gone(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(0)


def _start_worker(host_pid: int) -> None:
    """The worker's first code (the pool's initializer). It ignores Ctrl-C (a Ctrl-C in a
    terminal reaches the whole process group; the host stops the worker itself) and makes
    sure it dies with the host (see the module's docstring).

    The worker was started with SIGINT blocked (:meth:`BatchWorker.run`), so a Ctrl-C that
    came while it was still importing is pending, not a KeyboardInterrupt; ignoring SIGINT
    discards it, and only then is it unblocked."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != host_pid:  # the host died before the line above: no signal will come
        os._exit(0)
    parent = multiprocessing.parent_process()
    if parent is not None and parent.sentinel is not None:
        threading.Thread(target=_exit_when_gone, args=(parent.sentinel,), daemon=True,
                         name="moon-host-watch").start()


def batch_pool() -> ProcessPoolExecutor:
    """A pool of one worker process (spawned, not forked: the host has threads) that dies
    with this process (see the module's docstring); the worker starts on the first
    ``submit``, from the calling thread."""
    return ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(os.getpid(),))


class BatchWorker:
    """One spawned worker process that runs functions for the host (:meth:`run`), started
    on the first call and again after it died. Use it from the host's event loop thread
    and :meth:`stop` it when the host stops."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def _start(self) -> ProcessPoolExecutor:
        return batch_pool()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the worker (``fn`` and ``args`` must pickle).

        The worker process is started from the calling thread, the event loop's: the one
        thread of the host that lives as long as it (``PR_SET_PDEATHSIG`` follows the thread
        that started a process, not the whole process).

        Raises:
            whatever ``fn`` raises; BrokenProcessPool: the worker died (killed, out of
            memory); the next call starts a new one.
        """
        if self._pool is None:
            self._pool = self._start()
        # submit starts the worker when there is none, from this thread: with SIGINT blocked
        # here, the new process starts with it blocked too (a signal mask survives fork and
        # exec) until its first code ignores it, so a Ctrl-C during its second of start-up
        # is not a KeyboardInterrupt in its imports (a Ctrl-C meanwhile still reaches the
        # host: another of its threads takes it, or this one once it is unblocked)
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            future = self._pool.submit(fn, *args)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            self.stop()
            raise

    def stop(self) -> None:
        """Kill the worker now, even in the middle of a call (whose result is lost), and
        forget it. Safe to call twice."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # ProcessPoolExecutor has no public way to end a busy worker before Python 3.14;
        # shutdown() drops its table of processes, so take them first
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for p in procs:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                p.kill()
        pool.shutdown(wait=False, cancel_futures=True)  # its thread reaps the killed worker


__all__ = ["BatchWorker", "batch_pool"]
