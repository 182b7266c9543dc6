"""Moon SDK: everything a bot author needs, and nothing of the server.

- :mod:`moon_sdk.rules`: the rules engine the referee itself enforces (standard library only;
  importing it does not import gRPC).
- :class:`Bot` and :func:`run` (:mod:`moon_sdk.bot`): a bot in a dozen lines.
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["Bot", "play", "run"]


def __getattr__(name: str) -> Any:
    # Lazy, so that `import moon_sdk.rules` stays free of gRPC and protobuf.
    if name in __all__:
        from . import bot

        return getattr(bot, name)
    raise AttributeError(f"module 'moon_sdk' has no attribute {name!r}")
