"""The rich console the commands print tables on."""

from __future__ import annotations

import os
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
