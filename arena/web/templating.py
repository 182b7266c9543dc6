"""The pages' Jinja2 environment: templates under ``arena/web/templates``, static files
under ``arena/web/static`` (both package data of the wheel), autoescape on for every
template, undefined names an error."""

from __future__ import annotations

import functools
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from .. import __version__
from ..core.text import clean, clean_line
from . import replay, views

WEB = Path(__file__).resolve().parent
TEMPLATES = WEB / "templates"
STATIC = WEB / "static"


@functools.cache
def templates() -> Environment:
    """The one environment (autoescape everywhere, also for templates from strings)."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["inert"] = clean
    env.filters["inert_line"] = clean_line
    env.globals.update(is_trump=replay.is_trump, pips=replay.pips,
                       trump_text=replay.trump_text, bid_text=replay.bid_text,
                       rating_parts=views.rating_parts,
                       arena_version=__version__)
    return env


def static_text(name: str) -> str:
    """A static file's text (``replay.js``, ``replay.css``...), to inline it.

    Raises:
        FileNotFoundError: no such file in the package (a broken install).
    """
    return (STATIC / name).read_text(encoding="utf-8")
