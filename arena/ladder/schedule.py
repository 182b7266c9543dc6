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

A game's id depends only on its board, its group's bots (by name and version: a *tag*
hashed from them, :func:`group_tag`) and its seating, never on the other bots of the
ladder nor on their order in the file. So a ladder grows: with a bot added, the games of
the groups without it keep their ids (and are not played again), and the new bot's groups
are new games on the same boards. A new version of a bot is a new entrant: its groups get
other tags.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

_MASK64 = (1 << 64) - 1

Seated = TypeVar("Seated", int, str)
"""What a seating seats: bot names (the ladder) or version ids (the host)."""


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
    versions: tuple[str, ...] = ()
    """Version of the bot per seat (:func:`arena.bots.versions.bot_version`, short), or empty
    when the schedule was made without versions."""


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


TAG_DIGITS = 10
"""Hex digits of a group's tag in its games' ids (40 bits)."""


def group_tag(entries: Sequence[str]) -> str:
    """The tag of a group in its games' ids: :data:`TAG_DIGITS` hex digits of the SHA-256
    of its entries (``name@version``, or ``name``), one per line, in the order given (the
    caller gives them in a canonical order)."""
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()[:TAG_DIGITS]


def _entry(bot: str, versions: Mapping[str, str] | None) -> str:
    v = (versions or {}).get(bot, "")
    return f"{bot}@{v}" if v else bot


def _versions(seats: Sequence[str], versions: Mapping[str, str] | None) -> tuple[str, ...]:
    return tuple((versions or {}).get(b, "") for b in seats) if versions else ()


def set_games(seats: Sequence[str]) -> int:
    """How many games make the duplicate set of a game seating ``seats`` (bot per seat):
    with 3 players, the distinct seatings of its bots (6, or 3 with a bot twice); with 4,
    the two tables."""
    if len(seats) == 4:
        return 2
    return len(set(itertools.permutations(seats)))


def groups_3(bots: list[str]) -> list[tuple[str, ...]]:
    """Bot triples for 3-player ladders (see the module doc)."""
    if len(bots) >= 3:
        return list(itertools.combinations(bots, 3))
    a, b = bots
    return [(a, a, b), (a, b, b)]


def seatings_3(group: tuple[Seated, ...]) -> list[tuple[Seated, ...]]:
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


def set_3(board: int, seed: int, group: Sequence[str],
          versions: Mapping[str, str] | None = None) -> list[ScheduledGame]:
    """The duplicate set of a 3-player group on one board: the group in every distinct
    seating, in a fixed order, with ids ``b<board>-<tag>-s<k>``."""
    group = tuple(sorted(group))  # the same set whatever the order of the bots
    dset = f"b{board}-{group_tag([_entry(b, versions) for b in group])}"
    s = board_seed(seed, board)
    seatings = seatings_3(group)
    return [ScheduledGame(f"{dset}-s{k}", board, dset, s, seats, _versions(seats, versions))
            for k, seats in enumerate(seatings)]


def set_4(board: int, seed: int, team1: Sequence[str], team2: Sequence[str],
          versions: Mapping[str, str] | None = None) -> list[ScheduledGame]:
    """The duplicate set of two partnerships on one board: two tables, the partnerships
    swapped; partners trade seats on odd boards (over two boards every bot sits in every
    seat). Ids ``b<board>-<tag>-s0|s1``."""
    t1, t2 = sorted((tuple(sorted(team1)), tuple(sorted(team2))))
    dset = f"b{board}-" + group_tag([" ".join(_entry(b, versions) for b in t)
                                      for t in (t1, t2)])
    if board % 2:
        t1, t2 = t1[::-1], t2[::-1]
    s = board_seed(seed, board)
    tables = [(t1[0], t2[0], t1[1], t2[1]), (t2[0], t1[0], t2[1], t1[1])]
    return [ScheduledGame(f"{dset}-s{k}", board, dset, s, seats, _versions(seats, versions))
            for k, seats in enumerate(tables)]


def make_schedule(bots: list[str], players: int, boards: int, seed: int,
                  challengers: Collection[str] = (),
                  versions: Mapping[str, str] | None = None) -> list[ScheduledGame]:
    """Every game of the ladder, board by board (so a partial run covers whole boards of
    every group first); with ``challengers``, a gauntlet: only the groups that hold one.
    ``versions`` (bot name → version) go into the ids, so that a new version of a bot plays
    its own games; without them the ids are made from the names alone.

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
        if players == 3:
            for group in groups_3(bots):
                if wanted & set(group):
                    games += set_3(board, seed, group, versions)
        else:
            for team1, team2 in tables_4(bots):
                if wanted & {*team1, *team2}:
                    games += set_4(board, seed, team1, team2, versions)
    return games


def match_board(a: str, b: str, thirds: Sequence[str], players: int, board: int, seed: int,
                versions: Mapping[str, str] | None = None) -> list[ScheduledGame]:
    """One board of an A/B match (docs/match.md): with 3 players, the set of A, B and each
    third bot in every seating; with 4, A's partnership (A and a copy) against B's at two
    tables. The same games, with the same ids, as a ladder's sets of these groups."""
    if players == 4:
        return set_4(board, seed, (a, a), (b, b), versions)
    return [g for c in thirds for g in set_3(board, seed, (a, b, c), versions)]
