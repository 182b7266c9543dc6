"""The scripted seats of the conformance check (`moon bot check`, :mod:`arena.check.conformance`):
small bots that make a phase come up for the bot under check, shipped inside the arena
package so that the check works wherever the arena is installed.

    python -m arena.check.scripted declare doubles|none   # shoots the moon, names that trump
    python -m arena.check.scripted pass                   # passes whenever it may

A *declarer* bids 21 (shoots the moon, which ends the auction at once: docs/rules.md,
"Bidding"), takes the widow and discards its first legal tile, names the trump contract it
was given (doubles or no trumps, docs/rules.md, "Widow, discard, trumps") and plays its
first legal tile: seated first to bid, it always wins the bid, so the bot under check plays
a hand under that trump and must follow suit by its rules (docs/rules.md, "Play").

A *passer* passes whenever it may (else it bids the least it may) and plays its first
legal tile: beside a bot that deals under ``all_pass = "force_dealer"``, the bot under
check wins the bid and must name trumps.

:func:`spec` gives either as a :class:`~arena.bots.manifest.BotSpec` for a game request.
"""

from __future__ import annotations

import sys
from pathlib import Path

from moon_sdk import Bot, run
from moon_sdk.rules import (
    MOON,
    PASS,
    ActionKind,
    Observation,
    action_kind,
    name_trump,
    parse_trump,
)

from ..bots.manifest import BotSpec

TRUMPS = ("doubles", "none")
"""The trump contracts a declarer may be told to name."""


class Declarer(Bot):
    """Bids 21 (the moon), names ``trump``, plays its first legal tile."""

    name = "check-declarer"
    version = "1"

    def __init__(self, trump: str) -> None:
        self.trump = name_trump(parse_trump(trump))

    def act(self, obs: Observation) -> int:
        legal = list(obs.legal_actions)
        kind = action_kind(legal[0])
        if kind is ActionKind.BID:
            return MOON if MOON in legal else legal[0]
        if kind is ActionKind.TRUMP and self.trump in legal:
            return self.trump
        return legal[0]


class Passer(Bot):
    """Passes whenever it may (else bids the least it may); plays its first legal tile."""

    name = "check-passer"
    version = "1"

    def act(self, obs: Observation) -> int:
        legal = list(obs.legal_actions)
        return PASS if PASS in legal else legal[0]


def spec(mode: str, trump: str = "") -> BotSpec:
    """The scripted seat ``mode`` ("declare", with ``trump`` one of :data:`TRUMPS`, or
    "pass") as a local Python bot.

    Raises:
        ValueError: an unknown mode or trump.
    """
    # run from the folder that holds the arena package (a checkout, or site-packages): the
    # package's own folder would put its modules (records, text, ...) first on sys.path
    where = Path(__file__).resolve().parents[1]
    if mode == "declare" and trump in TRUMPS:
        return BotSpec(f"check-declarer-{trump}", where,
                       f"{{python}} -m arena.check.scripted declare {trump}", "1", "python")
    if mode == "pass" and not trump:
        return BotSpec("check-passer", where,
                       "{python} -m arena.check.scripted pass", "1", "python")
    raise ValueError(f"no scripted seat {mode!r} {trump!r}")


def main(argv: list[str]) -> None:
    """Run the scripted seat that ``argv`` names (see the module's docstring)."""
    if argv[:1] == ["declare"] and len(argv) == 2 and argv[1] in TRUMPS:
        run(Declarer(argv[1]))
    elif argv == ["pass"]:
        run(Passer())
    print("usage: python -m arena.check.scripted declare doubles|none | pass", file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
