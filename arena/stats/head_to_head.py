"""Observed head-to-head beside a modelled rating gap: is the gap beyond what the games
between the two bots measured?

A one-dimensional fit can stretch a large gap: where a weak bot loses to every other about
as often, the fit places it far below all of them, and the gap to the strongest implies a
share far smaller than the one the two bots actually had against each other. The check:
the share the gap implies, 1 / (1 + 10^(−gap/400)), against the 95% Wilson interval of
the observed share (ties count half). The games are taken as independent, which makes
that interval narrower than the boards' shared luck allows, so the check errs toward
saying a gap is beyond the games.
"""

from __future__ import annotations

import math

from scipy.special import ndtri

from .intervals import LEVEL

Z = float(ndtri(0.5 + LEVEL / 2))
"""The two-sided normal quantile of :data:`.intervals.LEVEL` (1.96)."""


def expected_share(gap: float) -> float:
    """The share of comparisons a rating gap (Elo) implies for the higher bot."""
    return 1.0 / (1.0 + math.pow(10.0, -gap / 400.0))


def share_interval(score: float, games: int) -> tuple[float, float]:
    """The 95% Wilson interval of a share ``score`` (0..1) observed over ``games``.

    Raises:
        ValueError: no games, or a share outside 0..1.
    """
    if games < 1:
        raise ValueError("a share needs at least one game")
    if not 0 <= score <= 1:
        raise ValueError(f"a share must be between 0 and 1 (got {score})")
    n, z2 = games, Z * Z
    centre = (score + z2 / (2 * n)) / (1 + z2 / n)
    half = Z * math.sqrt(score * (1 - score) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def beyond(gap: float, score: float, games: int) -> bool:
    """True when the share ``gap`` implies is outside the observed share's 95% interval
    (``score`` over ``games``: how often the higher bot finished ahead of the lower)."""
    low, high = share_interval(score, games)
    return not low <= expected_share(gap) <= high


def share_text(share: float) -> str:
    """A share (0..1) as a percentage that never rounds a near-sweep to 0% or 100%:
    ``58%``, ``99.5%``, ``>99.9%``, ``0.4%``, ``<0.1%``; whole where it is whole."""
    p = 100 * share
    if 0 < p < 0.1:
        return "<0.1%"
    if 99.9 < p < 100:
        return ">99.9%"
    if 0 < p < 1 or 99 < p < 100:
        return f"{p:.1f}%"
    return f"{p:.0f}%"


__all__ = ["beyond", "expected_share", "share_interval", "share_text"]
