"""Property tests over 10,000+ seeded random games: every preset and random combinations of
every option, played by a random policy (``helpers.sensible_action``).

At every step: every tile is accounted for; the legal actions are exactly what the simple
model in ``reference.py`` allows; a legal action exists until the game ends and none after.
At the end of every hand: the whole hand (bids, leads, every play's legality, every trick's
winner, tricks taken, made/set, score changes, the end of the game) is recomputed by the
model from the recorded plays. Per game: replay from seed + history is identical, clones are
independent (a clone plays on with ``apply_unchecked``, and its replay with ``apply`` must
match it), and the game ends within a bounded number of steps. In some games at every step,
in the others at a few steps: ``is_legal`` holds for exactly the legal actions and ``apply``
refuses everything else, state unchanged; and ``observe(state, seat)`` is unchanged when
everything the seat may not know is scrambled (other hands, the widow, another's discard,
earlier deals), so no hidden tile can leak through it.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import multiprocessing
import operator
import os
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moon_sdk.rules import (
    PRESETS,
    GameState,
    IllegalActionError,
    Phase,
    Ruleset,
    Termination,
    deal,
    first_dealer,
    observe,
    tiles_of,
)
from moon_sdk.rules.actions import NUM_ACTIONS

from . import reference as ref
from .helpers import sensible_action

MAX_STEPS = 20_000
"""No game of the random policy comes near this; reaching it means a game did not end."""

# The documented action encoding (actions.py), written out independently.
BID_ACTION = {0: 56, 3: 57, 4: 58, 5: 59, 6: 60, 7: 61, 21: 62}
CONTRACT_ACTION = {**{k: 63 + k for k in range(7)}, "doubles": 70, "none": 71}


def tiles(mask: int) -> list[ref.Pips]:
    return [PIPS[t] for t in tiles_of(mask)]


PIPS = ref.PIPS_BY_INDEX
INDEX = {ref.pips(i): i for i in range(28)}
"""``ref.index`` as a table: the same numbers (asserted below), looked up at every step."""
assert all(INDEX[t] == ref.index(t) == ref.index(t[::-1]) for t in PIPS)


def freeze(v: Any) -> Any:
    """``v`` with every list in it, however deep, a tuple (a state's lists hold no lists:
    they are copied whole, in C, not walked an item at a time)."""
    if isinstance(v, list):
        if any(map(isinstance, v, itertools.repeat(list))):
            return tuple(freeze(x) for x in v)
        return tuple(v)
    return v


_SLOTS = operator.attrgetter(*GameState.__slots__)


def fingerprint(s: GameState) -> tuple[Any, ...]:
    """Everything in a state, as an immutable value."""
    return tuple(map(freeze, _SLOTS(s)))


def snapshot(s: GameState) -> tuple[Any, ...]:
    """Everything in a state with its lists copied: ``_SLOTS(s) == snapshot(s)`` until the
    state changes. The same test as comparing fingerprints, with no walk over the lists'
    items on the side that is read again and again (list equality runs in C)."""
    return tuple(map(_copied, _SLOTS(s)))


def _copied(v: Any) -> Any:
    if isinstance(v, list):
        if any(map(isinstance, v, itertools.repeat(list))):
            return [_copied(x) for x in v]
        return v[:]
    return v


# -- per-step checks ------------------------------------------------------------------------

@functools.cache
def trump_actions(r: Ruleset) -> list[int]:
    """The trump actions the simple model allows under ``r``."""
    numbers = [k for k in range(7) if any(k in t for t in ref.tile_set(r.players,
                                                                        r.remove_double_blank))]
    kinds: list[ref.Contract] = list(numbers)
    if r.allow_doubles_trump:
        kinds.append("doubles")
    if r.allow_no_trump:
        kinds.append("none")
    return sorted(CONTRACT_ACTION[k] for k in kinds)


def expected_legal(s: GameState) -> list[int]:
    """The current seat's legal actions per the simple model and the public state."""
    r = s.ruleset
    n = r.players
    phase = s.phase
    if phase == Phase.PLAY:
        trick = s.trick
        leader = trick[0][0] if trick else s.current_player
        assert s.current_player == (leader + len(trick)) % n
        hand = tiles(s.hands[s.current_player])
        legal = ref.legal_plays(hand, [PIPS[t] for _, t in trick], ref.contract(s.trump))
        return sorted(map(INDEX.__getitem__, legal))
    if phase == Phase.BIDDING:
        assert s.current_player == (s.dealer + 1 + len(s.bids)) % n
        values = ref.legal_bid_values([v for _, v in s.bids], s.current_player == s.dealer,
                                      r.min_bid, r.all_pass == "force_dealer")
        return sorted(BID_ACTION[v] for v in values)
    if phase == Phase.DISCARD:
        assert s.current_player == s.bidder and s.hands[s.bidder].bit_count() == 8
        return sorted(28 + INDEX[t] for t in tiles(s.hands[s.bidder]))
    assert phase == Phase.TRUMP and s.current_player == s.bidder
    return trump_actions(r)


