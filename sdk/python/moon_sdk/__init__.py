"""Moon SDK: everything a bot author needs, and nothing of the server.

- :mod:`moon_sdk.rules`: the rules engine the referee itself enforces (standard library only).
- :mod:`moon_sdk.bot`: the :class:`Bot` base class and :func:`run` (gRPC client).
"""

__version__ = "0.1.0"
