"""How fast is the rules engine? Random hands and decisions per second, 3 and 4 players,
for the pure-Python engine and its compiled core side by side, beside a deliberately naive
implementation of the play phase alone.

    .venv/bin/python benchmarks/engine.py [--seconds 1] [--runs 5] [--seed 1]

Each engine runs whole games of a preset with a uniformly random policy over
``legal_actions()``: every hand goes from the seeded deal through the auction, the widow,
trumps and 7 validated tricks to the scoring and the hand's record (passed-out hands are
redealt and timed, but not counted as hands). "Decisions" are all the actions applied, bids
included. The pure engine is ``moon_sdk.rules.GameState``; the compiled one
``moon_engine.GameState`` (sdk/rust, the same game action for action: tests/rules/test_fast.py),
skipped with the reason when it is not installed.

The naive reference does less per hand: a shuffle, a random contract, and 7 tricks. It
offers a bot the engine's contract (int actions, sorted legal actions, a validating
``apply``) but is written the obvious way: tiles as ``(high, low)`` tuples in lists, an
action is a tile's position in the list of all tiles (found with ``list.index``), legality
and trick winners worked out afresh from the rules' definitions, no tables. Its decisions
are the plays only. Before timing, it is checked against the engine on 20,000 random
tricks. The same random policy (a uniform pick over the legal actions, see ``picker``)
drives all three.

Times are CPU time of this process (``time.process_time``), so other work on the machine
disturbs the figures less; the runs alternate (pure, compiled, naive), and the best of each
is kept. Nothing here is asserted in the tests; the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sdk" / "python"))

from moon_sdk.rules import (  # noqa: E402
    PRESETS,
    GameState,
    legal_follow,
    mask_of,
    trick_winner_index,
)

Pips = tuple[int, int]


# -- the policy -----------------------------------------------------------------------------

def picker(seed: int) -> Callable[[list[int]], int]:
    """The random policy both sides share: a uniform pick from the legal actions, drawn from
    a precomputed table of uniforms, so that the policy (the same for both) costs little
    next to what is measured; ``random.choice`` alone costs about 1 µs a decision."""
    rng = random.Random(seed)
    table = [rng.random() for _ in range(1 << 16)]
    i = 0

    def pick(xs: list[int]) -> int:
        nonlocal i
        i = (i + 1) & 0xFFFF
        return xs[int(table[i] * len(xs))]

    return pick


# -- the engine -----------------------------------------------------------------------------

def engine_run(preset: str, seconds: float, seed: int,
               state_class: type[GameState] = GameState) -> tuple[int, int, float]:
    """Play random games of ``preset`` with ``state_class`` (the pure engine's GameState or
    the compiled one) for about ``seconds``: (hands, decisions, elapsed)."""
    ruleset = PRESETS[preset]
    choice = picker(seed)
    hands = decisions = 0
    game_seed = seed
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        state = state_class(ruleset, game_seed)
        game_seed += 1
        apply, legal_actions, is_terminal = state.apply, state.legal_actions, state.is_terminal
        for _ in range(2000):  # check the clock now and then, not at every decision
            if is_terminal():
                break
            apply(choice(legal_actions()))
            decisions += 1
        else:
            # Uniformly random bids make very long games; go on with this one.
            while not is_terminal() and time.process_time() < deadline:
                for _ in range(2000):
                    if is_terminal():
                        break
                    apply(choice(legal_actions()))
                    decisions += 1
        hands += sum(1 for h in state.hand_records if h.bidder >= 0)
    return hands, decisions, time.process_time() - start


# -- the naive reference: the play phase only -------------------------------------------------

def naive_tiles(players: int) -> list[Pips]:
    if players == 4:
        return [(h, lo) for h in range(7) for lo in range(h + 1)]
    return [(h, lo) for h in range(1, 7) for lo in range(1, h + 1)] + [(0, 0)]


def naive_is_trump(t: Pips, trump: int | str) -> bool:
    if trump == "none":
        return False
    if trump == "doubles":
        return t[0] == t[1]
    return trump in t


def naive_suit(lead: Pips, trump: int | str) -> int | str:
    return "trumps" if naive_is_trump(lead, trump) else max(lead)


def naive_follows(t: Pips, suit: int | str, trump: int | str) -> bool:
    if suit == "trumps":
        return naive_is_trump(t, trump)
    return suit in t and not naive_is_trump(t, trump)


def naive_strength(t: Pips, suit: int | str, trump: int | str) -> tuple[int, int]:
    if naive_is_trump(t, trump):
        if trump == "doubles":
            return (2, t[0])
        return (2, 99 if t[0] == t[1] else (t[1] if t[0] == trump else t[0]))
    if naive_follows(t, suit, trump):
        return (1, 99 if t[0] == t[1] else (t[1] if t[0] == suit else t[0]))
    return (0, 0)


ALL_TILES: list[Pips] = [(h, lo) for h in range(7) for lo in range(h + 1)]
"""The canonical tile list: a tile's action number is its position (as in the engine)."""