def check_tiles_accounted(s: GameState) -> None:
    r = s.ruleset
    parts = list(s.hands) + [s.played]
    if s.discard >= 0:
        parts.append(1 << s.discard)
    if not s.widow_taken:
        parts.append(s.widow)
    union = 0
    for p in parts:
        assert not union & p, "a tile is in two places"
        union |= p
    assert union == r.tile_set
    for _, t in s.trick:
        assert s.played >> t & 1
    # (That each seat plays exactly one tile a trick is checked per hand, in check_hand.)


def scrambled(s: GameState, seat: int, rng: random.Random) -> GameState:
    """A clone of ``s`` in which everything ``seat`` may not know is shuffled: the other
    seats' hands, the widow (unless ``seat`` took it), the discard (unless it is
    ``seat``'s), this hand's deal and every earlier hand's deal, widow and discard."""
    c = s.clone()
    sees_widow = seat == s.bidder and s.widow_taken
    own_discard = seat == s.bidder
    pool = 0
    for other in range(s.n):
        if other != seat:
            pool |= s.hands[other]
    if not sees_widow:
        pool |= s.widow
    if not own_discard and s.discard >= 0:
        pool |= 1 << s.discard
    pool_tiles = [t for t in range(28) if pool >> t & 1]
    rng.shuffle(pool_tiles)
    hands = list(s.hands)
    for other in range(s.n):
        if other != seat:
            k = s.hands[other].bit_count()
            hands[other] = sum(1 << t for t in pool_tiles[:k])
            pool_tiles = pool_tiles[k:]
    c.hands = hands
    everything = list(range(28))
    if not sees_widow and s.widow:
        c.widow = 1 << rng.choice(everything)
    if not own_discard and s.discard >= 0:
        c.discard = rng.choice(everything)
    c.dealt = tuple(1 << rng.choice(everything) for _ in range(s.n))
    c.hand_records = [_replaced(h, dealt=(0,) * s.n, widow=rng.getrandbits(28),
                                discard=rng.choice(everything))
                      for h in s.hand_records]
    return c


def _replaced(record: Any, **fields: Any) -> Any:
    """``dataclasses.replace(record, **fields)`` without the call of ``__init__`` (a hand
    record's has no checks; it was a tenth of these games' time)."""
    c = object.__new__(record.__class__)
    vars(c).update(vars(record), **fields)
    return c


def check_observations(s: GameState, rng: random.Random) -> None:
    for seat in range(s.n):
        o = observe(s, seat)
        assert o.seat == seat and o.hand == s.hands[seat]
        is_bidder = seat == s.bidder
        assert o.widow == (s.widow if is_bidder and s.widow_taken else 0)
        assert o.discard == (s.discard if is_bidder else -1)
        to_act = s.current_player == seat
        assert o.legal_actions == (tuple(s.legal_actions()) if to_act else ())
        assert observe(scrambled(s, seat, rng), seat) == o


# -- per-hand check: the whole hand recomputed by the simple model ----------------------------

@dataclasses.dataclass
class Tally:
    """What the random games exercised (asserted at the end, so the properties are known to
    have been checked on every branch that matters)."""

    games: int = 0
    hands: int = 0
    events: Counter[str] = dataclasses.field(default_factory=Counter)


