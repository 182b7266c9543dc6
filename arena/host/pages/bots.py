"""A bot's page (``/bots/{name}``: its versions, its rating over time, its recent games and
faults) and a version's (``/versions/{id}``: build and validation progress, the log for
its owner). The rating chart comes from :class:`RatingReplay`, which replays each rated
game once for every view after it."""

from __future__ import annotations

import array
import bisect
import itertools
import threading
import weakref
from typing import NamedTuple

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from ...ladder.ratings import LiveRatings
from ...ladder.store import GameRow
from ...stats.head_to_head import beyond
from ...web import charts
from ...web.views import game_row
from ..deps import HostDep, SessionDep, VersionId, can_see
from ..embargo import games_out
from ..models import Bot, FaultRow, Game, GameSeat, Version
from ..ratings import batch_table, open_ratings
from ..routes.games import with_seat
from ..schemas import GameOut, VersionOut
from ..service import Host
from .base import page
from .errors import not_found
from .sessions import signed_in

router = APIRouter(include_in_schema=False)


@router.get("/bots")
def bots_page() -> RedirectResponse:
    """The bots are listed on the leaderboard (each links to its own page)."""
    return RedirectResponse("/", status_code=307)


class Series(NamedTuple):
    """A bot's rating history as its page draws it (:meth:`RatingReplay.series`)."""

    games: int
    low: float | None
    high: float | None
    points: list[tuple[int, float]]
    """``(game number from 1, rating)``, the first game and the last among them."""


class _Kept:
    """A bot's ratings after each of its games, as far as the replay had gone (``seq``)."""

    def __init__(self) -> None:
        self.seq = 0
        self.values: array.array[float] = array.array("d")
        self.low: float | None = None
        self.high: float | None = None


CHART_POINTS = 600
"""The most points of a rating chart (it is 640 units wide: one a unit or so)."""
SERIES_KEPT = 64
"""Bots whose chart :class:`RatingReplay` keeps (8 bytes a game each)."""


class RatingReplay:
    """Every finished rated game replayed through the live ratings, in result order, kept
    up to date by :meth:`advance` (which reads only the games finished since its last call)
    so a bot page does not replay the whole competition at each view: at 100,000 games
    that took some 20 s of CPU per view, which anyone could ask for again and again next
    to the games' clocks. It keeps, per version, the ``seq`` of each of its rated games and
    its μ − 3σ after it: 16 bytes a seat and game (about 5 MB for 100,000 games of three).
    Thread-safe (pages run in a thread pool)."""

    def __init__(self) -> None:
        self.live = LiveRatings([])
        self.seq = 0
        """The last result (``Game.seq``) replayed."""
        self.rows_read = 0
        """Seat rows read from the database so far (what :meth:`advance` costs)."""
        self._seqs: dict[str, array.array[int]] = {}
        self._values: dict[str, array.array[float]] = {}
        self._series: dict[frozenset[str], _Kept] = {}  # in the order last asked for
        self._lock = threading.Lock()

    def advance(self, s: Session) -> None:
        """Replay the rated games finished since the last call (streamed, 1,000 rows at a
        time)."""
        rated = (Game.status == "finished", Game.kind == "rated")
        with self._lock:
            rows = s.execute(select(Game.id, Game.places, GameSeat.version_id, Game.seq)
                             .join(GameSeat).where(*rated, Game.seq > self.seq)
                             .order_by(Game.seq, GameSeat.seat)
                             .execution_options(yield_per=1000))
            live = self.live
            for game_id, group in itertools.groupby(rows, key=lambda r: r[0]):
                seated = list(group)
                self.rows_read += len(seated)
                seats = [str(r[2]) for r in seated]
                for b in seats:
                    if b not in live.ratings:
                        live.ratings[b] = live.model.rating(name=b)
                        self._seqs[b], self._values[b] = array.array("q"), array.array("d")
                live.update(GameRow(game_id, 0, "", len(seats), "", None, [],
                                    list(seated[0][1] or []), seats, 0, 0, 0))
                seq = seated[0][3]
                assert seq is not None  # a finished game's result has its number
                for b in dict.fromkeys(seats):
                    r = live.ratings[b]
                    self._seqs[b].append(seq)
                    self._values[b].append(float(r.mu) - 3 * float(r.sigma))
                self.seq = seq

    def history(self, version_ids: set[int]) -> list[tuple[int, float]]:
        """The μ − 3σ of a bot (its versions ``version_ids``) after each of its rated
        games replayed so far, as ``(its game number from 1, rating)``; in a game where
        two of its versions sat, the one whose id sorts first as text."""
        with self._lock:
            points: dict[int, tuple[str, float]] = {}
            for b in (str(v) for v in version_ids):
                for seq, value in zip(self._seqs.get(b, ()), self._values.get(b, ()),
                                      strict=True):
                    if seq not in points or b < points[seq][0]:
                        points[seq] = (b, value)
        return [(i + 1, points[q][1]) for i, q in enumerate(sorted(points))]

    def series(self, version_ids: set[int], most: int = CHART_POINTS) -> Series:
        """What a bot page draws of :meth:`history`: its number of games, its lowest and
        highest rating, and at most ``most`` (2 or more) of its points, evenly spaced from
        its first game to its last. Kept per bot (the last :data:`SERIES_KEPT` asked for) and
        extended by the games replayed since, so a view costs ``most`` points and the new
        games, however many games the bot has played (a bot page drew every one: some
        0.3 s and 400 kB a view at 33,000 games)."""
        key = frozenset(str(v) for v in version_ids)
        with self._lock:
            kept = self._series.pop(key, None) or _Kept()
            self._series[key] = kept  # the newest asked for, last
            while len(self._series) > SERIES_KEPT:
                self._series.pop(next(iter(self._series)))
            if kept.seq < self.seq:
                points: dict[int, tuple[str, float]] = {}
                for b in key:
                    seqs = self._seqs.get(b, array.array("q"))
                    values = self._values.get(b, array.array("d"))
                    for i in range(bisect.bisect_right(seqs, kept.seq), len(seqs)):
                        if seqs[i] not in points or b < points[seqs[i]][0]:
                            points[seqs[i]] = (b, values[i])
                for q in sorted(points):
                    value = points[q][1]
                    kept.values.append(value)
                    kept.low = value if kept.low is None else min(kept.low, value)
                    kept.high = value if kept.high is None else max(kept.high, value)
                kept.seq = self.seq
            values = kept.values
            n = len(values)
            step = [round(i * (n - 1) / (most - 1)) for i in range(most)] if n > most \
                else range(n)
            return Series(n, kept.low, kept.high, [(i + 1, values[i]) for i in step])


