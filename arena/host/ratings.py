"""The host's ratings, with the ladder's own models (:mod:`arena.ladder.ratings`):

- live: OpenSkill (Plackett–Luce) per version, updated by :func:`live_update` in the same
  transaction that records a finished game, in game order, by the one writer — so a game is
  rated once and only once, whatever happens to the process;
- batch: the Bradley–Terry / Plackett–Luce fit with 95% bootstrap intervals over whole
  boards (:func:`batch_fit`; a host's board is one duplicate set), recomputed periodically
  from every finished rated game, exactly as `moon ladder show` computes it for the same
  games.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from ..ladder.ratings import LiveRatings, Rating, rate
from ..ladder.store import GameRow
from .models import Game, Meta, Version


def game_row(game: Game) -> GameRow:
    """A finished rated game as the ladder's ratings read it (bots are version ids; the
    board, the bootstrap's unit, is the game's duplicate set: each set has a deal of its
    own)."""
    seats = [str(s.version_id) for s in game.seats]
    return GameRow(game.id, game.dset_id or 0, f"set{game.dset_id}", len(seats),
                   game.termination or "", game.winner, list(game.scores or []),
                   list(game.places or []), seats,
                   game.hands or 0, game.wall_ms or 0, game.think_ms or 0)


def live_update(session: Session, game: Game) -> None:
    """Apply one finished rated game to the live OpenSkill ratings of its versions (the
    caller commits it with the game)."""
    ids = sorted({s.version_id for s in game.seats if s.version_id is not None})
    versions = {v.id: v for v in session.scalars(select(Version).where(Version.id.in_(ids)))}
    live = LiveRatings([str(i) for i in ids])
    for i, v in versions.items():
        live.ratings[str(i)] = live.model.rating(mu=v.mu, sigma=v.sigma, name=str(i))
    live.update(game_row(game))
    for i, v in versions.items():
        r = live.ratings[str(i)]
        v.mu, v.sigma = float(r.mu), float(r.sigma)


def open_ratings(session: Session) -> set[int]:
    """The ids of the versions whose rating the last batch fit left open (never behind,
    or never ahead of, some other version): quoted by its bound, not by its figure
    (docs/ladder.md, "When the data cannot give an interval"); empty before the first fit."""
    batch = session.get(Meta, "batch")
    if batch is None or not isinstance(batch.value, dict):
        return set()
    return {int(i) for i in batch.value.get("open", ())}


def finished_games(session: Session) -> list[GameRow]:
    """Every finished rated game, in the order their results were written."""
    games = session.scalars(
        select(Game).where(Game.status == "finished", Game.kind == "rated")
        .order_by(Game.seq).options(selectinload(Game.seats)))
    return [game_row(g) for g in games]


def batch_from_database(url: str, bootstrap: int, seed: int = 0) -> tuple[int, list[Rating]]:
    """Read every finished rated game from the database at ``url`` (a SQLAlchemy URL, as
    :func:`arena.host.db.database_url` gives) and fit them (:func:`batch_fit`); returns how
    many games and the ratings. The host runs it in its batch worker process: reading all
    games is the one thing the host does whose memory grows with the number of games, and
    a process of its own keeps that out of the long-running server (whose allocator would
    keep the peak of each read, so its memory would creep up by ~1 MB per 100 games)."""
    from .db import make_engine

    engine = make_engine(url)
    try:
        with Session(engine) as s:
            games = finished_games(s)
    finally:
        engine.dispose()
    return len(games), batch_fit(games, bootstrap, seed)


def batch_fit(games: list[GameRow], bootstrap: int, seed: int = 0) -> list[Rating]:
    """The batch ratings of every version that played ``games`` (``Rating.bot`` is the
    version id as text), best first; [] with no games."""
    bots = sorted({b for g in games for b in g.seats}, key=int)
    if not bots:
        return []
    return rate(games, bots, bootstrap=bootstrap, seed=seed)
