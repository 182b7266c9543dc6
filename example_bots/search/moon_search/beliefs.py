"""Soft inferences from the auction and the trumps named, as importance weights on deals.

Every deal :func:`.knowledge.sample` draws is possible; some are likelier than others. A
seat that bid 6 rarely holds a weak hand; a seat that passed rarely holds a strong one; a
bidder who named fives usually holds several fives. :class:`Beliefs` turns that into a
weight for each deal, from a quick count of the seat's dealt tiles (what most bidders,
the heuristic bot's among them, go by). Every weight has a floor, so a bot that bids at
random misleads the search only a little.
"""

from __future__ import annotations

import math

from moon_sdk.rules import DOUBLES, MOON_BID, NO_TRUMP, Observation, Phase

from .knowledge import played_by
from .playout import TM, strength

FLOOR = 0.12
"""Least weight any one inference gives a deal."""
SLOPE = 1.6
"""How sharply a bid's weight falls as the hand's count leaves the bid behind."""
TRUMP_SLOPE = 1.2


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def bid_bonus(players: int, has_widow: bool) -> float:
    """What a bidder counts on beyond its own tiles: a partner's help, or the widow."""
    return 1.0 if players == 4 else (0.3 if has_widow else 0.0)


def best_strength(hand: int, allowed: tuple[int, ...]) -> float:
    """The quick count of ``hand`` under its best trumps."""
    return max(strength(hand, t) for t in allowed)


class Beliefs:
    """Importance weights for deals seen from ``obs.seat`` (see the module doc)."""

    def __init__(self, obs: Observation, use_bids: bool = True, use_trump: bool = True
                 ) -> None:
        r = obs.ruleset
        self.allowed = r.allowed_trumps
        self.bonus = bid_bonus(r.players, r.has_widow)
        self.me = obs.seat
        _, self.played = played_by(obs)
        self.bids: list[tuple[int, int, int]] = []
        """``(seat, value, lowest bid open to it)`` of the other seats' bids."""
        high = 0
        for seat, v in obs.bids:
            lo = max(r.min_bid, high + 1)
            if seat != obs.seat and use_bids:
                self.bids.append((seat, v, lo))
            if v:
                high = v
        self.bidder = obs.bidder if obs.bidder != obs.seat else -1
        self.trump = obs.trump if use_trump and self.bidder >= 0 else -1
        self.widow_in_bidder = r.has_widow and obs.phase == Phase.PLAY
        self.active = bool(self.bids) or (self.trump >= 0 and self.trump != NO_TRUMP)

    def dealt(self, seat: int, hands: list[int], dead: int) -> int:
        """The seat's tiles this hand (now and played; a bidder's with the widow)."""
        h = hands[seat] | self.played[seat]
        if seat == self.bidder and self.widow_in_bidder:
            h |= dead
        return h

    def weight(self, hands: list[int], dead: int) -> float:
        """The deal's weight, 0 < w <= 1."""
        if not self.active:
            return 1.0
        w = 1.0
        est: dict[int, float] = {}
        for seat, v, lo in self.bids:
            e = est.get(seat)
            if e is None:
                e = est[seat] = best_strength(self.dealt(seat, hands, dead),
                                              self.allowed) + self.bonus
                if seat == self.bidder and self.widow_in_bidder:
                    e -= 0.6  # eight tiles counted, not seven
            if v == 0:
                p = _sigmoid(SLOPE * (lo + 0.25 - e))
            elif v == MOON_BID:
                p = _sigmoid(SLOPE * (e - 7.0))
            else:
                p = _sigmoid(SLOPE * (e - v + 0.5))
            w *= FLOOR + (1.0 - FLOOR) * p
        if self.trump >= 0 and self.trump != NO_TRUMP:
            h = self.dealt(self.bidder, hands, dead)
            n_trumps = (h & TM[self.trump]).bit_count()
            centre = 2.5 if self.trump != DOUBLES else 2.0
            w *= FLOOR + (1.0 - FLOOR) * _sigmoid(TRUMP_SLOPE * (n_trumps - centre))
        return w
