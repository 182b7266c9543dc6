"""The search bot: determinized Monte Carlo over the hidden tiles.

For every decision it deals the tiles it has not seen, many times over, consistently with
everything it has observed (tiles played, voids shown by failures to follow suit, hand
sizes, the widow and its own discard when it is the bidder), plays each candidate action
out on every deal with a fast policy, and takes the action with the best mean score
(see ``moon_search/search.py``).

Thinking time per decision: ``MOON_SEARCH_THINK_MS`` (default 200), never more than 40%
of the referee's ``decision_ms``.
"""

import logging
import os

from moon_sdk import Bot, run
from moon_search import Searcher

log = logging.getLogger("search")

DEFAULT_THINK_MS = 200.0
SHARE_OF_DECISION = 0.4


def think_ms_setting() -> float:
    """The thinking time from ``MOON_SEARCH_THINK_MS`` (milliseconds), else the default."""
    raw = os.environ.get("MOON_SEARCH_THINK_MS", "")
    try:
        v = float(raw) if raw else DEFAULT_THINK_MS
    except ValueError:
        v = DEFAULT_THINK_MS
    return max(1.0, v)


class SearchBot(Bot):
    name = "search"
    version = "1.0"

    def __init__(self, think_ms: float | None = None, seed: int | None = None) -> None:
        self.think_ms = think_ms_setting() if think_ms is None else think_ms
        self.searcher = Searcher(think_ms=self.think_ms, seed=seed)

    def on_welcome(self, welcome):
        decision_ms = welcome.time_control.decision_ms
        if decision_ms:
            cap = SHARE_OF_DECISION * decision_ms
            if self.think_ms > cap:
                self.think_ms = cap
                self.searcher.think_s = cap / 1000.0

    def act(self, obs):
        try:
            return self.searcher.act(obs)
        except Exception:  # never forfeit over a bug in the search: play on, and say so
            log.exception("search failed; playing the first legal action")
            return obs.legal_actions[0]


if __name__ == "__main__":
    run(SearchBot())
