"""Continuous matchmaking: which versions play the next duplicate set, and its seatings.

- The first version of a group is drawn with weight ``1/(games+1)`` plus a share for a wide
  interval (Halite's rule: new versions get games first; seeding by σ alone let a crashing
  bot take most games), among the versions still in their placement series while there
  are any, so a new version plays its placement sets first.
- Its opponents are drawn near it in rating, above and below, with randomness: weight
  ``exp(-|Δμ| / closeness)`` plus a floor, so the leader is never trapped behind a gap.
- A group plays a whole duplicate set (:mod:`arena.ladder.schedule`): 3 players, every
  seating of the triple on one board; 4 players, the two tables with the partnerships
  swapped. The set is the unit: ratings stay duplicate-fair.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..ladder.schedule import seatings_3

SIGMA0 = 25.0 / 3
"""OpenSkill's σ of a new version."""


@dataclass(frozen=True)
class Candidate:
    """An active version as matchmaking sees it."""

    version_id: int
    games: int
    mu: float
    sigma: float
    provisional: bool = False
    """Still in its placement series: such versions start the next group first."""


def seed_weight(c: Candidate) -> float:
    """How likely ``c`` is to start the next group: ``1/(games+1) + 0.25·σ/σ₀``."""
    return 1.0 / (c.games + 1) + 0.25 * c.sigma / SIGMA0


def _draw(rng: random.Random, items: list[Candidate], weights: list[float]) -> Candidate:
    return rng.choices(items, weights=weights, k=1)[0]


def pick_group(pool: list[Candidate], players: int, rng: random.Random,
               closeness: float = 4.0) -> list[int]:
    """The versions of the next duplicate set: ``players - 1`` distinct ones with 3
    players (all 3 distinct when there are 3), for 4 players 4 distinct ones or 2 (each
    partnering a copy of itself). Empty with fewer than 2 candidates. The first is drawn
    among the provisional candidates while there are any (their placement series first).
    """
    if len(pool) < 2:
        return []
    # a version in its placement series starts the group while there is one
    starters = [c for c in pool if c.provisional] or pool
    first = _draw(rng, starters, [seed_weight(c) for c in starters])
    wanted = (3 if len(pool) >= 3 else 2) if players == 3 else (4 if len(pool) >= 4 else 2)
    group = [first]
    rest = [c for c in pool if c is not first]
    while len(group) < wanted:
        w = [math.exp(-abs(c.mu - first.mu) / closeness) + 0.05 for c in rest]
        pick = _draw(rng, rest, w)
        group.append(pick)
        rest.remove(pick)
    return [c.version_id for c in group]


def seatings(group: list[int], players: int, rng: random.Random) -> list[tuple[int, ...]]:
    """The games of the duplicate set of ``group`` (version ids per seat, seat 0 first).

    3 players: every distinct seating of the triple; with 2 versions, the triple holds one
    of them twice (drawn at random). 4 players: team 1 against team 2 at two tables with
    the partnerships swapped; with 2 versions each partners a copy of itself.
    """
    if players == 3:
        triple = list(group)
        if len(triple) == 2:
            triple.append(rng.choice(group))
        return [tuple(s) for s in seatings_3(tuple(triple))]
    if len(group) == 2:
        t1, t2 = (group[0], group[0]), (group[1], group[1])
    else:
        a, *others = group
        rng.shuffle(others)
        t1, t2 = (a, others[0]), (others[1], others[2])
    return [(t1[0], t2[0], t1[1], t2[1]), (t2[0], t1[0], t2[1], t1[1])]


def side(seat: int, players: int) -> int:
    """The side ``seat`` plays for: its own with 3 players, its partnership (seat mod 2)
    with 4."""
    return seat if players == 3 else seat % 2
