"""The heuristic bot: bids the tricks its hand can expect, names its best trump, and
plays sensibly (win cheaply when it can, don't overtake a partner, throw low otherwise).

Everything it needs comes from the SDK's rules engine: the trump, follow and rank tables
the referee itself uses.
"""

from moon_sdk import Bot, run
from moon_sdk.rules import (
    DOUBLES,
    FOLLOW_MASK,
    LED_SUIT,
    MOON,
    NO_TRUMP,
    PASS,
    RANK,
    TRUMP_MASK,
    ActionKind,
    action_kind,
    action_tile,
    action_trump,
    bid_value,
    is_double,
    iter_tiles,
    tile_pips,
    unseen_tiles,
)


def expected_tricks(hand: int, trump: int) -> float:
    """A rough count of the tricks ``hand`` takes with ``trump``: sure trumps, long trumps,
    and off-suit doubles (the top of their suit)."""
    trumps = hand & TRUMP_MASK[trump]
    n_trumps = trumps.bit_count()
    # how many of the top trumps we hold in an unbroken run from the top
    order = sorted(iter_tiles(TRUMP_MASK[trump]), key=lambda t: -RANK[trump][7][t])
    top_run = 0
    for t in order:
        if (hand >> t) & 1:
            top_run += 1
        else:
            break
    score = top_run + 0.6 * max(0, n_trumps - top_run)
    if trump == NO_TRUMP:
        score = 0.0
    for t in iter_tiles(hand & ~trumps):
        if is_double(t):
            score += 0.9 if trump != NO_TRUMP else 1.0
        else:
            h, lo = tile_pips(t)
            if (hand >> (h * (h + 1) // 2 + h)) & 1 and h >= 5:
                score += 0.3  # a second tile under a double of the same suit
    return score


def best_trump(hand: int, allowed) -> tuple[int, float]:
    return max(((t, expected_tricks(hand, t)) for t in allowed), key=lambda x: x[1])


class HeuristicBot(Bot):
    name = "heuristic"
    version = "1.0"

    def act(self, obs):
        legal = obs.legal_actions
        kind = action_kind(legal[0])
        if kind is ActionKind.BID:
            return self.bid(obs)
        if kind is ActionKind.DISCARD:
            return self.discard(obs)
        if kind is ActionKind.TRUMP:
            allowed = [action_trump(a) for a in legal]
            return legal[allowed.index(best_trump(obs.hand, allowed)[0])]
        return self.play(obs)

    def bid(self, obs):
        r = obs.ruleset
        _, est = best_trump(obs.hand, obs.ruleset.allowed_trumps)
        if r.players == 4:
            est += 1.0  # a partner's help
        elif r.has_widow:
            est += 0.3  # the widow
        target = int(est)
        if target >= 7 and est >= 7.5:
            return MOON if MOON in obs.legal_actions else obs.legal_actions[-1]
        target = min(target, 7)
        options = [a for a in obs.legal_actions if a not in (PASS, MOON)]
        fitting = [a for a in options if bid_value(a) <= target]
        if fitting:
            return fitting[0]  # the lowest bid that beats the auction
        if PASS in obs.legal_actions:
            return PASS
        return options[0] if options else obs.legal_actions[0]

    def discard(self, obs):
        allowed = obs.ruleset.allowed_trumps
        best, best_score = obs.legal_actions[0], -1.0
        for a in obs.legal_actions:
            t = action_tile(a)
            _, est = best_trump(obs.hand & ~(1 << t), allowed)
            if est > best_score:
                best, best_score = a, est
        return best

    def play(self, obs):
        trump = obs.trump
        legal = [action_tile(a) for a in obs.legal_actions]
        r = obs.ruleset
        unseen = unseen_tiles(obs)

        def partner_of(seat):
            return (seat + 2) % 4 if r.players == 4 else -1

        if not obs.trick:
            return self.lead(obs, legal, unseen)
        led = LED_SUIT[trump][obs.trick[0][1]]
        ranks = RANK[trump][led]
        win_seat, win_tile = max(obs.trick, key=lambda p: ranks[p[1]])
        last_to_play = len(obs.trick) == r.players - 1
        partner_winning = win_seat == partner_of(obs.seat)
        beaters = [t for t in legal if ranks[t] > ranks[win_tile]]
        if beaters and not (partner_winning and (last_to_play or self.is_boss(
                win_tile, trump, led, unseen))):
            return min(beaters, key=lambda t: ranks[t])
        return self.cheapest(legal, trump)

    @staticmethod
    def is_boss(t, trump, led, unseen):
        ranks = RANK[trump][led]
        return all(ranks[u] <= ranks[t] for u in iter_tiles(unseen))

    def lead(self, obs, legal, unseen):
        trump = obs.trump
        my_side_bid = obs.bidder == obs.seat or (
            obs.ruleset.players == 4 and obs.bidder % 2 == obs.seat % 2)
        trumps_out = unseen & TRUMP_MASK[trump]
        for t in sorted(legal, key=lambda t: -RANK[trump][LED_SUIT[trump][t]][t]):
            led = LED_SUIT[trump][t]
            if led == 7 and not (my_side_bid and trumps_out):
                continue
            if self.is_boss(t, trump, led, unseen & (FOLLOW_MASK[trump][led] if led < 7
                                                     else TRUMP_MASK[trump])):
                return t
        return self.cheapest(legal, trump)

    @staticmethod
    def cheapest(tiles, trump):
        def cost(t):
            trumpish = (TRUMP_MASK[trump] >> t) & 1
            h, lo = tile_pips(t)
            return (trumpish, is_double(t) and trump != DOUBLES, h + lo)
        return min(tiles, key=cost)


if __name__ == "__main__":
    run(HeuristicBot())
