"""The competition's pages (server-rendered, Jinja2), a FastAPI router the host mounts
next to its JSON API (:func:`arena.host.app.create_app`).

Every page reads the same rows the API does, through the API's own functions where one
exists (the leaderboard, a version, a game), so the pages and the API cannot disagree.
What is private stays private exactly as in the API: a version's reason and build log
and a seat's stderr only for its owner (and the organiser); validation games only for the
owners of the versions in them; anyone else gets the same 404 as for something that does
not exist.

Pages: ``/`` (leaderboard), ``/bots/{name}``, ``/versions/{id}`` (build and validation
progress; log for its owner), ``/games`` (filter by bot and result), ``/games/{id}``
(replay player once over, live view while it runs), ``/games/{id}/events`` (server-sent
events from the referee's public watch stream), ``/games/{id}/stderr/{seat}``,
``/signin``, ``/signout``, ``/submit``, ``/docs`` (the API, from its OpenAPI schema).
Static files under ``/static``.
"""

from __future__ import annotations

import array
import asyncio
import bisect
import itertools
import json
import math
import threading
import weakref
from collections import Counter, deque
from collections.abc import AsyncIterator
from typing import Annotated, Any, NamedTuple

from fastapi import APIRouter, Depends, File, Form, HTTPException, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from ..bots.versions import version_label
from ..core.timecontrol import TimeControl
from ..host.deps import VersionId, can_see, get_host, get_session
from ..host.models import Bot, FaultRow, Game, GameSeat, Participant, Version
from ..host.ratings import open_ratings
from ..host.registrations import client_key
from ..host.routes.games import with_seat
from ..host.routes.leaderboard import leaderboard as api_leaderboard
from ..host.routes.submissions import submit as api_submit
from ..host.schemas import GameOut, VersionOut
from ..host.service import Host
from ..ladder.ratings import LiveRatings
from ..ladder.store import GameRow
from ..protocol.convert import event_to_dict
from ..records.record import GameRecord
from . import auth, charts
from .replay import replay_view
from .templating import templates

router = APIRouter(include_in_schema=False)

HostDep = Annotated[Host, Depends(get_host)]
SessionDep = Annotated[Session, Depends(get_session)]

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
"""The pages' Content-Security-Policy: nothing from anywhere but the host, no inline
script."""

RESULTS = ("won", "lost", "target", "moon", "forfeit", "hand_limit")
"""The games list's result filter: ``won``/``lost`` (of the bot filtered on: its seat's
place is 1, or not) or a termination."""

SORTS = {"rank": "rank", "bot": "bot", "owner": "owner", "rating": "rating",
         "games": "games", "win": "win", "trend": "trend"}
TREND_GAMES = 10
"""The leaderboard's trend: the win % over a version's last this many games, against
its win % over all its games."""


def page(request: Request, s: Session, host: Host, name: str, status: int = 200,
         **context: Any) -> HTMLResponse:
    """Render ``pages/<name>.html`` with what every page needs (the competition, who is
    signed in, the CSRF value) and the pages' security headers."""
    user = auth.signed_in(request, s)
    html = templates().get_template(f"pages/{name}.html").render(
        request=request, competition=host.settings.competition.name, user=user,
        csrf=auth.csrf_token(request), **context)
    response = HTMLResponse(html, status_code=status)
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    auth.keep_csrf(request, response)
    return response


def _not_found(request: Request, s: Session, host: Host, what: str) -> HTMLResponse:
    return page(request, s, host, "error", status=404, title="Not found", message=what)


# -- the leaderboard -------------------------------------------------------------------------
class Record(NamedTuple):
    """A version's finished rated games, each counted once (a version in two seats of a
    game, in a competition with fewer bots than seats, played that game once, as
    :attr:`Version.games` counts it): ``played`` games, ``won`` of them (a seat of its
    placed first), and won/lost of its last :data:`TREND_GAMES` games, oldest first."""

    played: int
    won: int
    recent: tuple[bool, ...]


