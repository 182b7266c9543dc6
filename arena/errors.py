"""The arena's errors: one tree under :class:`ArenaError`.

Every error the arena raises on purpose is one of these, and its message is one line a
person can act on (what was wrong, and what to do). The CLI turns any :class:`ArenaError`
into that line in one place (:class:`arena.cli.ArenaGroup`): a command catches one only to
add to what it says (or to clean up), never to print it. In the model of pip-tools'
``exceptions.py`` and python-chess's narrow errors under ``ValueError``::

    ArenaError
    ├── ConfigError          a bad setting: time control, ladder file, bot.toml, flag
    ├── BotError             a bot cannot be built or started (its own fault)
    │   └── ProtocolError    a bot's message breaks the protocol (seen by the arena)
    ├── InfrastructureError  the arena itself failed (no Docker engine, a game aborted):
    │                        never a bot's fault; the game is voided and replayed
    └── RecordError          a game record that cannot be read

A bot's misbehaviour *during* a game (a timeout, a crash, an illegal action) is not an
exception: the referee records it as a :class:`arena.core.results.Fault`.
"""

from __future__ import annotations


class ArenaError(Exception):
    """The root of the arena's errors; ``str(e)`` is the whole message for a person."""


class ConfigError(ArenaError, ValueError):
    """A bad setting (time control, ladder file, bot manifest, command-line value); the
    message names the setting (and the file and line where there is one)."""


class BotError(ArenaError):
    """A bot that cannot be built, or whose program cannot be started: its own fault, so
    the bot is left out (a ladder) or its seat crashes (a game), never the arena's."""


class ProtocolError(BotError, ValueError):
    """A bot's message that breaks the protocol (docs/protocol.md): malformed, the wrong
    request id, an answer before its turn was sent. In a game the referee records it as
    the seat's ``protocol_error`` fault."""


class InfrastructureError(ArenaError):
    """The arena could not play a game through no bot's fault (no Docker engine, a runner
    failure, a game aborted or cancelled). Never scored against a bot: the caller voids
    the game and plays it again."""


class RecordError(ArenaError, ValueError):
    """A game record that cannot be read: not JSON, another schema, a missing field."""


__all__ = ["ArenaError", "BotError", "ConfigError", "InfrastructureError", "ProtocolError",
           "RecordError"]
