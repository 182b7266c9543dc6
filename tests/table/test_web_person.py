"""A person at a page (:class:`arena.table.web.WebPerson`): one whose page stops asking
for the table's state has left, long before their clock runs out; one whose page keeps
asking is waited for."""

from __future__ import annotations

import threading

import pytest
from moon_sdk.convert import ruleset_to_pb
from moon_sdk.rules import Ruleset, bid
from moon_sdk.v1 import bot_pb2 as bpb
from test_choice import HANDS, at, dealt

from arena.table.seat import LeftTable
from arena.table.web import WebPerson

HOUR_MS = 3_600_000


def seated(gone_s: float) -> WebPerson:
    """A person seated at seat 0 of a moon3 table (the referee's welcome)."""
    person = WebPerson(gone_s=gone_s)
    person.welcome(bpb.Welcome(seat=0, ruleset=ruleset_to_pb(Ruleset.preset("moon3")),
                               seat_names=["human", "b", "c"]))
    return person


def test_a_page_that_never_asks_has_left_before_the_clock_ends() -> None:
    person = seated(0.3)
    # an hour on the clock: only the page's absence can end this move
    with pytest.raises(LeftTable, match=r"^the page was gone for over 0 s$"):
        person.choose(at(dealt(HANDS, "6-3")), HOUR_MS, HOUR_MS)


def test_a_page_that_keeps_asking_is_waited_for() -> None:
    person = seated(0.3)
    o = at(dealt(HANDS, "6-3"))
    stop = threading.Event()

    def page() -> None:  # polls as the page does, then answers "bid 5" (choice 3)
        for _ in range(10):
            person.state(0, 0.1)
        person.answer({"text": "3"})
        stop.set()

    th = threading.Thread(target=page)
    th.start()
    try:
        # a second of polls, each under 0.3 s apart: the person is there, and answers
        assert person.choose(o, HOUR_MS, HOUR_MS) == bid(5)
    finally:
        th.join()
    assert stop.is_set()
    assert WebPerson().gone_s is None  # moon play --web waits for the clock alone