_REPLAYS: weakref.WeakKeyDictionary[Host, tuple[int, RatingReplay]] = \
    weakref.WeakKeyDictionary()
_REPLAYS_LOCK = threading.Lock()


def rating_history(s: Session, version_ids: set[int], replay: RatingReplay | None = None
                   ) -> list[tuple[int, float]]:
    """The live rating (OpenSkill μ − 3σ) of a bot after each of its rated games, as
    ``(its game number from 1, rating)``: every finished rated game replayed in result
    order, exactly as the host's live updates applied them (``moon host rerate``).

    A version's rating after a game depends on its opponents' ratings then, so every rated
    game is replayed: by ``replay`` (the host's, which replays each game once), else afresh.
    """
    replay = replay or RatingReplay()
    replay.advance(s)
    return replay.history(version_ids)


def host_replay(host: Host) -> RatingReplay:
    """The host's :class:`RatingReplay` (made at the first bot page, and again after a
    game was voided by the organiser: ``host.ratings_epoch``)."""
    with _REPLAYS_LOCK:
        kept = _REPLAYS.get(host)
        if kept is None or kept[0] != host.ratings_epoch:
            kept = _REPLAYS[host] = (host.ratings_epoch, RatingReplay())
        return kept[1]


class HeadToHead(NamedTuple):
    """One opponent version a bot's version met, as its page lists it."""

    version: Version
    """The bot's own version."""
    opponent: Version
    games: int
    score: float
    """How often ``version`` finished ahead of ``opponent`` (ties count ½)."""
    gap: float | None
    """``version``'s rating minus ``opponent``'s; None when either is open or unfitted."""
    beyond: bool
    """The gap says more than these games measured (:func:`arena.stats.head_to_head.beyond`;
    3-player competitions)."""