def check_hand(r: Ruleset, seed: int, k: int, rec: Any, before: list[int],
               tally: Tally) -> tuple[list[int], int | None, Termination | None]:
    """Check hand record ``rec`` (the ``k``-th of the game); return the scores after it and,
    if the game must end with it, the winner and how."""
    n = r.players
    ev = tally.events
    assert rec.number == k
    assert rec.dealer == (first_dealer(seed, n) + k) % n
    hands, widow = deal(seed, k, r)
    assert rec.dealt == hands and rec.widow == widow
    # The auction: one turn each from the dealer's left, each bid legal when made.
    made_so_far: list[int] = []
    for i, (seat, value) in enumerate(rec.bids):
        assert seat == (rec.dealer + 1 + i) % n
        assert value in ref.legal_bid_values(made_so_far, seat == rec.dealer, r.min_bid,
                                             r.all_pass == "force_dealer")
        made_so_far.append(value)
    if 21 in made_so_far:
        assert made_so_far.index(21) == len(made_so_far) - 1  # 21 ends the auction
    else:
        assert len(rec.bids) == n
    high = max(made_so_far)
    if high == 0:
        assert r.all_pass == "redeal"
        assert rec.bidder == -1 and rec.made is None and rec.tricks == ()
        assert rec.deltas == (0,) * r.num_sides and rec.discard == -1 and rec.trump == -1
        ev["redeal"] += 1
        after = list(before)
        assert rec.scores == tuple(after)
        w = ref.winner_at_target(after, r.target)
        return after, w, (Termination.TARGET if w is not None else None)
    bidder = next(seat for seat, v in rec.bids if v == high)
    assert (rec.bidder, rec.bid) == (bidder, high)
    if r.all_pass == "force_dealer" and made_so_far[:-1] == [0] * (n - 1):
        ev["forced dealer"] += 1
    contract = ref.contract(rec.trump)
    assert rec.trump in r.allowed_trumps
    ev[f"trump {contract}"] += 1
    # Every seat's hand for the play: the deal, the bidder's plus the widow minus the discard.
    held = [tiles(h) for h in hands]
    if r.has_widow:
        assert rec.discard >= 0 and (hands[bidder] | widow) >> rec.discard & 1
        held[bidder] = tiles((hands[bidder] | widow) & ~(1 << rec.discard))
        ev["widow discarded" if widow >> rec.discard & 1 else "own tile discarded"] += 1
    else:
        assert rec.discard == -1
    taken = [0] * n
    leader = bidder
    assert len(rec.tricks) == 7
    for trick in rec.tricks:
        assert trick.leader == leader and len(trick.plays) == n
        played: list[ref.Pips] = []
        for i, (seat, t) in enumerate(trick.plays):
            assert seat == (leader + i) % n
            tile = ref.pips(t)
            assert tile in ref.legal_plays(held[seat], played, contract)
            held[seat].remove(tile)
            played.append(tile)
        w = (leader + ref.trick_winner(played, contract)) % n
        assert trick.winner == w
        taken[w] += 1
        leader = w
    assert all(not h for h in held)  # every seat played exactly its hand
    assert list(rec.tricks_taken) == taken
    made, deltas = ref.hand_deltas(n, r.scoring, r.team_made_scores, bidder, high, taken)
    assert rec.made is made and list(rec.deltas) == deltas
    after = [b + d for b, d in zip(before, deltas, strict=True)]
    assert list(rec.scores) == after
    ev["made" if made else "set"] += 1
    if high == 21:
        ev["moon made" if made else "moon set"] += 1
    if made and high == 21 and r.moon_wins_game:
        return after, ref.side(bidder, n), Termination.MOON
    w = ref.winner_at_target(after, r.target)
    if w is None and max(after) >= r.target:
        ev["tie at the target"] += 1
    return after, w, (Termination.TARGET if w is not None else None)



# -- one whole game -------------------------------------------------------------------------