class ResultTally:
    """Every version's :class:`Record`, kept up to date by :meth:`advance`, which reads
    only the games finished since its last call (in result order, ``Game.seq``), so a
    leaderboard view does not read every game of every active version: at 100,000 games
    that read 300,000 seat rows per view, which anyone could ask for again and again
    next to the games' clocks. A finished game never changes (a result is written once,
    with the next ``seq``, by the host's one writer), so counting each game once as it
    comes gives the same figures as counting them all again. It keeps three numbers and
    :data:`TREND_GAMES` flags per version that has played. Thread-safe (pages run in a
    thread pool)."""

    def __init__(self) -> None:
        self.seq = 0
        """The last result (``Game.seq``) counted."""
        self.rows_read = 0
        """Seat rows read from the database so far (what :meth:`advance` costs)."""
        self.games = 0
        """Finished rated games counted."""
        self._played: dict[int, int] = {}
        self._won: dict[int, int] = {}
        self._recent: dict[int, deque[bool]] = {}
        self._lock = threading.Lock()

    def advance(self, s: Session) -> None:
        """Count the rated games finished since the last call (streamed, 1,000 seat rows
        at a time)."""
        with self._lock:
            rows = s.execute(select(Game.seq, GameSeat.version_id, GameSeat.place)
                             .join(GameSeat, GameSeat.game_id == Game.id)
                             .where(Game.status == "finished", Game.kind == "rated",
                                    Game.seq > self.seq)
                             .order_by(Game.seq).execution_options(yield_per=1000))
            for seq, group in itertools.groupby(rows, key=lambda r: r[0] or 0):
                won: dict[int, bool] = {}  # version -> a seat of its placed first
                for _, vid, place in group:
                    self.rows_read += 1
                    if vid is not None:
                        won[vid] = won.get(vid, False) or place == 1
                for vid, w in won.items():
                    self._played[vid] = self._played.get(vid, 0) + 1
                    self._won[vid] = self._won.get(vid, 0) + w
                    recent = self._recent.get(vid)
                    if recent is None:
                        recent = self._recent[vid] = deque(maxlen=TREND_GAMES)
                    recent.append(w)
                self.games += 1
                self.seq = seq

    def records(self, version_ids: list[int]) -> dict[int, Record]:
        """The :class:`Record` of each of ``version_ids`` as of the last :meth:`advance`
        (``Record(0, 0, ())`` for a version that has not played)."""
        with self._lock:
            return {v: Record(self._played.get(v, 0), self._won.get(v, 0),
                              tuple(self._recent.get(v, ()))) for v in version_ids}


_TALLIES: weakref.WeakKeyDictionary[Host, ResultTally] = weakref.WeakKeyDictionary()
_TALLIES_LOCK = threading.Lock()


def host_tally(host: Host) -> ResultTally:
    """The host's :class:`ResultTally` (made at the first leaderboard view)."""
    with _TALLIES_LOCK:
        tally = _TALLIES.get(host)
        if tally is None:
            tally = _TALLIES[host] = ResultTally()
        return tally


def win_figures(r: Record) -> dict[str, Any]:
    """The leaderboard's figures of a version from its :class:`Record`: ``played``;
    ``win``, its win % over all its games (None before its first); ``recent``, over its
    last :data:`TREND_GAMES`; ``trend``, ``recent`` − ``win`` in points (None until it
    has played more than :data:`TREND_GAMES` games)."""
    win = 100.0 * r.won / r.played if r.played else None
    recent = 100.0 * sum(r.recent) / len(r.recent) if r.recent else None
    trend = (recent - win) if win is not None and recent is not None and \
        r.played > len(r.recent) else None
    return {"played": r.played, "win": win, "trend": trend, "recent": recent}



