"""What the API returns: pydantic types built field by field from the rows, never an ORM
row itself, so a new column (a private reason, a log path) cannot leak. Private fields
(``reason``, logs) are filled only for their owner and the organiser."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection

from pydantic import BaseModel, Field

from ..bots.versions import version_label
from .models import Game, Version


def iso(t: dt.datetime | None, timespec: str = "seconds") -> str | None:
    """A time as ISO 8601 in UTC (SQLite hands back naive UTC times), to the second
    (``timespec``: ``microseconds`` where the order of close times matters)."""
    if t is None:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.astimezone(dt.UTC).isoformat(timespec=timespec)


class Message(BaseModel):
    """An error or a note."""

    detail: str


class RegisterIn(BaseModel):
    """A registration."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
                      description="1-64 letters, digits, '-', '_' or '.'")
    invite: str | None = Field(None, description="An invite code from the organiser "
                               "(needed unless registration is open).")


class RegisterOut(BaseModel):
    """A new participant and their API token (shown once: keep it)."""

    name: str
    token: str


class Me(BaseModel):
    """Who the token belongs to."""

    name: str
    admin: bool
    bots: list[str]
    disabled: str | None = Field(None, description="Why the organiser disabled you (you "
                                 "may not submit or ask for challenges), else null")


class InviteOut(BaseModel):
    """A new invite code, good for one registration."""

    code: str


RATING_OPEN = ("The data leave the rating open (the version never finished behind, or never "
               "ahead of, some other): `rating` is then the fit's figure held by its prior, "
               "for ordering only; quote the bound that is not null, as `moon ladder show` "
               "does: 'at least rating_low' when rating_high is null (it never finished "
               "behind some other), 'at most rating_high' when rating_low is null (it never "
               "finished ahead); both null: there is no figure to quote (n/a)")
"""What ``rating_open`` means, in the API's schema."""


class VersionOut(BaseModel):
    """A version of a bot."""

    id: int
    bot: str
    label: str = Field(description="name@hash, how people see it")
    number: int
    hash: str
    status: str = Field(description="pending, building, validating, active, rejected, "
                        "retired or disabled")
    created_at: str | None
    build_started_at: str | None = Field(None, description="When its latest build started "
                                         "(to the microsecond: the order in which the "
                                         "build queue took versions); null before")
    games: int
    sets: int = Field(0, description="Duplicate sets played whole (its placement series "
                      "counts them)")
    provisional: bool = Field(False, description="Active and still in its placement "
                              "series: fewer than [matchmaking] placement_sets sets")
    mu: float
    sigma: float
    rating: float | None
    rating_low: float | None
    rating_high: float | None
    rating_open: bool = Field(False, description=RATING_OPEN)
    reason: str | None = Field(None, description="Why it was rejected or disabled "
                               "(its owner and the organiser only).")

    @classmethod
    def of(cls, v: Version, private: bool, open_ratings: Collection[int],
           placement: int = 0) -> VersionOut:
        """From a row; ``private`` adds the owner-only fields; ``open_ratings``: the ids of
        the versions whose rating is open (:func:`arena.host.ratings.open_ratings`);
        ``placement``: the sets of a placement series."""
        return cls(id=v.id, bot=v.bot.name, label=version_label(v.bot.name, v.hash),
                   number=v.number, hash=v.hash, status=v.status, created_at=iso(v.created_at),
                   build_started_at=iso(v.build_started_at, "microseconds"),
                   games=v.games, sets=v.sets,
                   provisional=v.status == "active" and v.sets < placement,
                   mu=round(v.mu, 3), sigma=round(v.sigma, 3),
                   rating=_r(v.rating), rating_low=_r(v.rating_low),
                   rating_high=_r(v.rating_high),
                   rating_open=v.rating is not None and v.id in open_ratings,
                   reason=v.reason if private else None)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


class BotOut(BaseModel):
    """A bot and its versions."""

    name: str
    owner: str
    active_version: str | None
    versions: list[VersionOut]


