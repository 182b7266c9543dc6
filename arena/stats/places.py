"""Places of a whole table: which neighbours in a ranking the data tell apart, with the
error controlled for the table at once.

A table of n bots, best first, makes n − 1 claims "#k is stronger than #k+1". Testing
each at 95% lets the table as a whole be wrong far more often than 5%
(benchmarks/rating_coverage.py measures it). Holm's step-down procedure (Holm 1979)
keeps the chance that *any* claim of the table is wrong at most α whatever the claims'
dependence: sort the m p-values, p₍₁₎ ≤ … ≤ p₍ₘ₎; reject p₍ᵢ₎ while p₍ⱼ₎ ≤ α / (m − j + 1)
for every j ≤ i; stop at the first that fails.

A claim's p-value here is one-sided, 1 − LOS of the upper bot over the lower (LOS from
:meth:`arena.stats.bradley_terry.BoardFit.los`), tested at α = 2.5%, the level of "the 95%
interval of the difference excludes 0".
"""

from __future__ import annotations

from collections.abc import Sequence

from .intervals import LEVEL

ALPHA = (1 - LEVEL) / 2
"""The table's one-sided error rate (2.5%: a 95% two-sided interval's)."""


def holm(pvalues: Sequence[float | None], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down over ``pvalues`` (None: a claim that cannot be tested, never
    rejected): True where the claim holds with the family's error at most ``alpha``.

    Raises:
        ValueError: a p-value outside 0..1, or ``alpha`` outside (0, 1).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (got {alpha})")
    for p in pvalues:
        if p is not None and not 0 <= p <= 1:
            raise ValueError(f"a p-value must be between 0 and 1 (got {p})")
    m = len(pvalues)
    order = sorted(range(m), key=lambda k: 2.0 if (p := pvalues[k]) is None else p)
    out = [False] * m
    for step, k in enumerate(order):
        p = pvalues[k]
        if p is None or p > alpha / (m - step):
            break
        out[k] = True
    return out


def neighbour_p(los: float | None) -> float | None:
    """The one-sided p-value of "the upper bot is stronger" from its LOS over the lower."""
    return None if los is None else min(1.0, max(0.0, 1.0 - los))


def places(los_next: Sequence[float | None], alpha: float = ALPHA) -> list[str]:
    """The place of each bot of a table, best first, from ``los_next`` (each bot's LOS over
    the next one down; the last bot's entry is ignored): ``"1"``, ``"2"``, … where Holm's
    step-down over the neighbour claims tells a bot from the one above, else the bots not
    told apart share the best place among them, marked ``=`` (``"2="``, ``"2="``)."""
    n = len(los_next)
    apart = holm([neighbour_p(p) for p in los_next[:-1]], alpha) if n > 1 else []
    out: list[str] = []
    start = 0
    for i in range(n):
        if i and apart[i - 1]:
            start = i
        out.append(str(start + 1))
    return [f"{p}=" if out.count(p) > 1 else p for p in out]


__all__ = ["ALPHA", "holm", "neighbour_p", "places"]
