"""The small-sample rules and the one interval form, against values from tables and by
hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from arena.stats.intervals import Estimate, bootstrap_se, sign_los, sweep_bound, t_quantile


def test_t_quantiles_from_a_table():
    # two-sided 95%: 12.706 (1 df), 3.182 (3), 2.069 (23), 1.960 (∞)
    assert t_quantile(2) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile(4) == pytest.approx(3.182, abs=1e-3)
    assert t_quantile(24) == pytest.approx(2.069, abs=1e-3)
    assert t_quantile(100000) == pytest.approx(1.960, abs=1e-3)
    with pytest.raises(ValueError, match="at least 2 boards"):
        t_quantile(1)


def test_bootstrap_se_of_a_mean_is_students():
    # every resample of 3 values, enumerated: the bootstrap variance of the mean is the
    # plug-in variance / 3; scaled by 3/2 it is s² / 3 with the sample variance s²
    x = np.array([1.0, 4.0, 10.0])
    means = np.array([np.mean(c) for c in itertools.product(x, repeat=3)])
    s2 = np.var(x, ddof=1)
    assert float(bootstrap_se(means, 3)) == pytest.approx(math.sqrt(s2 / 3))


def test_sweep_bounds_and_sign_test():
    assert sweep_bound(4) == pytest.approx(1 - 0.05 ** 0.25) == pytest.approx(0.5271, abs=1e-4)
    assert sweep_bound(24) == pytest.approx(0.1173, abs=1e-4)
    # (1 − u)^G is exactly the 5% left
    assert (1 - sweep_bound(48)) ** 48 == pytest.approx(0.05)
    assert sign_los(4) == 0.9375 and sign_los(5) == pytest.approx(0.96875)


def test_one_interval_form():
    assert Estimate(1695.4, 1641.0, 1749.8).text() == "1695 ± 54"
    assert Estimate(57.0, 17.0, 97.0).text(signed=True) == "+57 ± 40"
    assert Estimate(2450.0, 1756.2, None, "never behind B", False).text() == "≥ 1756"
    assert Estimate(-950.0, None, -256.0, "", False).text(signed=True) == "≤ -256"
    assert Estimate(1500.0, None, None, "no spread").text() == "1500 (n/a)"
    assert Estimate(1500.0, None, None, "open both ways", False).text() == "n/a"
    assert Estimate(-0.3, None, None).text(signed=True) == "+0 (n/a)"       # never "-0"
    assert Estimate(1, 0, 2).margin == 1 and Estimate(1, 0, None).margin is None
