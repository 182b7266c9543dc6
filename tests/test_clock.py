"""A seat's clock, by arithmetic alone (no event loop): each expected figure is worked
out by hand from docs/protocol.md, "Time": a turn has its decision time, what runs over
comes out of the bank, a rejoin shows what is left, a timeout spends the bank."""

from __future__ import annotations

import pytest

from arena.core.clock import Clock


def test_the_deadline_is_the_decision_time_plus_the_bank():
    c = Clock(decision_ms=400, bank_ms=1_000)
    c.start(50.0)
    assert c.deadline == pytest.approx(51.4)
    c.start(60.0)  # the next turn starts afresh
    assert c.deadline == pytest.approx(61.4)


def test_an_answer_within_the_decision_time_leaves_the_bank_alone():
    c = Clock(decision_ms=400, bank_ms=1_000)
    c.start(10.0)
    assert c.charge(10.3999) == pytest.approx(0.3999)
    assert c.bank_ms == 1_000


def test_time_over_the_decision_comes_out_of_the_bank_in_whole_ms():
    c = Clock(decision_ms=400, bank_ms=1_000)
    c.start(10.0)
    c.charge(10.6509)  # 650.9 ms: 650 whole ms, 250 over
    assert c.bank_ms == 750
    c.start(20.0)  # the next turn's deadline counts the smaller bank
    assert c.deadline == pytest.approx(21.15)
    c.charge(21.0)  # 1000 ms: 600 over, out of a bank of 750
    assert c.bank_ms == 150
    c.start(30.0)
    c.charge(31.0)  # 600 over a bank of 150: the bank is spent, never negative
    assert c.bank_ms == 0


def test_a_rejoin_shows_the_time_left_not_a_fresh_turn():
    c = Clock(decision_ms=400, bank_ms=0)
    c.start(5.0)
    assert c.left(5.25) == (150, 0)  # 250 ms gone: 150 ms of decision time, no bank
    c = Clock(decision_ms=400, bank_ms=1_000)
    c.start(5.0)
    assert c.left(5.125) == (275, 1_000)
    assert c.left(5.75) == (0, 650)  # 350 ms into the bank
    assert c.left(7.0) == (0, 0)  # past the deadline: nothing left, never negative
    assert c.bank_ms == 1_000  # looking does not charge


def test_a_timeout_spends_the_bank():
    c = Clock(decision_ms=400, bank_ms=1_000)
    c.start(0.0)
    c.flag()
    assert c.bank_ms == 0
    c.start(1.0)
    assert c.deadline == pytest.approx(1.4)
