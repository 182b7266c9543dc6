"""Dask's own log lines, in a client or on a worker: one line each (:func:`quiet_dask_logs`).
"""

from __future__ import annotations

import logging


def one_line(e: BaseException) -> str:
    """An error's first line (its type's name when it has no text)."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


class _DaskLogLines(logging.Filter):
    """What Dask's own loggers print in this process: one line each, never a traceback;
    a connection's close at INFO, not at all.

    Dask configures its ``distributed`` loggers to print INFO records to stderr, and a
    client whose scheduler closes the connection first (at the client's own close, by a
    race inside Dask, or when the cluster shuts down) logs "Batched Comm Closed" at INFO
    with the CommClosedError's traceback: that reached the user's terminal. What the
    closed connection means for the games, the executor says itself, in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Drop an INFO record of a closed connection; make any other one line."""
        error = record.exc_info[1] if record.exc_info else None
        if error is None:
            return True
        if record.levelno < logging.WARNING and type(error).__name__ == "CommClosedError":
            return False
        record.msg, record.args = f"{record.getMessage()}: {one_line(error)}", None
        record.exc_info, record.exc_text = None, None
        return True


_LOG_LINES = _DaskLogLines()


def quiet_dask_logs() -> None:
    """Put :class:`_DaskLogLines` on the handlers of Dask's loggers in this process (once
    each; Dask's loggers do not propagate to the root logger, so theirs are all)."""
    names = ["distributed"] + [n for n in logging.root.manager.loggerDict
                               if n.startswith("distributed.")]
    for name in names:
        for handler in logging.getLogger(name).handlers:
            if _LOG_LINES not in handler.filters:
                handler.addFilter(_LOG_LINES)


__all__ = ["one_line", "quiet_dask_logs"]