def rules_text(host: Host) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The competition's rules (preset and options) and time control as ``(name, value)``
    for the pages."""
    rs = host.ruleset
    rules = [("preset", host.settings.competition.preset), ("players", str(rs.players)),
             ("minimum bid", str(rs.min_bid)),
             ("target", f"{rs.target_marks} marks" if rs.scoring == "marks"
              else f"{rs.target_score} points"),
             ("trumps before widow", "yes" if rs.trump_before_widow else "no"),
             ("doubles may be trumps", "yes" if rs.allow_doubles_trump else "no"),
             ("no trumps allowed", "yes" if rs.allow_no_trump else "no"),
             ("all pass", rs.all_pass), ("shooting the moon wins", "yes"
                                         if rs.moon_wins_game else "no")]
    tc = TimeControl.from_dict(dict(host.settings.time_control))
    clock = [("per decision", f"{tc.decision_ms / 1000:g} s"),
             ("time bank", f"{tc.bank_ms / 1000:g} s"),
             ("start-up", f"{tc.startup_ms / 1000:g} s"),
             ("illegal action retries", str(tc.illegal_retries)),
             ("hand limit", str(tc.max_hands))]
    return rules, clock


@router.get("/", response_class=HTMLResponse)
def leaderboard_page(request: Request, host: HostDep, s: SessionDep,
                     sort: str = Query("rank"), desc: int = Query(0)) -> HTMLResponse:
    """The leaderboard: rank, bot, owner, version, rating with its 95% interval (as a
    bar), games, win %, trend; sortable by any column (``?sort=rating&desc=1``). While
    some version is not fitted yet, a line under the table says why it ranks last."""
    rows = api_leaderboard(s)
    tally = host_tally(host)
    tally.advance(s)
    records = tally.records([r.version_id for r in rows])
    table = [{"row": r, **win_figures(records[r.version_id])} for r in rows]
    key = SORTS.get(sort, "rank")
    if key != "rank":
        def value(t: dict[str, Any]) -> Any:
            r = t["row"]
            v = {"bot": r.bot.lower(), "owner": r.owner.lower(),
                 "rating": r.rating if r.rating is not None else r.conservative - 1e6,
                 "games": r.games, "win": t["win"], "trend": t["trend"]}[key]
            return (v is None, v if v is not None else 0)
        table.sort(key=value, reverse=bool(desc))
        if desc:  # keep the rows without a value last
            table.sort(key=lambda t: value(t)[0])
    elif desc:
        table.reverse()
    ends = [x for r in rows for x in (r.rating_low, None if r.rating_open else r.rating,
                                      r.rating_high) if x is not None]
    lo, hi = (min(ends), max(ends)) if ends else (0.0, 1.0)
    for t in table:
        r = t["row"]
        mid = r.rating if not r.rating_open else r.rating_low if r.rating_low is not None \
            else r.rating_high  # an open rating: its bound, not the prior-held figure
        t["bar"] = charts.interval_bar(r.rating_low, mid, r.rating_high, lo, hi)
    rules, clock = rules_text(host)
    return page(request, s, host, "leaderboard", table=table, sort=key, desc=bool(desc),
                rules=rules, clock=clock, host_status=host.status(s, tally.games),
                trend_games=TREND_GAMES, unfitted=any(r.rating is None for r in rows))


# -- a bot --------------------------------------------------------------------------------------
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
                seq = int(seated[0][3])
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


_REPLAYS: weakref.WeakKeyDictionary[Host, RatingReplay] = weakref.WeakKeyDictionary()
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
    """The host's :class:`RatingReplay` (made at the first bot page)."""
    with _REPLAYS_LOCK:
        replay = _REPLAYS.get(host)
        if replay is None:
            replay = _REPLAYS[host] = RatingReplay()
        return replay


@router.get("/bots/{name}", response_class=HTMLResponse)
def bot_page(name: str, request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """A bot: its versions with their build and validation status (the reasons and build
    logs for its owner), its rating over time, its recent games, its faults by reason."""
    b = s.scalar(select(Bot).where(Bot.name == name).options(
        selectinload(Bot.versions), selectinload(Bot.owner)))
    if b is None:
        return _not_found(request, s, host, f"There is no bot named {name!r}.")
    user = auth.signed_in(request, s)
    mine = can_see(user, b.owner_id)
    open_ = open_ratings(s)
    versions = [VersionOut.of(v, mine, open_) for v in reversed(b.versions)]
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
                chart=charts.rating_chart(series.points, games=series.games,
                                          low=series.low, high=series.high),
                games=[_game_row(GameOut.of(g), vids) for g in games],
                faults=sorted(faults.items(), key=lambda kv: (-kv[1], kv[0])))


