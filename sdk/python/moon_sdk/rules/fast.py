"""The rules engine's compiled core when it is installed, else the pure engine: one API.

``moon_engine`` (the optional package in ``sdk/rust``: Rust, built with maturin) implements
:class:`GameState` exactly as :mod:`.state` does: the same deals (deal version 2), legal
actions, transitions, scores, hand records, outcomes and refusal messages, as the same
types (``Phase``, ``Trick``, ``HandRecord``, ``Outcome``, ``IllegalActionError``), and so
the same observations through :func:`~moon_sdk.rules.observe`; only faster
(``benchmarks/engine.py``). The pure engine stays the specification and the fallback, and
this module's :data:`GameState` is whichever is available, so code written against it runs
everywhere::

    from moon_sdk.rules.fast import GameState   # compiled when installed, else pure
    state = GameState(Ruleset.preset("moon3"), seed=7)

``MOON_ENGINE`` (environment, read once at import): ``auto`` (the default: compiled when
importable), ``pure`` (never the compiled core: for tests and comparisons) or
``compiled`` (raise ImportError without it).

Where the compiled state differs: its attributes are read-only (``state.hands`` is a new
list at each read, and assigning it raises AttributeError), and it is not an instance of
the pure class (``isinstance(state, moon_sdk.rules.GameState)`` is False). The referee and
``moon replay verify`` run the pure engine.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import cast

from .state import DEAL_VERSION
from .state import GameState as PureGameState

ENGINE_VARIABLE = "MOON_ENGINE"
"""The environment variable that chooses the engine: ``auto``, ``pure`` or ``compiled``."""


def _load() -> tuple[ModuleType | None, str]:
    """``(the compiled module or None, why it is not used)``.

    Raises:
        ImportError: ``MOON_ENGINE=compiled`` and the compiled core cannot be used.
        ValueError: ``MOON_ENGINE`` has another value.
    """
    choice = os.environ.get(ENGINE_VARIABLE, "auto").strip().lower() or "auto"
    if choice not in ("auto", "pure", "compiled"):
        raise ValueError(f"{ENGINE_VARIABLE}={choice!r} is invalid: use auto, pure or compiled")
    if choice == "pure":
        return None, f"{ENGINE_VARIABLE}=pure"
    try:
        module = importlib.import_module("moon_engine")
    except ImportError as e:
        why = (f"the compiled core (moon_engine) is not installed ({e}); build it with "
               "`pip install sdk/rust` (needs cargo), or `make setup`")
    else:
        version = getattr(module, "DEAL_VERSION", None)
        if version == DEAL_VERSION:
            return module, ""
        why = (f"the compiled core deals version {version}, this SDK version {DEAL_VERSION}: "
               "rebuild it (`pip install sdk/rust`)")
    if choice == "compiled":
        raise ImportError(f"{ENGINE_VARIABLE}=compiled but {why}")
    return None, why


core, REASON = _load()
"""``core``: the ``moon_engine`` module in use, or None (the pure engine); ``REASON``: why
the compiled core is not used ("" when it is)."""

COMPILED: bool = core is not None
"""True when :data:`GameState` is the compiled one."""

GameState: type[PureGameState] = (
    cast("type[PureGameState]", core.GameState) if core is not None else PureGameState)
"""The game state class: ``moon_engine.GameState`` when available, else the pure
:class:`moon_sdk.rules.GameState`; the same constructor ``GameState(ruleset, seed)``,
methods and attributes (see the module doc)."""

__all__ = ["COMPILED", "ENGINE_VARIABLE", "REASON", "GameState", "core"]