def head_to_head_rows(s: Session, host: Host, b: Bot) -> list[HeadToHead]:
    """Every version a version of ``b`` met in rated games (as of the last batch fit), the
    most games first."""
    table = batch_table(s)
    mine = {v.id: v for v in b.versions}
    met: dict[int, list[tuple[int, float, int]]] = {}
    for key, (score, games) in table["h2h"].items():
        x, y = (int(i) for i in key.split("-"))
        if x in mine:
            met.setdefault(y, []).append((x, float(score), int(games)))
        if y in mine:
            met.setdefault(x, []).append((y, 1.0 - float(score), int(games)))
    others = {v.id: v for v in s.scalars(select(Version).where(Version.id.in_(list(met)))
                                         .options(selectinload(Version.bot)))}
    open_ = open_ratings(s)
    out = []
    for oid, rows in met.items():
        o = others.get(oid)
        if o is None:
            continue
        for vid, score, games in rows:
            v = mine[vid]
            fitted = v.rating is not None and o.rating is not None \
                and not {v.id, o.id} & open_
            gap = v.rating - o.rating if fitted and v.rating is not None \
                and o.rating is not None else None
            out.append(HeadToHead(v, o, games, score, gap, gap is not None
                                  and host.ruleset.players == 3
                                  and beyond(gap, score, games)))
    return sorted(out, key=lambda h: (-h.games, h.opponent.bot.name, h.opponent.id))


@router.get("/bots/{name}", response_class=HTMLResponse)
def bot_page(name: str, request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """A bot: its versions with their build and validation status (the reasons and build
    logs for its owner), its rating over time, its recent games, its faults by reason."""
    b = s.scalar(select(Bot).where(Bot.name == name).options(
        selectinload(Bot.versions), selectinload(Bot.owner)))
    if b is None:
        return not_found(request, s, host, f"There is no bot named {name!r}.")
    user = signed_in(request, s)
    mine = can_see(user, b.owner_id)
    open_ = open_ratings(s)
    placement = host.settings.matchmaking.placement_sets
    versions = [VersionOut.of(v, mine, open_, placement) for v in reversed(b.versions)]
    vids = {v.id for v in b.versions}
    replay = host_replay(host)
    replay.advance(s)
    series = replay.series(vids)
    _, its_games = with_seat(s, select(Version.id).where(Version.bot_id == b.id))
    games = s.scalars(
        select(Game).where(Game.kind == "rated", its_games)
        .order_by(Game.created_at.desc(), Game.id.desc()).limit(20)
        .options(selectinload(Game.seats).selectinload(GameSeat.version)
                 .selectinload(Version.bot), selectinload(Game.faults))).all()
    faults = {str(reason): int(n) for reason, n in s.execute(
        select(FaultRow.reason, func.count()).join(Game).where(
            FaultRow.version_id.in_(vids), Game.kind == "rated")
        .group_by(FaultRow.reason)).all()}
    return page(request, s, host, "bot", bot=b, mine=mine, versions=versions,
                h2h=head_to_head_rows(s, host, b),
                chart=charts.rating_chart(series.points, games=series.games,
                                          low=series.low, high=series.high),
                games=[game_row(g, vids) for g in games_out(s, games, user)],
                faults=sorted(faults.items(), key=lambda kv: (-kv[1], kv[0])))


@router.get("/versions/{version_id}", response_class=HTMLResponse)
def version_page(version_id: VersionId, request: Request, host: HostDep, s: SessionDep
                 ) -> HTMLResponse:
    """A version: its status (the page refreshes itself while it is built and validated),
    and for its owner the reason and the build and validation log."""
    v = s.get(Version, version_id)
    if v is None:
        return not_found(request, s, host, f"There is no version {version_id}.")
    user = signed_in(request, s)
    mine = can_see(user, v.bot.owner_id)
    log = None
    if mine:
        path = host.build_log(v.id)
        log = host.for_participant(path.read_text(errors="replace")) if path.is_file() \
            else ""
    validation = []
    if mine:
        validation = [GameOut.of(g) for g in s.scalars(
            select(Game).where(Game.kind == "validation", Game.id.in_(
                select(GameSeat.game_id).where(GameSeat.version_id == v.id)))
            .order_by(Game.created_at).options(
                selectinload(Game.seats).selectinload(GameSeat.version)
                .selectinload(Version.bot), selectinload(Game.faults))).all()]
    # the step a rejected version failed at: its validation, or else its build
    failed_step = None if v.status != "rejected" else (
        "validating" if (v.reason or "").startswith("validation") else "building")
    busy = v.status in ("pending", "building", "validating")
    response = page(request, s, host, "version",
                    version=VersionOut.of(v, mine, open_ratings(s),
                                          host.settings.matchmaking.placement_sets),
                    placement=host.settings.matchmaking.placement_sets, mine=mine, log=log,
                    validation=validation, owner=v.bot.owner.name, busy=busy,
                    failed_step=failed_step)
    if busy:  # it refreshes itself to follow the build: never from a cache
        response.headers["Cache-Control"] = "no-store"
    return response


__all__ = ["CHART_POINTS", "SERIES_KEPT", "RatingReplay", "Series", "host_replay",
           "rating_history", "router"]