class NaivePlayPhase:
    """The play phase of one hand, written the obvious way: a deal shuffled from the tile
    list, a contract, hands as lists of tuples, and the engine's contract for a bot (int
    actions in and out, a validating ``apply``), with nothing precomputed: every rule is
    evaluated from its definition when it is needed."""

    def __init__(self, players: int, rng: random.Random) -> None:
        tiles = naive_tiles(players)
        rng.shuffle(tiles)
        self.players = players
        self.hands = [tiles[7 * i: 7 * i + 7] for i in range(players)]
        self.trump: int | str = rng.choice([1, 2, 3, 4, 5, 6, "doubles", "none"])
        self.current = rng.randrange(players)
        self.trick: list[tuple[int, Pips]] = []
        self.tricks: list[tuple[list[tuple[int, Pips]], int]] = []
        self.taken = [0] * players

    def is_over(self) -> bool:
        return len(self.tricks) == 7

    def legal_tiles(self) -> list[Pips]:
        hand = self.hands[self.current]
        if not self.trick:
            return list(hand)
        suit = naive_suit(self.trick[0][1], self.trump)
        return [t for t in hand if naive_follows(t, suit, self.trump)] or list(hand)

    def legal_actions(self) -> list[int]:
        return sorted(ALL_TILES.index(t) for t in self.legal_tiles())

    def apply(self, action: int) -> None:
        t = ALL_TILES[action]
        if t not in self.legal_tiles():
            raise ValueError(f"illegal play {t}")
        self.hands[self.current].remove(t)
        self.trick.append((self.current, t))
        if len(self.trick) < self.players:
            self.current = (self.current + 1) % self.players
            return
        suit = naive_suit(self.trick[0][1], self.trump)
        seat, _ = max(self.trick, key=lambda p: naive_strength(p[1], suit, self.trump))
        self.tricks.append((self.trick, seat))
        self.taken[seat] += 1
        self.trick = []
        self.current = seat


def check_naive_agrees(trials: int = 20_000) -> None:
    """Make sure the naive reference plays by the same rules as the engine (a benchmark of
    a wrong reference would mean nothing): legal plays and trick winners on random tricks."""
    rng = random.Random(0)
    contracts: list[int | str] = [0, 1, 2, 3, 4, 5, 6, "doubles", "none"]
    for _ in range(trials):
        k = rng.randrange(9)
        trump = contracts[k]
        tiles = rng.sample(range(28), 8)
        trick, hand = tiles[:4], tiles[4:]
        suit = naive_suit(ALL_TILES[trick[0]], trump)
        naive_legal = [t for t in hand if naive_follows(ALL_TILES[t], suit, trump)] or hand
        assert mask_of(naive_legal) == legal_follow(k, trick[0], mask_of(hand))
        best = max(range(4), key=lambda i: naive_strength(ALL_TILES[trick[i]], suit, trump))
        assert best == trick_winner_index(k, trick)


def naive_run(players: int, seconds: float, seed: int) -> tuple[int, int, float]:
    """Play random hands of the naive play phase for about ``seconds``."""
    rng = random.Random(seed)
    choice = picker(seed)
    hands = decisions = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        for _ in range(50):
            hand = NaivePlayPhase(players, rng)
            while not hand.is_over():
                hand.apply(choice(hand.legal_actions()))
                decisions += 1
            hands += 1
    return hands, decisions, time.process_time() - start


# -- the table ------------------------------------------------------------------------------

def rates(run: tuple[int, int, float]) -> tuple[float, float]:
    """(hands/s, decisions/s) of a run's (hands, decisions, seconds)."""
    hands, decisions, elapsed = run
    return hands / elapsed, decisions / elapsed


def compiled_engine() -> tuple[type[GameState] | None, str]:
    """The compiled core's GameState, or None and why."""
    try:
        import moon_engine  # type: ignore[import-not-found]
    except ImportError as e:
        return None, f"not installed ({e}); `make setup` builds it where cargo is installed"
    return moon_engine.GameState, f"moon_engine {moon_engine.__version__}"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=1.0, help="CPU time per run (1)")
    p.add_argument("--runs", type=int, default=5, help="runs per figure, best kept (5)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    check_naive_agrees()
    compiled, about = compiled_engine()
    print(f"Moon rules engine benchmark: Python {platform.python_version()} "
          f"({platform.python_implementation()}), {platform.machine()}, "
          f"best of {args.runs} x {args.seconds:g} s; compiled core: {about}")
    header = (f"{'players':>7} | {'naive hands/s':>13} {'plays/s':>9} | "
              f"{'pure hands/s':>12} {'decisions/s':>11} {'x naive':>7} | "
              f"{'compiled hands/s':>16} {'decisions/s':>11} {'x naive':>7} {'x pure':>6}")
    print(header)
    print("-" * len(header))
    for players, preset in ((3, "moon3"), (4, "moon4")):
        pure: list[tuple[float, float]] = []
        fast: list[tuple[float, float]] = []
        naive: list[tuple[float, float]] = []
        for _ in range(args.runs):  # interleaved, so all see the same machine
            pure.append(rates(engine_run(preset, args.seconds, args.seed)))
            if compiled is not None:
                fast.append(rates(engine_run(preset, args.seconds, args.seed, compiled)))
            naive.append(rates(naive_run(players, args.seconds, args.seed)))
        p_hands, p_dec = max(pure)
        n_hands, n_dec = max(naive)
        line = (f"{players:>7} | {n_hands:>13,.0f} {n_dec:>9,.0f} | {p_hands:>12,.0f} "
                f"{p_dec:>11,.0f} {p_hands / n_hands:>6.2f}x | ")
        if fast:
            f_hands, f_dec = max(fast)
            line += (f"{f_hands:>16,.0f} {f_dec:>11,.0f} {f_hands / n_hands:>6.2f}x "
                     f"{f_hands / p_hands:>5.2f}x")
        else:
            line += f"{'(not installed)':>16}"
        print(line)
    print("x naive: hands per second over the naive reference's; x pure: compiled over pure.")


if __name__ == "__main__":
    main()
