"""The decisions: determinized Monte Carlo (PIMC) for bids, discard, trumps and plays.

Every decision follows one loop until its deadline: sample a deal of the hidden tiles
consistent with what this seat has seen (:mod:`.knowledge`), weight it by how well it fits
the auction and the trumps named (:mod:`.beliefs`), then, on that same deal, score each
candidate action by playing the hand out (:func:`.playout.playout`) and scoring it
(:class:`.playout.Scorer`: this side's score change minus the others' mean). The action
with the best weighted mean wins. Sharing each deal between the candidates (common random
numbers) makes their comparison far sharper than their absolute values.

- Play: the candidates are the legal tiles.
- Bid: on each deal the rest of the auction is modelled (the seats still to bid bid what a
  quick count of their tiles supports, the lowest bid that beats the auction, as most
  bots do); the contract that results, this seat's or another's, is played out. This seat
  plays its own contracts taking the widow and choosing its discard and trumps by the
  quick count, or, without a widow, with each of its three likeliest trumps.
- Discard and trumps (the bidder): the candidates are the pairs (discard, trumps) that the
  quick count ranks best, or every allowed trump once the discard is made.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from moon_sdk.rules import (
    MOON,
    PASS,
    Action,
    ActionKind,
    Observation,
    Ruleset,
    action_kind,
    action_tile,
    action_trump,
    bid_value,
    discard,
    name_trump,
    play,
)

from .beliefs import Beliefs, best_strength, bid_bonus
from .knowledge import Knowledge, knowledge, sample, trick_state
from .playout import CHEAP, MOON_WIN, Scorer, playout, strength

Score = Callable[[list[int], int, float, list[float]], None]
"""``score(hands, dead, weight, sums)``: add each candidate's weighted utility on one deal."""


