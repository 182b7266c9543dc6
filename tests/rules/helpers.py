"""Helpers for hand-built positions and for random play.

Positions are built through the public API only: a chosen deal (:func:`deal_masks`) goes
through ``GameState.from_deal``, which checks it (every tile exactly once) and may set the
starting ``scores``, as if earlier hands had been played (:func:`new_game`,
:func:`redeal`). Everything after that is real ``apply`` calls, so the engine does all the
work the test then checks. Without a chosen deal the dealer is chosen honestly, by picking
a seed whose first dealer is the one wanted (:func:`seed_for_dealer`).

The hand-worked deals at the end (``SIX_TRICKS_3P``, ``all_doubles``, ``EXAMPLE_8_DEAL``)
come with the trick-by-trick reasoning that gives their results.
"""

from __future__ import annotations

import random

from moon_sdk.rules import (
    LED_SUIT,
    MOON,
    PASS,
    RANK,
    GameState,
    Phase,
    Ruleset,
    action_name,
    bid_value,
    first_dealer,
    parse_action,
    parse_tile,
    tiles_of,
)
from moon_sdk.rules.actions import TRUMP_BASE
from moon_sdk.rules.tiles import SUIT_MASK

DOUBLES_TEXT = "6-6 5-5 4-4 3-3 2-2 1-1 0-0"


def mask(text: str) -> int:
    """The tile mask of ``"6-4 3-3 ..."`` (empty text: no tiles)."""
    m = 0
    for word in text.split():
        t = parse_tile(word)
        assert not (m >> t) & 1, f"tile {word} given twice"
        m |= 1 << t
    return m


def seed_for_dealer(players: int, dealer: int) -> int:
    """The smallest seed whose first hand is dealt by ``dealer``."""
    return next(s for s in range(1000) if first_dealer(s, players) == dealer)


def deal_masks(r: Ruleset, hands: dict[int, str], widow: str = "") -> tuple[list[int], int]:
    """A deal as masks: ``(hands, widow)`` for ``GameState.from_deal``.

    ``hands`` maps seats to their 7 tiles as text; seats left out get the remaining tiles
    in ascending order, 7 each; with a widow in the ruleset, ``widow`` names its tile
    (else the last remaining tile). The result must be exactly the ruleset's tile set.
    """
    given = {seat: mask(text) for seat, text in hands.items()}
    used = mask(widow)
    for m in given.values():
        assert not used & m, "a tile is given twice"
        used |= m
    assert used & ~r.tile_set == 0, "a tile outside this ruleset's set"
    rest = tiles_of(r.tile_set & ~used)
    out = []
    for seat in range(r.players):
        if seat in given:
            out.append(given[seat])
        else:
            m = 0
            for t in rest[:7]:
                m |= 1 << t
            rest = rest[7:]
            out.append(m)
    w = mask(widow)
    for t in rest:
        w |= 1 << t
    return out, w


def new_game(ruleset: Ruleset, dealer: int, hands: dict[int, str] | None = None,
             widow: str = "", scores: list[int] | None = None) -> GameState:
    """A game whose first hand is dealt by ``dealer``, with a chosen deal
    (:func:`deal_masks`) or the seed's, and chosen starting scores (as if earlier hands had
    been played) or zeros."""
    seed = seed_for_dealer(ruleset.players, dealer)
    if hands is None:
        state = GameState(ruleset, seed)
        if scores is None:
            return state
        hands_, widow_ = list(state.hands), state.widow  # the seed's own deal
    else:
        hands_, widow_ = deal_masks(ruleset, hands, widow)
    return GameState.from_deal(ruleset, hands_, widow_, dealer=dealer, seed=seed,
                               scores=scores)


def redeal(state: GameState, hands: dict[int, str], widow: str = "") -> GameState:
    """The next hand of ``state``'s game (just dealt: nobody has acted in it) with a chosen
    deal instead: a game from that position, with the same dealer and scores."""
    assert state.phase == Phase.BIDDING and not state.bids, "only right after a deal"
    h, w = deal_masks(state.ruleset, hands, widow)
    return GameState.from_deal(state.ruleset, h, w, dealer=state.dealer, seed=state.seed,
                               scores=state.scores)


