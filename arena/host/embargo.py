"""No deal given away while it is in play: the games of a duplicate set share one board (the
same hands, dealt from the same seed), so a finished game's record, replay and seats'
stderr would give away the hands its siblings still have to play, and so would a running
game's live view, whose plays are the board's tiles. They are withheld from everyone but
the organiser until every other game of the set has ended (:func:`withheld`): the host
plays one game of a set at a time (:meth:`arena.host.matchmaker.Matchmaker.claim_rated`),
so the live view of a set's last game is public as it runs, the others' once the set
has ended, as their replays; the
game's result (places, scores) is public at once, as the ratings use it, and holds no
tile. A validation game deals no board of a set (its seed is the checks'), so its owner
sees it at once; so does the asker a challenge game (its deal is its own), which no one
else but the organiser sees (:func:`arena.host.challenges.hidden`). A final's duplicate
set is its whole board (:mod:`arena.host.final`).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .challenges import hidden
from .models import Game, Participant
from .schemas import GameOut

SET_KINDS = ("rated", "final")
"""The kinds of game dealt a board of a duplicate set: public, and withheld while in play."""
IN_PLAY = ("queued", "running")
"""The statuses of a game still to be played (a voided game's replay is queued in the
transaction that voids it, so a set is never seen ended between the two)."""


def in_play(s: Session, set_ids: Iterable[int | None]) -> dict[int, int]:
    """How many games of each of the duplicate sets ``set_ids`` are still to be played
    (queued or running), by set id; a set with none is left out (index ``ix_games_dset_id``)."""
    ids = sorted({i for i in set_ids if i is not None})
    if not ids:
        return {}
    rows = s.execute(select(Game.dset_id, func.count()).where(
        Game.dset_id.in_(ids), Game.status.in_(IN_PLAY)).group_by(Game.dset_id))
    return {int(d): int(n) for d, n in rows if d is not None}


def note(others: int) -> str:
    """When a withheld game is shown, for ``others`` games of its set still to be played:
    ``"shown when the 3 other games of its set end"``."""
    if others == 1:
        return "shown when the other game of its set ends"
    return f"shown when the {others} other games of its set end"


def withheld(g: Game, caller: Participant | None, playing: dict[int, int]) -> str | None:
    """Why ``g``'s live view, record, replay and stderr are not shown to ``caller`` yet (a
    :func:`note`), or None if they may be: ``playing`` is :func:`in_play` of its set. Only a
    rated or final game while other games of its set are still to be played is withheld,
    and never from the organiser. A challenge game's is withheld from all but its asker
    and the organiser (:func:`arena.host.challenges.hidden`)."""
    if g.kind == "challenge":
        return hidden(g, caller)
    if g.kind not in SET_KINDS or g.dset_id is None:
        return None
    if caller is not None and caller.is_admin:
        return None
    # the count of a game still in play holds the game itself
    others = playing.get(g.dset_id, 0) - (1 if g.status in IN_PLAY else 0)
    return note(others) if others > 0 else None


def withheld_game(s: Session, g: Game, caller: Participant | None) -> str | None:
    """:func:`withheld` for one game, reading its set's games still to be played."""
    if g.kind == "challenge":
        return hidden(g, caller)
    if g.kind not in SET_KINDS or g.dset_id is None:
        return None
    return withheld(g, caller, in_play(s, [g.dset_id]))


def games_out(s: Session, games: Iterable[Game], caller: Participant | None
              ) -> list[GameOut]:
    """The API's view of ``games`` (seats, versions and faults loaded) for ``caller``, each
    saying whether its record is withheld (one query for them all)."""
    rows = list(games)
    playing = in_play(s, (g.dset_id for g in rows))
    return [GameOut.of(g, withheld(g, caller, playing)) for g in rows]


__all__ = ["IN_PLAY", "SET_KINDS", "games_out", "in_play", "note", "withheld", "withheld_game"]
