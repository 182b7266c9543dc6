"""Moon SDK: everything a bot author needs, and nothing of the server.

- :mod:`moon_sdk.rules`: the rules engine the referee itself enforces (standard library only;
  importing it does not import gRPC).
- :class:`Bot` and :func:`run` (:mod:`moon_sdk.bot`): a bot in a dozen lines.
- :func:`play_local` and :func:`play_games` (:mod:`moon_sdk.local`): games between bots in
  this process, refereed as the arena does, with the arena's records.
- For research (optional extras, docs/research.md): :mod:`moon_sdk.pettingzoo_env` (a
  PettingZoo environment) and :mod:`moon_sdk.openspiel_game` (an OpenSpiel game, and
  OpenSpiel bots in the arena).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what __getattr__ gives, for type checkers (at run time it stays lazy)
    from .bot import Bot, play, run
    from .local import play_games, play_local

__version__ = "0.1.0"
__all__ = ["Bot", "play", "play_games", "play_local", "run"]


def __getattr__(name: str) -> Any:
    # Lazy, so that `import moon_sdk.rules` stays free of gRPC and protobuf.
    if name in ("play_local", "play_games"):
        from . import local

        return getattr(local, name)
    if name in __all__:
        from . import bot

        return getattr(bot, name)
    raise AttributeError(f"module 'moon_sdk' has no attribute {name!r}")