def act(state: GameState, *texts: str) -> None:
    """Apply actions given as text (``"bid 4"``, ``"pass"``, ``"play 6-4"``, ...)."""
    for text in texts:
        state.apply(parse_action(text))


def names(actions: list[int]) -> list[str]:
    """Legal actions as text, for readable assertions."""
    return [action_name(a) for a in actions]


def follow_any(state: GameState) -> None:
    """Play the current seat's lowest legal tile (a filler move in scripted hands)."""
    state.apply(state.legal_actions()[0])


def _best_number(hand: int) -> tuple[int, int]:
    """The number with the most tiles in ``hand`` and how many."""
    counts = [(bin(hand & SUIT_MASK[k]).count("1"), k) for k in range(7)]
    c, k = max(counts)
    return k, c


def sensible_action(state: GameState, rng: random.Random,
                    legal: list[int] | None = None) -> int:
    """A random policy that plays well enough for games to last a sensible number of hands.

    Uniformly random play makes nearly every contract fail and games run to hundreds of
    hands. This one bids on the length of its longest number (now and then at random, and
    rarely the moon), names that number trumps three times in four (else any contract),
    and plays greedily four times in five: lead the strongest tile, follow with the
    cheapest tile that wins the trick so far, else the weakest; otherwise at random. It
    only chooses among ``legal`` (default: ``state.legal_actions()``); the tests never
    rely on its choices.
    """
    if legal is None:
        legal = state.legal_actions()
    phase = state.phase
    seat = state.current_player
    if phase == Phase.BIDDING:
        r = rng.random()
        _, length = _best_number(state.hands[seat])
        if r < 0.005 or (length >= 6 and r < 0.5):
            return MOON
        want = length + (2 if r < 0.2 else 1)
        numbers = [a for a in legal if a not in (PASS, MOON) and bid_value(a) <= want]
        if numbers and (r < 0.6 or PASS not in legal):
            return numbers[0] if rng.random() < 0.7 else rng.choice(numbers)
        return PASS if PASS in legal else legal[0]
    if phase == Phase.TRUMP:
        k, _ = _best_number(state.hands[seat])
        if rng.random() < 0.75 and TRUMP_BASE + k in legal:
            return TRUMP_BASE + k
        return rng.choice(legal)
    if phase != Phase.PLAY or rng.random() < 0.2:
        return rng.choice(legal)
    trump = state.trump
    if not state.trick:
        return max(legal, key=lambda t: RANK[trump][LED_SUIT[trump][t]][t])
    ranks = RANK[trump][state.led]
    best = max(ranks[t] for _, t in state.trick)
    winners = [t for t in legal if ranks[t] > best]
    if winners:
        return min(winners, key=lambda t: ranks[t])
    return min(legal, key=lambda t: (ranks[t], t))


def start_play(ruleset: Ruleset, hands: dict[int, str], trump: str, widow: str = "",
               discard: str | None = None, bid: int = 4, dealer: int = 0, bidder: int = 1,
               scores: list[int] | None = None) -> GameState:
    """A hand ready for its first lead: the chosen deal, ``bidder`` bids ``bid`` on its turn
    and everyone else passes; with a widow the bidder discards ``discard`` (default: the
    widow tile itself); trumps ``trump`` (text, e.g. ``"4"`` or ``"doubles"``) are named in
    the ruleset's order. Returns the state with the bidder to lead."""
    state = new_game(ruleset, dealer, hands, widow, scores)
    n = ruleset.players
    for k in range(1, n + 1):
        seat = (dealer + k) % n
        act(state, f"bid {bid}" if seat == bidder else "pass")
        if bid == 21 and seat == bidder:
            break
    if ruleset.has_widow:
        to_discard = widow if discard is None else discard
        if ruleset.trump_before_widow:
            act(state, f"trump {trump}", f"discard {to_discard}")
        else:
            act(state, f"discard {to_discard}", f"trump {trump}")
    else:
        act(state, f"trump {trump}")
    assert state.phase == Phase.PLAY and state.current_player == bidder
    return state


def play_tricks(state: GameState, *tricks: str) -> None:
    """Play whole tricks, each given as its tiles in play order (``"6-5 6-4 5-4"``)."""
    for trick in tricks:
        for word in trick.split():
            act(state, f"play {word}")


