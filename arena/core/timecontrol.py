"""Time control and fault policy: the limits the referee measures (docs/protocol.md, "Time")."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError, ValidationInfo, field_validator, model_validator

from ..errors import ConfigError
from .config import Table, first_problem, unknown_keys

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
        _validate(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TimeControl:
        """From a dict (a ladder file's ``[time_control]`` table), the defaults for the keys
        it lacks.

        Raises:
            ConfigError: unknown keys or bad values.
        """
        _validate({**dataclasses.asdict(cls()), **data})
        return cls(**data)


class _Table(Table):
    """The rules of a :class:`TimeControl` (every field given)."""

    startup_ms: int
    decision_ms: int
    bank_ms: int
    reconnect_ms: int
    illegal_retries: int
    max_hands: int

    @field_validator("*", mode="before")
    @classmethod
    def _whole(cls, v: object, info: ValidationInfo) -> object:
        top, unit = (1_000_000, "") if info.field_name in _COUNTS else (NO_LIMIT_MS, " ms")
        if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v > top:
            raise ValueError(f"time control {info.field_name}={v!r}: must be a whole number "
                             f"0..{top}{unit}")
        return v

    @model_validator(mode="after")
    def _positive(self) -> _Table:
        for name in ("startup_ms", "decision_ms", "max_hands"):
            if getattr(self, name) == 0:
                raise ValueError(f"time control {name}=0: must be more than 0")
        return self


def _validate(data: dict[str, Any]) -> None:
    """Check a whole time control (every field). Raises ConfigError: its first problem."""
    try:
        _Table.model_validate(data)
    except ValidationError as e:
        unknown = unknown_keys(e)
        if unknown:
            known = sorted(_Table.model_fields)
            raise ConfigError(f"unknown time control option(s): {', '.join(unknown)}; "
                              f"known: {', '.join(known)}") from None
        raise ConfigError(first_problem(e).message) from None
