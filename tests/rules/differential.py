"""The compiled core (``moon_engine``) against the pure engine, action by action.

Both engines play the same seeded game in lockstep, every action chosen once (by
``helpers.sensible_action``, or in one game in twenty uniformly at random for its first 40
hands: uniformly random games drift for hundreds of hands) and applied to both. Compared:

- at every step: the legal actions, the seat to act, the phase, and the state a bot can
  read (hands, widow, discard, bids, bidder, trumps, the trick, tricks taken, tiles played,
  scores, hand number, dealer); the completed tricks after every trick;
- at every hand's end: the new hand records (the deal, the widow, bids, discard, trumps,
  every trick, made/set, score changes) and every seat's observation (``observe``; after
  the 40th hand, every 25th hand);
- now and then: observations in mid-hand, refused actions (out of range, held by nobody,
  against the rules, or not an int: the same IllegalActionError message, state unchanged,
  and ``is_legal`` False; in one game in three every action goes through
  ``apply_unchecked`` after ``is_legal``),
  a clone (independent of its original), ``replay`` (the same state again; an illegal
  action in the list gives the same message);
- at the end: the outcome, the history, every hand record and the ``repr``.

Games cycle through every combination of the ruleset options (768: players, 21 or 22
tiles, min_bid, all_pass, trump_before_widow, allow_doubles_trump, allow_no_trump,
moon_wins_game, scoring, team_made_scores) with several targets, and through seeds that are
small, negative and beyond 64 bits. ``tests/rules/test_fast.py`` runs a few thousand games;
the long run is this script::

    .venv/bin/python -m tests.rules.differential --games 100000 --jobs 2
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from moon_sdk.rules import GameState, IllegalActionError, Phase, Ruleset, observe

from .helpers import sensible_action

Fast = Any  # moon_engine.GameState (the module is optional)

PUBLIC = ("phase", "current", "hand_number", "dealer", "hands", "dealt", "widow",
          "widow_taken", "discard", "bids", "high_bid", "bidder", "trump", "led", "trick",
          "tricks_taken", "played", "scores")
"""Attributes compared after every action (``tricks`` after every trick, ``history``,
``hand_records`` and ``outcome`` at hand ends and at the end)."""

EVERYTHING = PUBLIC + ("n", "seed", "ruleset", "tricks", "history", "hand_records", "outcome")

ODD_ACTIONS: tuple[Any, ...] = (-1, 72, 10**20, -(10**20), 58.0, True, False, "58", None)
"""Refused by both engines as ``not an action``."""

SHORT = 40
"""Hands of a game with every check; a longer game (an observation reads every earlier hand)
gets its hand-end observations every 25th hand, and a game of uniformly random actions goes
on with the sensible policy, which ends it."""

TARGETS = ((21, 7), (21, 7), (10, 3), (35, 11))
"""``(target_score, target_marks)``, cycled."""


def option_combinations() -> list[Ruleset]:
    """Every combination of the options that change the rules (768 rulesets)."""
    out = []
    for players in (3, 4):
        for rdb, min_bid, all_pass, tbw, doubles, no_trump, moon, scoring, team in \
                itertools.product(
                    (False, True) if players == 3 else (False,), (3, 4, 5),
                    ("redeal", "force_dealer"), (False, True), (True, False), (True, False),
                    (True, False), ("points", "marks"),
                    ("tricks",) if players == 3 else ("tricks", "bid")):
            out.append(Ruleset(
                players=players, remove_double_blank=rdb, min_bid=min_bid, all_pass=all_pass,
                trump_before_widow=tbw, allow_doubles_trump=doubles, allow_no_trump=no_trump,
                moon_wins_game=moon, scoring=scoring, team_made_scores=team))
    return out


COMBINATIONS = option_combinations()


def game_setup(i: int) -> tuple[Ruleset, int]:
    """The ruleset and seed of game ``i``: combinations cycle, targets every cycle, seeds
    small, negative or huge."""
    base = COMBINATIONS[i % len(COMBINATIONS)]
    score, marks = TARGETS[(i // len(COMBINATIONS)) % len(TARGETS)]
    ruleset = Ruleset.from_dict({**base.to_dict(), "target_score": score,
                                 "target_marks": marks})
    seed = i
    if i % 7 == 3:
        seed = -i - 1
    elif i % 7 == 5:
        seed = 2**64 + i * 2**40 + 12345
    return ruleset, seed


class Mismatch(AssertionError):
    """The engines disagree; the message says where and on what."""


def _same(what: str, a: Any, b: Any, where: Callable[[], str]) -> None:
    if a != b:
        raise Mismatch(f"{where()}: {what} differs: pure {a!r}, compiled {b!r}")


def _refusal(state: Any, action: Any) -> str:
    try:
        state.apply(action)
    except IllegalActionError as e:
        return str(e)
    raise Mismatch(f"{action!r} was accepted")


def play_pair(fast_class: type, ruleset: Ruleset, seed: int, policy_seed: int) -> Counter[str]:
    """Play one game on both engines in lockstep and compare (see the module doc).

    Raises:
        Mismatch: the first difference, with the game, the step and the values.
    """
    rng = random.Random(policy_seed)
    uniform = rng.random() < 0.05
    pure = GameState(ruleset, seed)
    fast: Fast = fast_class(ruleset, seed)
    tally: Counter[str] = Counter(games=1)
    step = 0

    def where() -> str:
        return (f"game (ruleset={ruleset.to_dict()}, seed={seed}, policy_seed={policy_seed}) "
                f"step {step}")

    clone_at = rng.randrange(200)
    # is_legal and apply_unchecked, where the pure engine has them (the core branch adds
    # them): in one game in three the actions go through apply_unchecked
    checks_legality = hasattr(pure, "is_legal")
    unchecked = checks_legality and policy_seed % 3 == 1
    records = 0
    while True:
        legal = pure.legal_actions()
        _same("legal actions", legal, fast.legal_actions(), where)
        _same("current player", pure.current_player, fast.current_player, where)
        _same("is_terminal", pure.is_terminal(), fast.is_terminal(), where)
        for name in PUBLIC:
            _same(name, getattr(pure, name), getattr(fast, name), where)
        if len(pure.hand_records) != records:  # a hand ended: its records and observations
            new = pure.hand_records[records:]
            records = len(pure.hand_records)
            _same("hand records", new, fast.hand_records[records - len(new):], where)
            _same("history", pure.history, fast.history, where)
            tally["hands"] += len(new)
            tally["redeals"] += sum(1 for h in new if h.bidder < 0)
            if not pure.is_terminal() and (pure.hand_number < SHORT or pure.hand_number % 25 == 0):
                for seat in range(pure.n):
                    _same(f"observation of seat {seat}", observe(pure, seat),
                          observe(fast, seat), where)
                tally["observations"] += pure.n
        if not legal:
            break
        if rng.random() < 0.05:  # a refused action: same message, state unchanged
            odd = [a for a in range(72) if a not in legal] + list(ODD_ACTIONS)
            bad = rng.choice(odd)
            if checks_legality:
                _same(f"is_legal({bad!r})", False, fast.is_legal(bad), where)
            _same(f"refusal of {bad!r}", _refusal(pure, bad), _refusal(fast, bad), where)
            _same("legal actions after a refusal", legal, fast.legal_actions(), where)
            _same("history after a refusal", len(pure.history), len(fast.history), where)
            tally["refusals"] += 1
        if pure.hand_number < SHORT and rng.random() < 0.03:
            seat = rng.randrange(pure.n)
            _same(f"observation of seat {seat}", observe(pure, seat), observe(fast, seat),
                  where)
            tally["observations"] += 1
        if uniform and pure.hand_number < SHORT:
            action = rng.choice(legal)
        else:
            action = sensible_action(pure, rng, legal)
        if step == clone_at:  # a clone goes its own way; its original does not move
            twin = fast.clone()
            _same("clone", [getattr(pure, k) for k in EVERYTHING],
                  [getattr(twin, k) for k in EVERYTHING], where)
            twin.apply(legal[-1])
            _same("clone's history", len(pure.history) + 1, len(twin.history), where)
            tally["clones"] += 1
        if unchecked:  # as a search applies the actions legal_actions gave
            _same(f"is_legal({action})", True, fast.is_legal(action), where)
            pure.apply_unchecked(action)
            fast.apply_unchecked(action)
        else:
            pure.apply(action)
            fast.apply(action)
        step += 1
        tally["actions"] += 1
        if pure.phase == Phase.PLAY and not pure.trick:
            _same("tricks", pure.tricks, fast.tricks, where)
    for name in EVERYTHING:
        _same(name, getattr(pure, name), getattr(fast, name), where)
    _same("repr", repr(pure), repr(fast), where)
    tally[f"end {pure.outcome.termination.value}" if pure.outcome else "end ?"] += 1
    tally[f"{ruleset.players} players"] += 1
    if policy_seed % 10 == 0:  # replay, and replay with an illegal action slipped in
        again = fast_class.replay(ruleset, seed, pure.history)
        _same("replay", [getattr(pure, k) for k in EVERYTHING],
              [getattr(again, k) for k in EVERYTHING], where)
        cut = rng.randrange(len(pure.history))
        bad_list = pure.history[:cut] + [rng.choice([-3, 99, pure.history[cut] + 0.0, "x"])]
        messages = []
        for cls in (GameState, fast_class):
            try:
                cls.replay(ruleset, seed, bad_list)
            except IllegalActionError as e:
                messages.append(str(e))
        _same("replay refusal", messages[0], messages[-1], where)
        if len(messages) != 2:
            raise Mismatch(f"{where()}: replay of an illegal action list was accepted")
        tally["replays"] += 1
    return tally


def run(games: range, fast_class: type | None = None) -> Counter[str]:
    """Play games ``games`` (indices into :func:`game_setup`) on both engines."""
    if fast_class is None:
        import moon_engine  # type: ignore[import-not-found]
        fast_class = moon_engine.GameState
    tally: Counter[str] = Counter()
    for i in games:
        ruleset, seed = game_setup(i)
        tally += play_pair(fast_class, ruleset, seed, policy_seed=i)
    return tally


def _run_chunk(bounds: tuple[int, int]) -> Counter[str]:
    return run(range(*bounds))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=100_000)
    p.add_argument("--start", type=int, default=0, help="first game index (0)")
    p.add_argument("--jobs", type=int, default=1, help="processes (1)")
    args = p.parse_args(argv)
    import moon_engine
    print(f"moon_engine {moon_engine.__version__} (deal version {moon_engine.DEAL_VERSION}) "
          f"against the pure engine: games {args.start}..{args.start + args.games - 1}, "
          f"{len(COMBINATIONS)} option combinations x {len(TARGETS)} targets", flush=True)
    start = time.monotonic()
    chunk = 500
    bounds = [(a, min(a + chunk, args.start + args.games))
              for a in range(args.start, args.start + args.games, chunk)]
    tally: Counter[str] = Counter()
    try:
        with multiprocessing.Pool(args.jobs) as pool:
            for k, part in enumerate(pool.imap_unordered(_run_chunk, bounds), 1):
                tally += part
                if k % 20 == 0 or k == len(bounds):
                    print(f"  {tally['games']:>7,} games, {tally['actions']:>11,} actions agree "
                          f"({time.monotonic() - start:.0f} s)", flush=True)
    except Mismatch as e:
        print(f"MISMATCH: {e}", file=sys.stderr)
        return 1
    print(f"all agree: {tally['games']:,} games ({tally['3 players']:,} with 3 players, "
          f"{tally['4 players']:,} with 4), {tally['hands']:,} hands "
          f"({tally['redeals']:,} passed out), {tally['actions']:,} actions; "
          f"{tally['observations']:,} observations, {tally['refusals']:,} refused actions, "
          f"{tally['clones']:,} clones, {tally['replays']:,} replays; games ended by target "
          f"{tally['end target']:,}, by a moon {tally['end moon']:,}; "
          f"{time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
