"""The rich console the commands print tables on."""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console

PIPE_WIDTH = 120
"""Columns of the output when it is not a terminal (CI logs, ``| tee``) and ``COLUMNS`` is
not set: wide enough for a leaderboard with long bot names (a terminal uses its own
width, ``COLUMNS`` wins over both)."""


def make_console(**kw: Any) -> Console:
    """A :class:`rich.console.Console` (``kw`` as rich's) that is :data:`PIPE_WIDTH`
    columns wide when it does not write to a terminal and ``COLUMNS`` is not set (rich
    would assume 80)."""
    console = Console(**kw)
    if "width" not in kw and not console.is_terminal and not os.environ.get("COLUMNS"):
        console = Console(width=PIPE_WIDTH, **kw)
    return console


def say_err(line: str) -> None:
    """One line of progress (a build starting, ending) on stderr, flushed at once so that
    it shows also when stderr is not a terminal (a CI log, ``2>&1 | tee``). It goes through
    ``sys.stderr`` as it is now, which a live view (rich's ``Live``) redirects above itself."""
    print(line, file=sys.stderr, flush=True)