class Searcher:
    """A PIMC player. ``act(obs)`` answers any decision within ``think_ms``.

    Args:
        think_ms: thinking time per decision, milliseconds.
        seed: for the sampler (None: from the OS).
        min_samples: deals searched per decision even past the deadline.
        max_samples: deals per decision at most (late decisions finish early).
        discard_candidates: (discard, trumps) pairs searched when both are open.
        beliefs: weight deals by the auction and the trumps named.
        game_bonus: points a hand that wins the game is worth beyond its score.
        moon_value: points a made 21 that wins the game is worth (see
            :data:`.playout.MOON_WIN`).
        model_auction: model the rest of the auction when bidding (else a pass is worth 0
            and this seat's bid always stands).
        bid_optimism: the chance, on each deal, that this seat's own contract takes one
            trick more than the playout says (the playout's defenders see every tile and
            real ones do not; its bidder plans its discard and trumps more crudely than
            the search will).
    """

    def __init__(self, think_ms: float = 200.0, seed: int | None = None,
                 min_samples: int = 3, max_samples: int = 2000,
                 discard_candidates: int = 10, beliefs: bool = True,
                 game_bonus: float = 8.0, model_auction: bool = True,
                 bid_optimism: float = 0.0, moon_value: float = MOON_WIN) -> None:
        self.think_s = think_ms / 1000.0
        self.rng = random.Random(seed)
        self.min_samples = min_samples
        self.max_samples = max_samples
        self.discard_candidates = discard_candidates
        self.beliefs = beliefs
        self.game_bonus = game_bonus
        self.model_auction = model_auction
        self.bid_optimism = bid_optimism
        self.moon_value = moon_value
        self.last_samples = 0
        """Deals searched by the last decision (for tests and logs)."""
        self.last_values: list[float] = []
        """The last decision's candidate values (weighted mean utilities)."""
        self.last_make_p = -1.0
        """The last bid's estimated chance to make its contract (-1 after a pass)."""
        self._total = 0.0
        self._scorers: dict[Ruleset, Scorer] = {}

    # -- plumbing ------------------------------------------------------------------------
    def scorer(self, obs: Observation) -> Scorer:
        r = obs.ruleset
        s = self._scorers.get(r)
        if s is None:
            s = self._scorers[r] = Scorer(r, self.game_bonus, self.moon_value)
        s.set_scores(obs.scores)
        return s

    def act(self, obs: Observation, think_s: float | None = None) -> Action:
        """The action for ``obs`` (one of ``obs.legal_actions``)."""
        start = time.perf_counter()
        deadline = start + (self.think_s if think_s is None else think_s)
        legal = obs.legal_actions
        self.last_samples = 0
        self.last_values = []
        if len(legal) == 1:
            return legal[0]
        kind = action_kind(legal[0])
        if kind is ActionKind.PLAY:
            return self.choose_play(obs, deadline)
        if kind is ActionKind.BID:
            return self.choose_bid(obs, deadline)
        if kind is ActionKind.DISCARD:
            return self.choose_discard(obs, deadline)
        return self.choose_trump(obs, deadline)

    def _loop(self, obs: Observation, k: Knowledge, deadline: float, n_cands: int,
              score: Score) -> list[float]:
        """Sample deals until the deadline, scoring each; returns the candidates' weighted
        mean utilities."""
        sums = [0.0] * n_cands
        rng = self.rng
        beliefs = Beliefs(obs) if self.beliefs else None
        weigh = beliefs.weight if beliefs is not None and beliefs.active else None
        count = 0
        total = 0.0
        clock = time.perf_counter
        while count < self.min_samples or (count < self.max_samples and clock() < deadline):
            hands, dead = sample(k, rng)
            w = weigh(hands, dead) if weigh is not None else 1.0
            score(hands, dead, w, sums)
            total += w
            count += 1
        self.last_samples = count
        self._total = total
        self.last_values = [s / total for s in sums]
        return self.last_values

    @staticmethod
    def _best(values: list[float], tiebreak: list[float]) -> int:
        return max(range(len(values)), key=lambda i: (round(values[i], 9), tiebreak[i]))

    # -- play ----------------------------------------------------------------------------
    def choose_play(self, obs: Observation, deadline: float) -> Action:
        me, trump, bidder, high = obs.seat, obs.trump, obs.bidder, obs.bid
        moves = [action_tile(a) for a in obs.legal_actions]
        kk, led, ws, wt = trick_state(obs.trick, trump)
        taken0 = list(obs.tricks_taken)
        utility = self.scorer(obs).utility

        def score(hands: list[int], dead: int, w: float, sums: list[float]) -> None:
            for i, m in enumerate(moves):
                taken = playout(hands[:], trump, bidder, me, kk, led, ws, wt, taken0[:], m)
                sums[i] += w * utility(me, bidder, high, taken)

        values = self._loop(obs, knowledge(obs), deadline, len(moves), score)
        order = CHEAP[trump]
        return play(moves[self._best(values, [-order.index(m) for m in moves])])

    # -- bidding -------------------------------------------------------------------------
    def choose_bid(self, obs: Observation, deadline: float) -> Action:
        r = obs.ruleset
        me, n = obs.seat, r.players
        legal = list(obs.legal_actions)
        allowed = r.allowed_trumps
        hand = obs.hand
        widow_first = r.has_widow and not r.trump_before_widow
        bonus = bid_bonus(n, r.has_widow)
        high, high_seat = obs.bid, obs.bidder
        later = [] if me == obs.dealer else [
            (me + i) % n for i in range(1, (obs.dealer - me) % n + 1)]
        forced_dealer = r.all_pass == "force_dealer"
        plans: dict[int, tuple[int, int]] = {}

        def contract(seat: int, hands: list[int], dead: int, tr: int = -1) -> list[int]:
            """Tricks taken when ``seat`` plays the contract on this deal (its discard and
            trumps by the quick count unless ``tr`` is given; this seat's from the plan)."""
            h = hands[:]
            if seat == me and widow_first:
                p = plans.get(dead)
                if p is None:
                    p = plans[dead] = best_discard_trump(hand | dead, allowed)
                h[me], tr = p
            elif widow_first:
                h[seat], tr = best_discard_trump(hands[seat] | dead, allowed)
            else:
                if tr < 0:
                    tr = max(allowed, key=lambda t: strength(hands[seat], t))
                if r.has_widow:
                    h[seat] = best_discard(hands[seat] | dead, tr)
            return playout(h, tr, seat, seat, 0, -1, -1, -1, [0] * n)

        cands = [-1] if widow_first else sorted(allowed, key=lambda t: -strength(hand, t))[:3]
        options = [a for a in legal if a != PASS]
        values = [bid_value(a) for a in options]
        # candidate index: (trumps c, option j) -> c * len(options) + j; the pass last
        n_opt = len(options)
        pass_index = len(cands) * n_opt
        scorer = self.scorer(obs)
        utility = scorer.utility
        model = self.model_auction
        made = [0.0] * pass_index
        optimism = self.bid_optimism
        rng = self.rng
        opps = [s for s in range(n) if (s != me if n == 3 else s % 2 != me % 2)]
        need = [7 if v == 21 else v for v in values]

        def score(hands: list[int], dead: int, w: float, sums: list[float]) -> None:
            # the strongest seat still to bid, by the quick count
            top_seat, top = -1, 0
            if model:
                for o in later:
                    t = int(best_strength(hands[o], allowed) + bonus)
                    if t > top and t >= r.min_bid:
                        top_seat, top = o, min(t, 7)
            other: dict[int, list[int]] = {}

            def other_contract(seat: int) -> list[int]:
                tk = other.get(seat)
                if tk is None:
                    tk = other[seat] = contract(seat, hands, dead)
                return tk

            for c, tr in enumerate(cands):
                mine = contract(me, hands, dead, tr)
                if optimism and rng.random() < optimism:
                    o = max(opps, key=lambda s: mine[s])
                    if mine[o]:
                        mine[o] -= 1
                        mine[me] += 1
                t = mine[me] + (mine[(me + 2) % n] if n == 4 else 0)
                for j, v in enumerate(values):
                    if t >= need[j]:
                        made[c * n_opt + j] += w
                    if model and top > v and v != 21:
                        u = utility(me, top_seat, min(v + 1, 7),
                                    other_contract(top_seat))
                    else:
                        u = utility(me, me, v, mine)
                    sums[c * n_opt + j] += w * u
            if PASS in legal:
                u = 0.0
                if model:
                    if top > high and top_seat >= 0:
                        u = utility(me, top_seat, max(r.min_bid, high + 1),
                                    other_contract(top_seat))
                    elif high_seat >= 0:
                        u = utility(me, high_seat, high, other_contract(high_seat))
                    elif forced_dealer and later:
                        u = utility(me, obs.dealer, r.min_bid, other_contract(obs.dealer))
                sums[pass_index] += w * u

        n_cands = pass_index + (1 if PASS in legal else 0)
        vals = self._loop(obs, knowledge(obs), deadline, n_cands, score)
        best = self._best(vals, [0.0] * n_cands)
        self.last_make_p = made[best] / self._total if best < pass_index else -1.0
        if best == pass_index:
            return PASS
        a = options[best % n_opt]
        if a == MOON and vals[best] < 0:
            return PASS if PASS in legal else options[0]
        return a

    # -- the bidder's discard and trumps -------------------------------------------------
    def choose_discard(self, obs: Observation, deadline: float) -> Action:
        r = obs.ruleset
        me, high = obs.seat, obs.bid
        hand = obs.hand
        if obs.trump >= 0:
            cands = [(d, obs.trump) for d in _tiles(hand)]
        else:
            pairs = [(d, tr) for d in _tiles(hand) for tr in r.allowed_trumps]
            pairs.sort(key=lambda p: -strength(hand & ~(1 << p[0]), p[1]))
            cands = pairs[:self.discard_candidates]
        utility = self.scorer(obs).utility
        n = r.players

        def score(hands: list[int], dead: int, w: float, sums: list[float]) -> None:
            for i, (d, tr) in enumerate(cands):
                h = hands[:]
                h[me] = hand & ~(1 << d)
                taken = playout(h, tr, me, me, 0, -1, -1, -1, [0] * n)
                sums[i] += w * utility(me, me, high, taken)

        values = self._loop(obs, knowledge(obs), deadline, len(cands), score)
        best = self._best(values, [-i for i in range(len(cands))])
        return discard(cands[best][0])

    def choose_trump(self, obs: Observation, deadline: float) -> Action:
        r = obs.ruleset
        me, high = obs.seat, obs.bid
        hand = obs.hand
        cands = [action_trump(a) for a in obs.legal_actions]
        widow_later = r.has_widow and obs.widow == 0 and obs.discard < 0
        utility = self.scorer(obs).utility
        n = r.players

        def score(hands: list[int], dead: int, w: float, sums: list[float]) -> None:
            for i, tr in enumerate(cands):
                h = hands[:]
                if widow_later:
                    h[me] = best_discard(hand | dead, tr)
                taken = playout(h, tr, me, me, 0, -1, -1, -1, [0] * n)
                sums[i] += w * utility(me, me, high, taken)

        values = self._loop(obs, knowledge(obs), deadline, len(cands), score)
        tiebreak = [strength(hand, tr) for tr in cands]
        return name_trump(cands[self._best(values, tiebreak)])


def _tiles(mask: int) -> list[int]:
    return [t for t in range(28) if (mask >> t) & 1]


def best_discard(hand8: int, trump: int) -> int:
    """The 7 tiles left after the quick count's discard from ``hand8`` under ``trump``."""
    best, best_s = hand8, float("-inf")
    for d in _tiles(hand8):
        h = hand8 & ~(1 << d)
        s = strength(h, trump)
        if s > best_s:
            best, best_s = h, s
    return best


def best_discard_trump(hand8: int, allowed: tuple[int, ...]) -> tuple[int, int]:
    """``(7 tiles kept, trumps)``: the quick count's best discard and trumps for ``hand8``
    (the widow taken)."""
    best, best_s = (hand8, allowed[0]), float("-inf")
    for d in _tiles(hand8):
        h = hand8 & ~(1 << d)
        for tr in allowed:
            s = strength(h, tr)
            if s > best_s:
                best, best_s = (h, tr), s
    return best


__all__ = ["Searcher", "best_discard", "best_discard_trump"]