def _game_row(g: GameOut, vids: set[int] | None = None) -> dict[str, Any]:
    """A game for a list: its seats, and ``outcome`` (won/lost) of the versions ``vids``."""
    outcome = None
    if vids is not None and g.status == "finished":
        places = [x.place for x in g.seats if x.version_id in vids]
        if places:
            outcome = "won" if places[0] == 1 else "lost"
    return {"game": g, "outcome": outcome}


@router.get("/versions/{version_id}", response_class=HTMLResponse)
def version_page(version_id: VersionId, request: Request, host: HostDep, s: SessionDep
                 ) -> HTMLResponse:
    """A version: its status (the page refreshes itself while it is built and validated),
    and for its owner the reason and the build and validation log."""
    v = s.get(Version, version_id)
    if v is None:
        return _not_found(request, s, host, f"There is no version {version_id}.")
    user = auth.signed_in(request, s)
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
    return page(request, s, host, "version", version=VersionOut.of(v, mine, open_ratings(s)),
                mine=mine, log=log, validation=validation, owner=v.bot.owner.name,
                busy=v.status in ("pending", "building", "validating"),
                failed_step=failed_step)


# -- games ------------------------------------------------------------------------------------
@router.get("/games", response_class=HTMLResponse)
def games_page(request: Request, host: HostDep, s: SessionDep,
               bot: str = Query(""), result: str = Query(""), page_no: int = Query(
                   1, alias="page", ge=1, le=100000)) -> HTMLResponse:
    """Rated games, newest first, filtered by bot and result (``won``/``lost`` of that bot,
    or a termination)."""
    per = 50
    if result and result not in RESULTS:
        return page(request, s, host, "error", status=400, title="No such filter",
                    message=f"There is no result {result!r} to filter on: choose one of "
                    f"{', '.join(RESULTS)}.")
    if result in ("won", "lost") and not bot:
        return page(request, s, host, "error", status=400, title="No such filter",
                    message=f"{result!r} is a bot's result: choose a bot to filter on too.")
    q = select(Game).where(Game.kind == "rated")
    b = s.scalar(select(Bot).where(Bot.name == bot)) if bot else None
    if bot and b is None:
        return _not_found(request, s, host, f"There is no bot named {bot!r}.")
    vids: set[int] | None = None
    counted = listed = q
    if b is not None:
        versions = select(Version.id).where(Version.bot_id == b.id)
        vids = set(s.scalars(versions))
        # its games; won: a seat of its placed first; lost: its games but those
        count_it, list_it = with_seat(s, versions)
        counted, listed = q.where(count_it), q.where(list_it)
        if result in ("won", "lost"):
            count_won, list_won = with_seat(s, versions, GameSeat.place == 1)
            if result == "lost":
                count_won, list_won = ~count_won, ~list_won
            counted = counted.where(Game.status == "finished", count_won)
            listed = listed.where(Game.status == "finished", list_won)
    if result in RESULTS and result not in ("won", "lost"):
        counted = counted.where(Game.termination == result, Game.status == "finished")
        listed = listed.where(Game.termination == result, Game.status == "finished")
    total = s.scalar(select(func.count()).select_from(counted.subquery())) or 0
    rows = s.scalars(listed.order_by(Game.created_at.desc(), Game.id.desc())
                     .limit(per).offset((page_no - 1) * per).options(
                         selectinload(Game.seats).selectinload(GameSeat.version)
                         .selectinload(Version.bot), selectinload(Game.faults))).all()
    bots = list(s.scalars(select(Bot.name).order_by(Bot.name)))
    return page(request, s, host, "games", games=[_game_row(GameOut.of(g), vids) for g in rows],
                total=total, bot=bot, result=result, bots=bots, results=RESULTS,
                page_no=page_no, pages=max(1, math.ceil(total / per)))


