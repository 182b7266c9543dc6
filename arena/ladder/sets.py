"""Which recorded games enter the ratings (docs/ladder.md, "What is rated").

A results file may hold more than its ratings use:

- **Partial duplicate sets.** A set's games share a deal and cancel its luck only
  together (:mod:`arena.ladder.schedule`), so a set enters the ratings only when all its
  games are recorded: with 3 players every distinct seating of its bots (6, or 3 when a bot
  sits twice), with 4 players both tables. A run stopped in the middle of a set leaves it
  partial until a later run completes it; it is counted and shown, never rated.
- **Entries no longer in the ladder.** An *entry* is a bot at one version (the content hash
  of its folder, :mod:`arena.bots.versions`). The file's ``entries`` (set by each run) are the
  ladder's bots at their current versions and, after ``on_change = "new-version"``, their
  earlier versions. A game with a seat that is not an entry (a bot removed from the ladder
  file, or a version replaced with ``on_change = "replace"``) stays in the file but out of
  the ratings.

A bot with more than one rated version is shown as ``name@version`` for each; a bot with
one as its name alone.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..bots.versions import version_label
from .schedule import set_games
from .store import GameRow

Entry = tuple[str, str]
"""A bot at one version: ``(name, version)`` (version ``""`` when a game says none)."""


@dataclass(frozen=True)
class RatedView:
    """The games that enter the ratings, with each seat named by its entry's label."""

    games: list[GameRow]
    """Games of complete sets among entries; ``seats`` hold labels (:func:`labels`)."""
    labels: dict[Entry, str] = field(default_factory=dict)
    """The label of every entry with a rated game (or listed in the file's entries)."""
    partial_sets: int = 0
    """Duplicate sets among entries with some, not all, of their games recorded."""
    partial_games: int = 0
    """The games of those sets (recorded, not rated)."""
    retired_games: int = 0
    """Games with a seat that is not an entry (a removed bot or a replaced version)."""


def game_entries(g: GameRow) -> list[Entry]:
    """The entry of each seat of a recorded game."""
    versions = g.versions or [""] * len(g.seats)
    return list(zip(g.seats, versions, strict=True))


def complete_sets(games: Iterable[GameRow]) -> tuple[list[GameRow], list[list[GameRow]]]:
    """Split games into those of complete duplicate sets (in their order) and the partial
    sets (each a list of its recorded games). A set is complete with :func:`set_games` of
    its seating games recorded."""
    by_set: dict[str, list[GameRow]] = defaultdict(list)
    order: list[GameRow] = []
    for g in games:
        by_set[g.dset].append(g)
        order.append(g)
    partial = [gs for gs in by_set.values() if len(gs) < set_games(gs[0].seats)]
    cut = {gs[0].dset for gs in partial}
    return [g for g in order if g.dset not in cut], partial


def labels(entries: Iterable[Entry]) -> dict[Entry, str]:
    """How each entry is shown: its name alone, or ``name@version`` (short,
    :func:`arena.bots.versions.version_label`) when the name has more than one entry."""
    entries = list(dict.fromkeys(entries))
    count: dict[str, int] = defaultdict(int)
    for name, _ in entries:
        count[name] += 1
    return {(n, v): version_label(n, v) if count[n] > 1 and v else n for n, v in entries}


def rated_view(games: Iterable[GameRow], entries: Sequence[Entry] | None = None) -> RatedView:
    """The games of ``games`` that enter the ratings: every seat an entry of ``entries``
    (None: every entry that played) and the set complete; seats relabelled (:func:`labels`).
    """
    games = list(games)
    allowed = set(entries) if entries is not None else None
    kept: list[GameRow] = []
    retired = 0
    for g in games:
        if allowed is not None and not set(game_entries(g)) <= allowed:
            retired += 1
        else:
            kept.append(g)
    whole, partial = complete_sets(kept)
    shown = labels([*(entries or []), *(e for g in whole for e in game_entries(g))])
    relabelled = [dataclasses.replace(g, seats=[shown[e] for e in game_entries(g)])
                  for g in whole]
    return RatedView(relabelled, shown, partial_sets=len(partial),
                     partial_games=sum(len(gs) for gs in partial), retired_games=retired)