def play_checked(r: Ruleset, seed: int, tally: Tally, observe_all: bool) -> GameState:
    rng = random.Random(seed * 7919 + 17)
    s = GameState(r, seed)
    scores = [0] * r.num_sides
    ended: tuple[int, Termination] | None = None
    observe_at = {rng.randrange(60) for _ in range(3)}
    clone_at = rng.randrange(80)
    clone: GameState | None = None
    steps = 0
    while True:
        check_tiles_accounted(s)
        if s.is_terminal():
            break
        legal = s.legal_actions()
        assert legal == expected_legal(s)  # sorted, and never empty before the end
        assert legal and s.current_player >= 0
        if observe_all or steps in observe_at:
            check_observations(s, rng)
            check_legality(s, legal)
        if steps == clone_at:
            clone = check_clone(s, rng)
        records = len(s.hand_records)
        s.apply(sensible_action(s, rng, legal))
        steps += 1
        assert steps < MAX_STEPS, "the game did not end"
        if len(s.hand_records) > records:
            assert len(s.hand_records) == records + 1
            assert ended is None, "a hand was played after the game should have ended"
            scores, w, how = check_hand(r, seed, records, s.hand_records[-1], scores, tally)
            tally.hands += 1
            if w is not None:
                assert how is not None
                ended = (w, how)
    # The end.
    assert ended is not None and s.outcome is not None
    winner, how = ended
    assert (s.outcome.winner, s.outcome.termination) == (winner, how)
    assert list(s.outcome.scores) == scores == s.scores
    assert list(s.outcome.places) == ref.places(scores, winner)
    assert s.legal_actions() == [] and s.current_player == -1
    try:
        s.apply(56)
    except IllegalActionError:
        pass
    else:
        raise AssertionError("an action was accepted after the end")
    check_observations(s, rng)
    # Replay from seed + history is identical.
    assert fingerprint(GameState.replay(r, seed, s.history)) == fingerprint(s)
    if clone is not None:
        assert fingerprint(GameState.replay(r, seed, clone.history)) == fingerprint(clone)
    tally.games += 1
    tally.events[f"end {how.value}"] += 1
    return s


def check_clone(s: GameState, rng: random.Random) -> GameState:
    """Clone ``s``; play the clone on alone (its own random moves, up to 40 steps) and check
    ``s`` is untouched. Returns the clone, whose history must replay at the end."""
    before = fingerprint(s)
    c = s.clone()
    assert fingerprint(c) == before
    other = random.Random(rng.random())
    for _ in range(40):  # unchecked: the replay at the end checks it did what apply does
        if c.is_terminal():
            break
        c.apply_unchecked(sensible_action(c, other))
    assert fingerprint(s) == before
    return c


def check_legality(s: GameState, legal: list[int]) -> None:
    """``is_legal`` holds exactly for the legal actions; ``apply`` refuses every other
    value (not an action, or not now) and leaves the state as it was."""
    before = snapshot(s)  # each refusal must leave it so: taken once, not per action
    for a in [*range(-2, NUM_ACTIONS + 2), True, 3.0, "5"]:
        ok = a in legal and a.__class__ is int
        assert s.is_legal(a) == ok, (a, legal)  # type: ignore[arg-type]
        if not ok:
            try:  # (pytest.raises, the same check, cost a fifth of these games' time)
                s.apply(a)  # type: ignore[arg-type]
            except IllegalActionError:
                pass
            else:
                raise AssertionError(f"apply accepted {a!r}, not legal now ({legal})")
            assert _SLOTS(s) == before


def random_ruleset(rng: random.Random) -> Ruleset:
    players = rng.choice([3, 4])
    return Ruleset(
        players=players,
        remove_double_blank=players == 3 and rng.random() < 0.3,
        min_bid=rng.choice([3, 4, 5]),
        all_pass=rng.choice(["redeal", "force_dealer"]),
        trump_before_widow=rng.random() < 0.5,
        allow_doubles_trump=rng.random() < 0.7,
        allow_no_trump=rng.random() < 0.7,
        moon_wins_game=rng.random() < 0.5,
        scoring=rng.choice(["points", "marks"]),
        target_score=rng.choice([1, 5, 10, 21, 21, 30]),
        target_marks=rng.choice([1, 3, 7, 7]),
        team_made_scores=rng.choice(["tricks", "bid"]) if players == 4 else "tricks",
    )


