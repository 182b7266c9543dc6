"""Boards, duplicate sets and balanced schedules (docs/ladder.md, "Boards, seatings and
duplicate sets").

A *board* is a seed: it fixes the first dealer and every deal of a game, whoever sits
where. A *duplicate set* is one board played by one group of bots in every seating that
matters, and is the unit of the bootstrap:

- 3 players: a triple of bots in all 6 seatings (each bot holds each seat's cards twice,
  each opponent once on each side). With only 2 bots, the triples are (a, a, b) and
  (a, b, b), each in its 3 distinct seatings.
- 4 players: two partnerships at two tables with the partnerships swapped (team 1 in
  seats 0/2, then in seats 1/3); partners trade seats on odd boards. With 4+ bots every
  4-set plays all 3 ways to pair up (rotating partners); with 2 or 3 bots each bot
  partners a copy of itself.

A *gauntlet* (cutechess's format: the challengers against a pool) keeps only the groups
with at least one challenger in them. Its games are a subset of the round robin's, with the
same ids, seeds and seatings, so a gauntlet can later be widened into the full round robin
on the same results file without playing anything twice.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Collection
from dataclasses import dataclass

_MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule."""

    game_id: str
    """Stable id: the same ladder always makes the same ids (resume relies on it)."""
    board: int
    dset: str
    """The duplicate set this game belongs to."""
    seed: int
    seats: tuple[str, ...]
    """Bot name per seat, seat 0 first."""


def board_seed(master: int, board: int) -> int:
    """The seed of board ``board``: 63 bits of BLAKE2b keyed with the master seed.

    Keyed, so that a game record (which must hold its own seed, to be replayed) tells
    nothing of the master seed or of the other boards' deals: with an invertible mix, one
    published record would give away every deal of the ladder, boards added later too.
    """
    return _keyed(master, board.to_bytes(8, "little"))


def check_seed(master: int) -> int:
    """The seed of the admission checks (:func:`arena.ladder.runner.check_bot`): not a
    board's, so a check deals none of the ladder's hands."""
    return _keyed(master, b"admission check")


def _keyed(master: int, message: bytes) -> int:
    key = (master & _MASK64).to_bytes(8, "little")
    digest = hashlib.blake2b(message, key=key, digest_size=8, person=b"moon-boards").digest()
    return int.from_bytes(digest, "little") >> 1  # 63 bits


def groups_3(bots: list[str]) -> list[tuple[str, ...]]:
    """Bot triples for 3-player ladders (see the module doc)."""
    if len(bots) >= 3:
        return list(itertools.combinations(bots, 3))
    a, b = bots
    return [(a, a, b), (a, b, b)]


def seatings_3(group: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Distinct seatings of a triple, in a fixed order."""
    return sorted(set(itertools.permutations(group)))


def tables_4(bots: list[str]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Pairs of partnerships for 4-player ladders (see the module doc)."""
    if len(bots) >= 4:
        out = []
        for a, b, c, d in itertools.combinations(bots, 4):
            out += [((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))]
        return out
    return [((x, x), (y, y)) for x, y in itertools.combinations(bots, 2)]


def make_schedule(bots: list[str], players: int, boards: int, seed: int,
                  challengers: Collection[str] = ()) -> list[ScheduledGame]:
    """Every game of the ladder, board by board (so a partial run covers whole boards of
    every group first); with ``challengers``, a gauntlet: only the groups that hold one.

    Raises:
        ValueError: fewer than 2 bots, or a challenger that is not one of ``bots``.
    """
    if len(bots) < 2:
        raise ValueError("a ladder needs at least 2 bots")
    stranger = sorted(set(challengers) - set(bots))
    if stranger:
        raise ValueError(f"gauntlet challenger {stranger[0]!r} is not a bot of the ladder")
    wanted = set(challengers) or set(bots)
    games: list[ScheduledGame] = []
    for board in range(boards):
        s = board_seed(seed, board)
        if players == 3:
            for g, group in enumerate(groups_3(bots)):
                if not wanted & set(group):
                    continue
                dset = f"b{board}-g{g}"
                for k, seats in enumerate(seatings_3(group)):
                    games.append(ScheduledGame(f"{dset}-s{k}", board, dset, s, seats))
        else:
            for t, (team1, team2) in enumerate(tables_4(bots)):
                if not wanted & {*team1, *team2}:
                    continue
                dset = f"b{board}-t{t}"
                if board % 2:  # partners swap seats on odd boards: over two boards every
                    team1, team2 = team1[::-1], team2[::-1]  # bot sits in every seat
                games.append(ScheduledGame(f"{dset}-s0", board, dset, s,
                                           (team1[0], team2[0], team1[1], team2[1])))
                games.append(ScheduledGame(f"{dset}-s1", board, dset, s,
                                           (team2[0], team1[0], team2[1], team1[1])))
    return games
