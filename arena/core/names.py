"""The one check of a bot's name, wherever the name comes from: a ``bot.toml``'s ``name``,
a ladder file's ``name = "..."`` override of a bot, a ladder's own ``name``, and a
competition host's submissions.

A name is shown in tables and records, becomes part of file names (logs, results, image
tags) and of rating tables, so it is plain: 1 to 64 characters, each an ASCII letter, a
digit, ``-``, ``_`` or ``.``; it starts with a letter or a digit (not ``.``, which would
make a hidden file, nor ``-``, which reads as an option), and has no ``..``. So no ``/``,
no spaces or tabs, no markup, no control characters, no ``..`` path.
"""

from __future__ import annotations

import re

from ..errors import ConfigError

NAME_RULE = ("1-64 letters, digits, '-', '_' or '.', starting with a letter or digit, "
             "without '..'")
"""The rule, as error messages state it."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def name_problem(value: object) -> str | None:
    """What is wrong with ``value`` as a bot name, or None if it is a good one.

    >>> name_problem("heuristic-2.1") is None
    True
    >>> name_problem(5)
    'must be a string (in quotes), not 5'
    """
    if not isinstance(value, str):
        return f"must be a string (in quotes), not {value!r}"
    if not _NAME.fullmatch(value) or ".." in value:
        return f"{value!r} is not a valid name: use {NAME_RULE}"
    return None


LOOKALIKE_RULE = "in any case, i, l and 1 read alike, so do o and 0, rn and m, vv and w"
"""What :func:`lookalike` takes as one letter, as error messages state it."""
_LOOKALIKE = str.maketrans({"i": "l", "1": "l", "0": "o"})
_LOOKALIKE_PAIRS = (("rn", "m"), ("vv", "w"))


def lookalike(name: str) -> str:
    """What a name looks like in most fonts, to tell names that would pass for one
    another: case does not count, and ``I`` (capital i), ``l`` and ``1`` are one letter
    (so, with case, ``i`` is one with them too), ``0`` is ``o``, ``rn`` reads as ``m`` and
    ``vv`` as ``w``. Two names with the same lookalike would be one name to a reader of the
    leaderboard. On the safe side: ``alice`` and ``aiice`` are one name too.

    >>> lookalike("aIice") == lookalike("alice") == lookalike("a1ice") == lookalike("ALICE")
    True
    >>> lookalike("Bot0") == lookalike("boto"), lookalike("adrnin"), lookalike("vvolf")
    (True, 'admln', 'wolf')
    >>> lookalike("alice") == lookalike("alicia")
    False
    """
    text = name.lower().translate(_LOOKALIKE)
    for pair, letter in _LOOKALIKE_PAIRS:
        text = text.replace(pair, letter)
    return text


def check_name(value: object, where: str, what: str = "name") -> str:
    """``value`` if it is a good bot name.

    Args:
        value: the name as read (any type: a TOML file may give a number).
        where: where it came from, to start the message (``path:line``, ``--bot``).
        what: how the source calls it (``name``, ``bot name``).

    Raises:
        ConfigError: one line, ``<where>: <what> ...: <why>, use <the rule>``.
    """
    problem = name_problem(value)
    if problem:
        raise ConfigError(f"{where}: {what} {problem}")
    assert isinstance(value, str)
    return value


def toml_key_line(text: str, key: str, table: str = "") -> int | None:
    """1-based line of ``key = ...`` among the top-level keys of a TOML text (those before
    the first table header), or in ``[table]`` when given; None if it is not found.

    >>> toml_key_line('# x\\nname = 5\\n[limits]\\nname = 6\\n', "name")
    2
    """
    current = ""
    header = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?")
    assign = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for n, line in enumerate(text.splitlines(), 1):
        m = header.match(line)
        if m:
            current = m.group(1)
            continue
        if current == table and assign.match(line):
            return n
    return None
