"""The one interval form of every report, and the small-sample rules behind it.

Every figure with an interval (a ladder rating, a difference of two ratings, a match's
Elo difference) is an :class:`Estimate`: the figure and a 95% interval that is either
two-sided and symmetric (shown ``± x``), one-sided (``≥ x`` or ``≤ x``: the data cannot
bound the other side, e.g. a bot that never lost), or missing (``n/a``: the data cannot
say how uncertain the figure is, e.g. every board gave the same result).

Small samples. The unit of every interval is a board (a seeded deal and every game played
on it), because every game of a board shares its luck. With G boards the standard error
comes from G values, so the interval uses the t quantile with G − 1 degrees of freedom
instead of the normal one (12.71 at 2 boards, 3.18 at 4, 2.07 at 24, against 1.96), and
the bootstrap's plug-in variance is scaled by G / (G − 1): for the mean of G normal
values this is exactly Student's interval. LOS uses the same t distribution.

When one side never lost a comparison on G boards, no spread can be measured; the bound
then comes from the boards alone: if the other side's deal-averaged share of comparisons
were p, the chance that it wins nothing on G boards is at most (1 − p)^G whatever the
boards' luck (a board's share is a number in [0, 1]: P(share = 0) ≤ 1 − its mean), so
p ≤ 1 − 0.05^(1/G) at 95%. LOS falls back to the sign test: 1 − ½^G.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import stdtr, stdtrit

LEVEL = 0.95
"""The confidence level of every interval."""

ZERO_SPREAD = 1e-9
"""A standard error below this (natural units of strength) counts as no spread at all."""


@lru_cache(maxsize=256)
def t_quantile(units: int, level: float = LEVEL) -> float:
    """The two-sided ``level`` quantile of Student's t with ``units`` − 1 degrees of freedom
    (1.96 as units grow).

    Raises:
        ValueError: fewer than 2 units (no spread can be estimated from one).
    """
    if units < 2:
        raise ValueError(f"an interval needs at least 2 boards (got {units})")
    return float(stdtrit(units - 1, 0.5 + level / 2))


def bootstrap_se(replicates: np.ndarray, units: int) -> np.ndarray:
    """The standard error from bootstrap ``replicates`` (axis 0) of a statistic of
    ``units`` resampled units: their standard deviation times √(G / (G − 1)), which undoes
    the bootstrap's plug-in variance (for a mean, exactly s / √G)."""
    sd: np.ndarray = np.std(replicates, axis=0)
    return sd * math.sqrt(units / (units - 1)) if units > 1 else sd * math.nan


def los_t(diff: float, se: float, units: int) -> float:
    """Likelihood of superiority of a difference ``diff`` with standard error ``se`` over
    ``units`` boards: Student's t distribution function at diff / se (units − 1 degrees of
    freedom). ``se`` must be positive."""
    return float(stdtr(units - 1, diff / se))


def sign_los(units: int) -> float:
    """LOS of a side that was ahead on every one of ``units`` boards: 1 − ½^units (the
    sign test; 0.9375 at 4 boards, so four clean sweeps are not yet 95%)."""
    return 1.0 - 0.5 ** units


def sweep_bound(units: int, level: float = LEVEL) -> float:
    """The largest deal-averaged share of comparisons a side could have while winning none
    on ``units`` boards, at confidence ``level``: 1 − (1 − level)^(1/units) (0.53 at 4
    boards, 0.12 at 24). Needs no assumption on how luck varies between boards."""
    return 1.0 - math.pow(1.0 - level, 1.0 / units)


def _whole(x: float, signed: bool = False) -> str:
    """A whole number of Elo, never "-0"."""
    r = round(x) + 0  # + 0 turns -0 into 0
    return f"{r:+d}" if signed else f"{r:d}"


@dataclass(frozen=True)
class Estimate:
    """A figure on the Elo scale with its 95% interval (see the module doc).

    ``low`` / ``high`` are None on a side the data cannot bound; both None is "n/a".
    A two-sided interval is symmetric around ``value``.
    """

    value: float
    low: float | None
    high: float | None
    note: str = ""
    """Why the interval is one-sided or missing (empty when it is two-sided)."""
    determined: bool = True
    """False when the data leave the figure itself open (it is unbounded on a side: one
    side never lost): ``value`` is then only the fit's figure held by its prior, fit for
    ordering but not for quoting; quote the bound."""

    @property
    def two_sided(self) -> bool:
        """Both ends known."""
        return self.low is not None and self.high is not None

    @property
    def margin(self) -> float | None:
        """Half the width of a two-sided interval (the ``x`` of ``± x``), else None."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2

    def interval_text(self, signed: bool = False) -> str:
        """``± 54``, ``≥ 1650``, ``≤ 1320`` or ``n/a`` (whole Elo); ``signed`` writes a
        bound with its sign (for differences: ``≥ +40``)."""
        if self.low is not None and self.high is not None:
            return f"± {_whole((self.high - self.low) / 2)}"
        if self.low is not None:
            return "≥ " + _whole(self.low, signed)
        if self.high is not None:
            return "≤ " + _whole(self.high, signed)
        return "n/a"

    def text(self, signed: bool = False) -> str:
        """The figure and its interval in one form: ``1695 ± 54``; only the bound when
        the figure is open (``≥ 1650``); ``1500 (n/a)`` when its spread cannot be
        measured; ``n/a`` when neither is known."""
        value = _whole(self.value, signed) if math.isfinite(self.value) else "n/a"
        if self.two_sided:
            return f"{value} {self.interval_text()}"
        if not self.determined:
            return self.interval_text(signed)
        return f"{value} (n/a)"