def _visible_game(s: Session, game_id: str, user: Participant | None) -> Game | None:
    g = s.scalar(select(Game).where(Game.id == game_id).options(
        selectinload(Game.seats).selectinload(GameSeat.version).selectinload(Version.bot),
        selectinload(Game.faults)))
    if g is None:
        return None
    if g.kind != "rated" and not any(can_see(user, x.version.bot.owner_id)
                                     for x in g.seats if x.version is not None):
        return None
    return g


@router.get("/games/{game_id}", response_class=HTMLResponse)
def game_page(game_id: str, request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """A game: the replay player once it is over (the bots' stderr for their owners), the
    live view while it runs."""
    user = auth.signed_in(request, s)
    g = _visible_game(s, game_id, user)
    if g is None:
        return _not_found(request, s, host, f"There is no game {game_id!r}.")
    out = GameOut.of(g)
    own_seats = [x.seat for x in g.seats
                 if x.version is not None and can_see(user, x.version.bot.owner_id)]
    if g.status in ("queued", "running"):
        return page(request, s, host, "live", game=out, players=host.ruleset.players)
    view = None
    missing = ""
    path = host.record_dir / f"{g.id}.json"
    if g.status == "finished" and g.record_path and path.is_file():
        data = json.loads(path.read_text())
        data["logs"] = {}  # stderr is on its own owner-only page
        view = replay_view(GameRecord.from_dict(data))
    elif g.status == "finished":
        missing = "Its record was pruned (retention); its result is kept."
    return page(request, s, host, "game", game=out, view=view, missing=missing,
                own_seats=own_seats)


@router.get("/games/{game_id}/stderr/{seat}", response_class=HTMLResponse)
def stderr_page(game_id: str, seat: int, request: Request, host: HostDep, s: SessionDep
                ) -> HTMLResponse:
    """A seat's stderr in a game: its owner and the organiser only (others: 404)."""
    user = auth.signed_in(request, s)
    g = _visible_game(s, game_id, user)
    x = next((x for x in g.seats if x.seat == seat), None) if g is not None else None
    if g is None or x is None or x.version is None or not can_see(user,
                                                                  x.version.bot.owner_id):
        return _not_found(request, s, host, f"No seat {seat} of yours in game {game_id!r}.")
    if g.status in ("queued", "running"):
        text = None
    else:
        path = host.seat_log(g.id, seat)
        text = path.read_text(errors="replace") if path.is_file() else ""
    return page(request, s, host, "stderr", game=GameOut.of(g), seat=seat,
                bot=version_label(x.version.bot.name, x.version.hash), text=text)


def _watch(host: Host, game_id: str) -> AsyncIterator[Any] | None:
    ex = getattr(host, "_executor", None)
    watch = getattr(ex, "watch", None)
    return watch(game_id) if watch is not None else None


STREAMS_PER_CLIENT = 8
"""Live event streams (``/games/ID/events``) one client address may hold open at once; one
more is refused (429). A spectator's tabs need a few; one client holding hundreds slowed
every page and the API to seconds (400 streams: 1-5 s an answer)."""
STREAMS_MAX = 256
"""Live event streams open at once from every client together; one more is refused (503)."""
class StreamSlots:
    """The live event streams open now, counted per client address (thread-safe)."""

    def __init__(self, per_client: int = STREAMS_PER_CLIENT, total: int = STREAMS_MAX
                 ) -> None:
        self.per_client = per_client
        self.total = total
        self.open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, client: str) -> tuple[int, str] | None:
        """Take a slot for ``client``: None if taken, else the refusal to answer with
        (``(status, detail)``: 429 for a client at its own limit, 503 for the host at
        its)."""
        with self._lock:
            if self.open[client] >= self.per_client:
                return 429, (f"you have {self.open[client]} live game streams open (at "
                             f"most {self.per_client} at once): close some live pages "
                             "first")
            if sum(self.open.values()) >= self.total:
                return 503, (f"the host has {self.total} live game streams open, its "
                             "most: watch the replay once the game is over, or try "
                             "again later")
            self.open[client] += 1
            return None

    def give_back(self, client: str) -> None:
        """Give back a slot of ``client`` taken by :meth:`take`."""
        with self._lock:
            self.open[client] -= 1
            if self.open[client] <= 0:
                del self.open[client]