class LeaderboardRow(BaseModel):
    """One active version on the leaderboard."""

    rank: int
    bot: str
    owner: str
    version: str
    version_id: int
    rating: float | None = Field(description="Batch fit, the ladder's Elo scale: 1500 the "
                                 "average of the versions rated with `anchor` true; None "
                                 "before the first")
    rating_low: float | None
    rating_high: float | None
    rating_open: bool = Field(False, description=RATING_OPEN)
    anchor: bool = Field(True, description="One of the versions whose mean rating is 1500: "
                         "every version rated (retired ones too), unless the data separate "
                         "some (one that never finished ahead, say); then the largest group "
                         "that each finished both ahead of and behind the others, directly "
                         "or through others, and the rest are quoted by a bound")
    place: str | None = Field(None, description="The fit's place over every version rated "
                              "(retired ones too): a place of its own where the whole "
                              "table holds at 95% (Holm's step-down over the neighbours), "
                              "shared (`2=`) where the data cannot tell the versions apart; "
                              "None before the version is fitted")
    h2h_next: float | None = Field(None, description="How often this version finished "
                                   "ahead of the next row's (ties count half), over "
                                   "h2h_next_games games; None when they never met")
    h2h_next_games: int = Field(0, description="Games this version and the next row's met "
                                "in")
    gap_beyond: bool = Field(False, description="The rating gap to the next row says more "
                             "than their games measured: the share it implies is outside "
                             "the 95% interval of h2h_next (3-player competitions)")
    mu: float
    sigma: float
    conservative: float = Field(description="Live OpenSkill mu - 3 sigma (OpenSkill's "
                                "units, mu from 25: not the rating's scale)")
    games: int
    sets: int = Field(0, description="Duplicate sets played whole")
    provisional: bool = Field(description="Still in its placement series: fewer sets "
                              "played whole than [matchmaking] placement_sets")


class SeatOut(BaseModel):
    """A seat of a game."""

    seat: int
    bot: str
    version: str | None
    version_id: int | None
    place: int | None
    score: int | None


class FaultOut(BaseModel):
    """A fault of a seat."""

    seat: int
    reason: str
    forfeit: bool


class GameOut(BaseModel):
    """A game: what a spectator may see (while it runs: who plays, nothing else)."""

    id: str
    kind: str
    status: str
    set: int | None
    seating: int
    attempt: int
    seq: int | None = Field(description="Order in which results were written (and rated)")
    seats: list[SeatOut]
    termination: str | None
    winner: int | None
    scores: list[int] | None
    hands: int | None
    wall_ms: int | None
    faults: list[FaultOut]
    created_at: str | None
    started_at: str | None
    finished_at: str | None = Field(description="When its result was written; null until it "
                                    "has finished (queued, running, voided, cancelled)")
    record: bool = Field(description="Whether its record can be downloaded")
    withheld: str | None = Field(None, description="While other games of its duplicate "
                                 "set (they share its board) are still to be played: when "
                                 "its record, replay and stderr will be shown (e.g. 'shown "
                                 "when the 3 other games of its set end'); else null")

    @classmethod
    def of(cls, g: Game, withheld: str | None = None) -> GameOut:
        """From a row (its seats, versions and faults loaded); ``withheld``: the caller
        may not see its record yet (:func:`arena.host.embargo.withheld`), and why."""
        done = g.status == "finished"
        seats = []
        for x in g.seats:
            v = x.version
            seats.append(SeatOut(seat=x.seat, bot=v.bot.name if v else x.reference,
                                 version=version_label(v.bot.name, v.hash) if v else None,
                                 version_id=v.id if v else None,
                                 place=x.place if done else None,
                                 score=x.score if done else None))
        return cls(id=g.id, kind=g.kind, status=g.status, set=g.dset_id, seating=g.seating,
                   attempt=g.attempt, seq=g.seq, seats=seats,
                   termination=g.termination if done else None,
                   winner=g.winner if done else None, scores=g.scores if done else None,
                   hands=g.hands if done else None, wall_ms=g.wall_ms if done else None,
                   faults=[FaultOut(seat=f.seat, reason=f.reason, forfeit=f.forfeit)
                           for f in g.faults] if done else [],
                   created_at=iso(g.created_at), started_at=iso(g.started_at),
                   finished_at=iso(g.finished_at) if done else None,
                   record=done and bool(g.record_path) and withheld is None,
                   withheld=withheld)


class GamePage(BaseModel):
    """A page of games, newest first."""

    total: int
    games: list[GameOut]


class StatusOut(BaseModel):
    """The host's status."""

    name: str
    queued: int
    running: int
    finished: int
    voided: int
    games_per_min: float
    workers: int
    runner: str
    versions: dict[str, int]
    builds_pending: int
    uptime_s: float
    waiting: str = Field("", description="why no rated game can start (fewer than 2 active "
                         "versions), or empty")
    phase: str = Field("season", description="the competition's phase: upcoming, "
                       "registration, season, freeze, final or ended (docs/host.md)")
    next_phase: str | None = Field(None, description="the phase it moves to next, or null")
    next_change_at: str | None = Field(None, description="when (UTC), or null")
    final: str = Field("", description="the final's progress in a line (boards, games "
                       "finished and running; why it ended), or empty before it starts")
    builds_waiting: str = Field("", description="why submissions wait (pending) instead of "
                                "being built: the host cannot build or run bots just now "
                                "(e.g. no Docker engine answers), or empty")
    visitors: dict[str, int] = Field({}, description="since the start: public answers "
                                     "served from the cache (hits), computed (misses), "
                                     "304s (not_modified), stale copies served (stale), "
                                     "requests refused with 429 (refused)")
