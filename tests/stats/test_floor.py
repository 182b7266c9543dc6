"""The interval's floor for few boards: a few boards that happen to agree never give a
width near 0, against the figures worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.stats.bradley_terry import ELO, MARGIN_FLOOR, BoardFit, Comparison
from arena.stats.intervals import t_quantile


def test_four_boards_that_almost_agree_get_the_floor_not_a_width_near_zero():
    # a ahead of b 51 times of 100 on board 0, 50 on each of the other three: on each
    # resample the gap is about ln(ahead / behind) (2 bots; the σ = 10 prior moves it by
    # under 0.1%), whose spread makes a margin of a few Elo; the floor is 0.1 / √4 natural
    # units, 8.7 Elo
    ahead = [51.0, 50.0, 50.0, 50.0]
    boards = {g: [Comparison(("a",), ("b",), k), Comparison(("b",), ("a",), 100 - k)]
              for g, k in enumerate(ahead)}
    bf = BoardFit(boards, ["a", "b"], bootstrap=400, seed=4)
    a = bf.counts @ np.array(ahead)
    se = float(np.std(np.log(a / (400 - a)))) * math.sqrt(4 / 3)
    unfloored = t_quantile(4) * se * ELO
    floor = MARGIN_FLOOR / math.sqrt(4) * ELO
    assert floor == pytest.approx(8.686, abs=1e-3)
    assert 0 < unfloored < 0.7 * floor           # 5.6 Elo: the floor binds
    assert bf.difference("a", "b").margin == pytest.approx(floor)
    # a rating is a contrast with half the weight (θ_a minus the mean of a and b): its
    # own spread is half, the floor the same
    assert bf.rating("a").margin == pytest.approx(floor)
