"""Type stubs of moon_engine, the compiled core of the Moon rules engine (see README.md).

``GameState`` has the methods and attributes of ``moon_sdk.rules.GameState`` (read-only
here); ``VectorCore`` steps many games at once; the others are module functions.
"""

from collections.abc import Iterable, Sequence
from typing import Any

DEAL_VERSION: int
MAX_LEGAL: int
__version__: str

class GameState:
    ruleset: Any  # moon_sdk.rules.Ruleset
    seed: int
    n: int
    phase: Any  # moon_sdk.rules.Phase
    hand_number: int
    dealer: int
    current: int
    hands: list[int]
    dealt: tuple[int, ...]
    widow: int
    widow_taken: bool
    discard: int
    bids: list[tuple[int, int]]
    high_bid: int
    bidder: int
    trump: int
    led: int
    trick: list[tuple[int, int]]
    tricks: list[Any]  # moon_sdk.rules.Trick
    tricks_taken: list[int]
    played: int
    scores: list[int]
    history: list[int]
    hand_records: list[Any]  # moon_sdk.rules.HandRecord
    outcome: Any  # moon_sdk.rules.Outcome | None
    current_player: int
    def __init__(self, ruleset: Any, seed: int) -> None: ...
    def is_terminal(self) -> bool: ...
    def side_of(self, seat: int) -> int: ...
    def legal_plays(self) -> int: ...
    def features(self, seat: int, sequence: bool) -> bytes: ...
    def legal_actions(self) -> list[int]: ...
    def is_legal(self, action: object) -> bool: ...
    def apply(self, action: int) -> None: ...
    def apply_unchecked(self, action: int) -> None: ...
    def clone(self) -> GameState: ...
    @classmethod
    def from_deal(cls, ruleset: Any, hands: Sequence[int], widow: int = 0, *, dealer: int,
                  seed: int | None = None, scores: Sequence[int] | None = None) -> GameState: ...
    @classmethod
    def replay(cls, ruleset: Any, seed: int, actions: Iterable[int]) -> GameState: ...

def deal(seed: int, hand_number: int, ruleset: Any) -> tuple[tuple[int, ...], int]: ...
def first_dealer(seed: int, players: int) -> int: ...
def playout(hands: list[int], trump: int, bidder: int, cur: int, k: int, led: int,
            win_seat: int, win_tile: int, taken: list[int], first: int = -1,
            trace: list[tuple[int, int]] | None = None) -> list[int]: ...
def quick_count(hand: int, trump: int) -> float: ...
def random_games(ruleset: Any, games: int, seed: int, max_hands: int) -> int: ...

class VectorCore:
    """N games in one call, for moon_sdk.vector.VectorGames (``out``: its 10 arrays)."""
    threads: int
    def __init__(self, ruleset: Any, num_games: int, max_hands: int, sequence: bool,
                 rules: Sequence[float], threads: int = 1,
                 observations: str = "float32") -> None: ...
    def set_threads(self, threads: int) -> None: ...
    def reset(self, seed: int, out: tuple[Any, ...]) -> None: ...
    def step(self, actions: Any, out: tuple[Any, ...]) -> None: ...
    def state(self, i: int) -> GameState: ...
