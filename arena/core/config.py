"""Reading a config document: TOML parsed into a dict, then checked by a declared pydantic
model, every refusal one line (:class:`~arena.errors.ConfigError`).

The documents are a ladder file (:mod:`arena.ladder.config`), a ``bot.toml``
(:mod:`arena.bots.manifest`), a time control (:mod:`arena.core.timecontrol`), a ladder's
``[sandbox]`` Docker limits (:mod:`arena.sandbox.docker`) and ``competition.toml``
(:mod:`arena.host.settings`). Each states its own messages in its validators (a
``ValueError`` whose text is the message); :func:`first_problem` takes the one to report
from a :class:`~pydantic.ValidationError`, and the document puts its file and line before it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import ConfigError

PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")
"""What pydantic puts before the message of a validator's ValueError or assert."""


class Table(BaseModel):
    """A TOML table of fixed keys: an unknown key is refused, and no value is converted
    (``"5"`` is not 5, ``true`` is not 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def plain_message(msg: str) -> str:
    """A pydantic error message without pydantic's prefix: the validator's own words.

    >>> plain_message("Value error, kind = 'local' runs every submission as your own user")
    "kind = 'local' runs every submission as your own user"
    >>> plain_message("Input should be greater than or equal to 1")
    'Input should be greater than or equal to 1'
    """
    for prefix in PYDANTIC_PREFIXES:
        if msg.startswith(prefix):
            return msg[len(prefix):]
    return msg


@dataclass(frozen=True)
class Problem:
    """One refusal of a model: where (pydantic's ``loc``: keys and list indexes), what
    kind (pydantic's ``type``: ``missing``, ``extra_forbidden``, ``value_error``...), the
    value refused and the message (without pydantic's prefix)."""

    loc: tuple[str | int, ...]
    kind: str
    value: Any
    message: str

    @property
    def key(self) -> str:
        """The last key of :attr:`loc` (``""`` for the document itself)."""
        return next((str(x) for x in reversed(self.loc) if isinstance(x, str)), "")


def problems(e: ValidationError) -> list[Problem]:
    """Every refusal of ``e``, in pydantic's order (the model's fields in order, then
    unknown keys)."""
    return [Problem(tuple(err["loc"]), err["type"], err.get("input"),
                    plain_message(err["msg"])) for err in e.errors()]


def first_problem(e: ValidationError) -> Problem:
    """The refusal to report: an unknown key first (the outermost, then the alphabetically
    first; a misspelt key explains the errors that follow from it), else the first in the
    model's order."""
    found = problems(e)
    unknown = sorted((p for p in found if p.kind == "extra_forbidden"),
                     key=lambda p: (len(p.loc), [str(x) for x in p.loc]))
    return unknown[0] if unknown else found[0]


def unknown_keys(e: ValidationError, loc: tuple[str | int, ...] = ()) -> list[str]:
    """The unknown keys of the table at ``loc`` that ``e`` refused, sorted."""
    return sorted(str(p.loc[-1]) for p in problems(e)
                  if p.kind == "extra_forbidden" and p.loc[:-1] == loc)


def parse_toml(text: str, source: str | Path) -> dict[str, Any]:
    """The TOML document ``text`` of ``source`` (a file, named in the message).

    Raises:
        ConfigError: ``<source>: not valid TOML: <why>`` (the parser's line and column
            when it gives them), also for arrays or tables nested too deeply to parse.
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError(f"{source}: not valid TOML: its arrays or inline tables are "
                          "nested too deeply") from None


def decode_toml(raw: bytes, source: str | Path) -> tuple[str, dict[str, Any]]:
    """The text and the document of a TOML file's bytes.

    Raises:
        ConfigError: not UTF-8, or not TOML (:func:`parse_toml`); one line.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: not UTF-8 (byte 0x{raw[e.start]:02x} "
                          f"at offset {e.start})") from None
    return text, parse_toml(text, source)


__all__ = ["PYDANTIC_PREFIXES", "Problem", "Table", "decode_toml", "first_problem",
           "parse_toml", "plain_message", "problems", "unknown_keys"]