def play_out(state: GameState) -> None:
    """Finish the hand in play, every seat playing its lowest legal tile."""
    hand = state.hand_number
    while state.phase == Phase.PLAY and state.hand_number == hand:
        state.apply(state.legal_actions()[0])


# Hand-worked deals used by several test files -------------------------------------------

# 3 players, dealer 0. Seat 1 bids (the others pass), takes the widow 6-1, discards 0-0,
# names sixes (six of the six sixes are then in its hand) and takes 6 tricks:
#   1. S1 2-1  S2 2-2  S0 4-2   twos: 2-2 (seat 2)
#   2. S2 5-5  S0 5-1  S1 6-1   fives: seat 1 has none and trumps (seat 1)
#   3-7. seat 1 leads 6-6 6-5 6-4 6-3 6-2; nobody else holds a trump (seat 1)
# Tricks taken: seat 0: 0, seat 1: 6, seat 2: 1.
SIX_TRICKS_3P = {1: "6-6 6-5 6-4 6-3 6-2 2-1 0-0",
                 2: "2-2 5-5 1-1 3-1 3-2 3-3 4-1",
                 0: "4-2 4-3 4-4 5-1 5-2 5-3 5-4"}
SIX_TRICKS_3P_WIDOW = "6-1"
SIX_TRICKS_3P_PLAY = ("2-1 2-2 4-2", "5-5 5-1 6-1", "6-6 1-1 4-3", "6-5 3-1 4-4",
                      "6-4 3-2 5-2", "6-3 3-3 5-3", "6-2 4-1 5-4")


def six_tricks_3p(ruleset: Ruleset, bid: int, scores: list[int] | None = None) -> GameState:
    """Play the SIX_TRICKS_3P hand with seat 1 bidding ``bid``; returns the state after."""
    s = start_play(ruleset, SIX_TRICKS_3P, trump="6", widow=SIX_TRICKS_3P_WIDOW,
                   discard="0-0", bid=bid, scores=scores)
    play_tricks(s, *SIX_TRICKS_3P_PLAY)
    return s


def all_doubles(ruleset: Ruleset, taker: int, bid: int, bidder: int = 1, dealer: int = 0,
                scores: list[int] | None = None) -> GameState:
    """A hand at no trumps where ``taker`` holds all seven doubles and everyone plays its
    lowest legal tile: ``taker`` takes all 7 tricks. (A double led is the top of its suit;
    and when another seat leads a-b, the taker's only a-tile is a-a, which it must play and
    which wins.) ``bidder`` bids ``bid``, the rest pass; a widow (3 players: 6-5) is
    discarded by the bidder. Returns the state after the hand."""
    widow = "6-5" if ruleset.has_widow else ""
    s = start_play(ruleset, {taker: DOUBLES_TEXT}, trump="none", widow=widow, bid=bid,
                   bidder=bidder, dealer=dealer, scores=scores)
    play_out(s)
    return s


# Example 8's hand, worked out by hand. 4 players, dealer 0; seat 1 bids 5 (the others
# pass) and names sixes; it holds six of the seven sixes.
#   1. S1 1-0  S2 1-1  S3 2-1  S0 4-1   ones: 1-1 (seat 2)
#   2. S2 6-0  S3 3-3  S0 0-0  S1 6-1   trumps led: 6-1 beats 6-0 (seat 1)
#   3-7. seat 1 leads 6-6, 6-5, 6-4, 6-3, 6-2; nobody else has a trump left: seat 1.
# Seats 1 and 3 take 6 tricks, seats 0 and 2 take 1.
EXAMPLE_8_DEAL = {1: "6-6 6-5 6-4 6-3 6-2 6-1 1-0",
                  2: "1-1 6-0 5-5 5-4 5-3 5-2 5-0",
                  3: "2-1 3-1 4-4 4-3 4-2 4-0 3-3",
                  0: "4-1 5-1 0-0 2-0 2-2 3-0 3-2"}
EXAMPLE_8_TRICKS = ("1-0 1-1 2-1 4-1", "6-0 3-3 0-0 6-1", "6-6 5-5 4-4 5-1",
                    "6-5 5-4 4-3 2-0", "6-4 5-3 4-2 2-2", "6-3 5-2 4-0 3-0",
                    "6-2 5-0 3-1 3-2")