_SLOTS: weakref.WeakKeyDictionary[Host, StreamSlots] = weakref.WeakKeyDictionary()


def stream_slots(host: Host) -> StreamSlots:
    """The host's :class:`StreamSlots` (made at the first stream)."""
    with _REPLAYS_LOCK:
        slots = _SLOTS.get(host)
        if slots is None:
            slots = _SLOTS[host] = StreamSlots()
        return slots


def stream_client(address: str) -> str:
    """Who holds a stream, for :data:`STREAMS_PER_CLIENT`: an IPv4 address, or an IPv6
    address's /64 (one machine commonly has a whole /64 to pick addresses from), as open
    registrations count callers (:func:`arena.host.registrations.client_key`).

    >>> stream_client("2001:db8::1"), stream_client("2001:db8::ffff:2")
    ('2001:db8::/64', '2001:db8::/64')
    >>> stream_client("10.0.0.1"), stream_client("::ffff:10.0.0.1")
    ('10.0.0.1', '10.0.0.1')
    """
    return client_key(address)


class _EventStream(StreamingResponse):
    """A stream that gives its slot back when it ends, however it ends (the end of the
    game, or the reader gone). A game's public events are a few tens of kB, which the
    sockets' buffers hold: a reader that never reads does not hold its stream past the
    game's end."""

    def __init__(self, content: AsyncIterator[bytes], release: Any, **kw: Any) -> None:
        super().__init__(content, **kw)
        self._release = release

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


def _game_status(host: Host, game_id: str) -> str | None:
    with host.Session() as s:
        return s.scalar(select(Game.status).where(Game.id == game_id))


def _visible_status(host: Host, request: Request, game_id: str) -> str | None:
    with host.Session() as s:
        g = _visible_game(s, game_id, auth.signed_in(request, s))
        return g.status if g is not None else None


