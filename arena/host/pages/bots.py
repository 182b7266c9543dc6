"""A bot's page (``/bots/{name}``: its versions, its rating over time, its recent games and
faults) and a version's (``/versions/{id}``: build and validation progress, the log for
its owner). The rating chart is the leaderboard's batch rating of each version after each
batch fit, as the fits stored it (:func:`rating_lines`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from ...stats.head_to_head import beyond
from ...web import charts
from ...web.views import game_row
from ..deps import HostDep, SessionDep, VersionId, can_see
from ..embargo import games_out
from ..models import Bot, FaultRow, Game, GameSeat, Meta, RatingPoint, Version
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


CHART_POINTS = 600
"""The most fits a rating chart draws (it is 640 units wide: one a unit or so)."""


def rating_lines(s: Session, versions: Sequence[Version], most: int = CHART_POINTS
                 ) -> list[charts.VersionLine]:
    """A bot's rating chart: for each of its ``versions`` that a batch fit rated, its
    rating and interval after the fits that kept a point of it (:class:`RatingPoint`,
    one each 2% of its games: :func:`arena.host.ratings.next_point`), in order of the
    competition's rated games at the fit, the latest fit of a count kept (a refit of the
    same games, after a restart or ``moon host rerate``); and last its rating now, after
    the last fit, as the leaderboard shows it. At most ``most`` (2 or more) fits of all
    the bot's, evenly spaced, and each version's first and last."""
    numbers = {v.id: v.number for v in versions}
    rows = s.execute(select(RatingPoint.version_id, RatingPoint.games, RatingPoint.rating,
                            RatingPoint.low, RatingPoint.high, RatingPoint.open)
                     .where(RatingPoint.version_id.in_(list(numbers)))
                     .order_by(RatingPoint.id)).all()
    kept: dict[int, dict[int, charts.FitPoint]] = {}
    for vid, games, rating, low, high, open_ in rows:
        kept.setdefault(vid, {})[games] = charts.FitPoint(games, rating, low, high, open_)
    batch = s.get(Meta, "batch")
    now = batch.value.get("games") if batch is not None and isinstance(batch.value, dict) \
        else None
    if isinstance(now, int):
        open_now = open_ratings(s)
        for v in versions:
            if v.rating is not None and v.id in kept:  # a fit rated it: its figure now
                kept[v.id][now] = charts.FitPoint(now, v.rating, v.rating_low,
                                                  v.rating_high, v.id in open_now)
    fits = sorted({g for points in kept.values() for g in points})
    if len(fits) > most:
        chosen = {fits[round(i * (len(fits) - 1) / (most - 1))] for i in range(most)}
        for points in kept.values():
            chosen |= {min(points), max(points)}
    else:
        chosen = set(fits)
    return [charts.VersionLine(numbers[vid], [points[g] for g in sorted(points)
                                              if g in chosen])
            for vid, points in sorted(kept.items(), key=lambda kv: numbers[kv[0]])]


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
                chart=charts.rating_chart(rating_lines(s, b.versions)),
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


__all__ = ["CHART_POINTS", "rating_lines", "router"]