# -- the tests ------------------------------------------------------------------------------

GAMES_PER_PRESET = 1000
RANDOM_RULESET_GAMES = 4000
OBSERVE_EVERY_STEP = 8
"""Games (of each preset, and of the random rulesets) whose every step has its
observations checked; the others check them at three random steps."""


def _play_batch(jobs: list[tuple[Ruleset, int, bool]]) -> Tally:
    tally = Tally()
    for r, seed, observe_all in jobs:
        try:
            play_checked(r, seed, tally, observe_all)
        except Exception as e:
            raise AssertionError(f"game seed={seed} {r}: {type(e).__name__}: {e}") from e
    return tally


def run_games(jobs: list[tuple[Ruleset, int, bool]]) -> Tally:
    """Play and check the games, split over the machine's cores (they are independent; a
    failure names the game's seed and ruleset). MOON_TEST_WORKERS=1 runs them in this
    process, for a debugger."""
    workers = int(os.environ.get("MOON_TEST_WORKERS", "0")) or min(4, os.cpu_count() or 1)
    if workers == 1:
        return _play_batch(jobs)
    # spawn, not fork: a fork of this process (an xdist worker, with whatever threads the
    # tests before left, gRPC's among them) can deadlock in the child, and Pool.map then
    # waits for ever.
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        tallies = pool.map(_play_batch, [jobs[i::workers] for i in range(workers)])
    total = Tally()
    for t in tallies:
        total.games += t.games
        total.hands += t.hands
        total.events.update(t.events)
    return total


@pytest.mark.slow
@pytest.mark.timeout(1200)  # ~20-40 s alone; more on a busy machine
def test_presets() -> None:
    jobs = [(r, seed, seed < OBSERVE_EVERY_STEP)
            for r in PRESETS.values() for seed in range(GAMES_PER_PRESET)]
    tally = run_games(jobs)
    assert tally.games == GAMES_PER_PRESET * len(PRESETS)
    ev = tally.events
    for event in ["redeal", "made", "set", "moon set", "moon made", "tie at the target",
                  "forced dealer", "widow discarded", "own tile discarded", "end target",
                  "end moon", "trump doubles", "trump none", "trump 0", "trump 6"]:
        assert ev[event] > 0, f"no game had: {event} ({dict(ev)})"


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_random_rulesets() -> None:
    rng = random.Random(2024)
    jobs = [(random_ruleset(rng), 10_000 + seed, seed < OBSERVE_EVERY_STEP)
            for seed in range(RANDOM_RULESET_GAMES)]
    tally = run_games(jobs)
    assert tally.games == RANDOM_RULESET_GAMES
    ev = tally.events
    for event in ["redeal", "made", "set", "moon made", "moon set", "forced dealer",
                  "tie at the target", "end target", "end moon"]:
        assert ev[event] > 0, f"no game had: {event} ({dict(ev)})"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=st.fixed_dictionaries({
        "players": st.sampled_from([3, 4]),
        "min_bid": st.sampled_from([3, 4, 5]),
        "all_pass": st.sampled_from(["redeal", "force_dealer"]),
        "trump_before_widow": st.booleans(),
        "allow_doubles_trump": st.booleans(),
        "allow_no_trump": st.booleans(),
        "moon_wins_game": st.booleans(),
        "scoring": st.sampled_from(["points", "marks"]),
        "target_score": st.integers(1, 40),
        "target_marks": st.integers(1, 8),
        "team_made_scores": st.sampled_from(["tricks", "bid"]),
    }),
    remove_double_blank=st.booleans(),
    seed=st.integers(-(2**63), 2**64),
)
def test_hypothesis_rulesets(options: dict[str, Any], remove_double_blank: bool,
                             seed: int) -> None:
    if options["players"] == 3:
        options["team_made_scores"] = "tricks"  # a 4-player option
    r = Ruleset(remove_double_blank=remove_double_blank and options["players"] == 3,
                **options)
    play_checked(r, seed, Tally(), observe_all=False)