@router.get("/games/{game_id}/events")
async def game_events(game_id: str, request: Request, host: HostDep) -> Response:
    """The game's public events as server-sent events (``event: moon``, data a JSON object
    of :func:`arena.protocol.convert.event_to_dict`), from the referee's watch stream: from the
    start, then live, then ``event: end``. Only the referee's public events go out: no
    tile is sent before it is played, and the widow and the discard never are.

    A client address holds at most :data:`STREAMS_PER_CLIENT` streams at once (more: 429),
    the host :data:`STREAMS_MAX` (more: 503); the database is read in a thread, never on
    the event loop that keeps the games' clocks."""
    slots = stream_slots(host)
    client = stream_client(request.client.host if request.client is not None else "")
    refused = slots.take(client)
    if refused is not None:
        raise HTTPException(refused[0], refused[1], headers={"Retry-After": "20"})
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            slots.give_back(client)

    try:
        status = await run_in_threadpool(_visible_status, host, request, game_id)
    except BaseException:
        release()
        raise
    if status is None:
        release()
        raise HTTPException(404, f"no game {game_id!r}")

    async def stream() -> AsyncIterator[bytes]:
        yield b"retry: 3000\n\n"
        events = None
        now: str | None = status
        for i in range(100):  # queued: wait for it to start here (up to ~20 s)
            events = _watch(host, game_id)
            if events is not None or now not in ("queued", "running"):
                break
            yield b": waiting\n\n"
            await asyncio.sleep(0.2)
            if i % 5 == 4:  # once a second: has it ended (cancelled, voided) meanwhile?
                now = await run_in_threadpool(_game_status, host, game_id)
        if events is not None:
            async for ev in events:
                if await request.is_disconnected():
                    return
                d = event_to_dict(ev)
                yield f"id: {d['seq']}\nevent: moon\ndata: {json.dumps(d)}\n\n".encode()
        yield b"event: end\ndata: {}\n\n"

    return _EventStream(stream(), release, media_type="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


# -- the API's own page -------------------------------------------------------------------------
def api_endpoints(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The API's endpoints from its OpenAPI ``schema``, for the ``/docs`` page: method,
    path, summary, description, parameters, body and answers (by status code)."""
    out = []
    for path, ops in sorted(schema.get("paths", {}).items()):
        for method, op in ops.items():
            params = [{"name": p.get("name", ""), "where": p.get("in", ""),
                       "required": bool(p.get("required")),
                       "description": p.get("description", "")}
                      for p in op.get("parameters", [])]
            body = ", ".join(op.get("requestBody", {}).get("content", {}))
            out.append({"method": method.upper(), "path": path,
                        "summary": op.get("summary", ""),
                        "description": op.get("description", ""), "params": params,
                        "body": body, "responses": ", ".join(sorted(op.get("responses", {})))})
    return out


@router.get("/docs", response_class=HTMLResponse)
def api_page(request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """The API, browsable: every endpoint of the OpenAPI schema, drawn on the server like
    every page (FastAPI's own /docs would load its script from a CDN, on this origin)."""
    return page(request, s, host, "api", endpoints=api_endpoints(request.app.openapi()))


# -- signing in, submitting -------------------------------------------------------------------
@router.get("/signin", response_class=HTMLResponse)
def signin_form(request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """The sign-in form (an API token)."""
    return page(request, s, host, "signin", error="")


def _refuse_csrf(request: Request, s: Session, host: Host) -> HTMLResponse:
    return page(request, s, host, "error", status=403, title="Form expired",
                message="This form was not sent from this site's own page (or it has "
                "expired): open the page again and send it from there.")


@router.post("/signin", response_class=HTMLResponse)
def signin(request: Request, host: HostDep, s: SessionDep,
           token: Annotated[str, Form()] = "", csrf: Annotated[str, Form()] = ""
           ) -> Response:
    """Sign in with an API token: a session cookie, then back to the leaderboard."""
    if not auth.csrf_ok(request, csrf):
        return _refuse_csrf(request, s, host)
    done = auth.sign_in(s, token)
    if done is None:
        return page(request, s, host, "signin", status=401,
                    error="That token is not known here: paste the token you got when "
                    "you registered (moon host register prints it).")
    response = RedirectResponse("/submit", status_code=303)
    auth.set_session(request, response, done[1])
    return response


@router.post("/signout")
def signout(request: Request, host: HostDep, s: SessionDep,
            csrf: Annotated[str, Form()] = "") -> Response:
    """End the session."""
    if not auth.csrf_ok(request, csrf):
        return _refuse_csrf(request, s, host)
    response = RedirectResponse("/", status_code=303)
    auth.set_session(request, response, None)
    return response


@router.get("/submit", response_class=HTMLResponse)
def submit_form(request: Request, host: HostDep, s: SessionDep) -> Response:
    """The submission form, and the signed-in participant's bots."""
    user = auth.signed_in(request, s)
    if user is None:
        return RedirectResponse("/signin", status_code=303)
    bots = s.scalars(select(Bot).where(Bot.owner_id == user.id).order_by(Bot.name)
                     .options(selectinload(Bot.versions))).all()
    return page(request, s, host, "submit", error="", bots=bots,
                limit_mb=host.settings.limits.max_archive_mb)


@router.post("/submit", response_class=HTMLResponse)
def submit(request: Request, host: HostDep, s: SessionDep,
           archive: Annotated[UploadFile, File()], csrf: Annotated[str, Form()] = ""
           ) -> Response:
    """Take a bot folder's archive through the API's own submission (the same checks),
    then show the version's progress."""
    if not auth.csrf_ok(request, csrf):
        return _refuse_csrf(request, s, host)
    user = auth.signed_in(request, s)
    if user is None:
        return RedirectResponse("/signin", status_code=303)
    try:
        v = api_submit(archive, user, host, s, Response())
    except HTTPException as e:
        bots = s.scalars(select(Bot).where(Bot.owner_id == user.id).order_by(Bot.name)
                         .options(selectinload(Bot.versions))).all()
        return page(request, s, host, "submit", status=e.status_code, error=str(e.detail),
                    bots=bots, limit_mb=host.settings.limits.max_archive_mb)
    return RedirectResponse(f"/versions/{v.id}", status_code=303)


__all__ = ["CSP", "router"]
