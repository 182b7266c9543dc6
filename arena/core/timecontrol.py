"""Time control and fault policy: the limits the referee measures (docs/protocol.md, "Time")."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

NO_LIMIT_MS = 86_400_000
"""A decision limit that is no limit in practice: a day, the most a time control takes (a
turn always carries a number of milliseconds). A seat played by hand through a debugger gets
it (`moon play manual`)."""
_COUNTS = ("illegal_retries", "max_hands")
"""The fields that count something; the others are milliseconds."""


@dataclass(frozen=True)
class TimeControl:
    """Limits for one game, measured at the referee: times in milliseconds, then how many
    illegal actions are forgiven and how many hands a game may last.

    Defaults are what a person watching finds sensible: a bot gets 10 s to start, 2 s a
    decision, and a 30 s bank for the whole game that absorbs decisions running over.
    """

    startup_ms: int = 10_000
    """From match creation until every seat must have joined."""
    decision_ms: int = 2_000
    """Per decision, before the bank is touched."""
    bank_ms: int = 30_000
    """Extra time for the whole game."""
    reconnect_ms: int = 5_000
    """Grace for a dropped stream to come back with its token."""
    illegal_retries: int = 2
    """Illegal actions a seat may retry per game; one more forfeits."""
    max_hands: int = 200
    """Deals (redeals included) after which a game that has not ended is adjudicated on
    the scores: places by score, a winner only if alone on top (``hand_limit``). Games of
    bots that bid take 5 to 20 hands; bots that always pass would redeal for ever, and
    random ones take hundreds of hands. An arena limit, not a rule of Moon (docs/rules.md,
    "End of the game")."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            top, unit = (1_000_000, "") if f.name in _COUNTS else (NO_LIMIT_MS, " ms")
            if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v > top:
                raise ConfigError(f"time control {f.name}={v!r}: must be a whole number "
                                  f"0..{top}{unit}")
        for name in ("startup_ms", "decision_ms", "max_hands"):
            if getattr(self, name) == 0:
                raise ConfigError(f"time control {name}=0: must be more than 0")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TimeControl:
        """From a dict (a ladder file's ``[time_control]`` table).

        Raises:
            ConfigError: unknown keys or bad values.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown time control option(s): {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(known))}")
        return cls(**data)
