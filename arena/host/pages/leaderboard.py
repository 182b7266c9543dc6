"""The leaderboard, the front page (``/``): every version's rating, its games and win %
(:class:`ResultTally`, kept up to date by the games finished since the last view), the
competition's rules and time control, and the host's status."""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import deque

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from ...core.timecontrol import TimeControl
from ...web.views import TREND_GAMES, Record, leaderboard_table
from ..deps import HostDep, SessionDep
from ..models import Game, GameSeat
from ..routes.final import final_view
from ..routes.leaderboard import leaderboard as api_leaderboard
from ..service import Host
from .base import page

router = APIRouter(include_in_schema=False)


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


_TALLIES: weakref.WeakKeyDictionary[Host, tuple[int, ResultTally]] = \
    weakref.WeakKeyDictionary()
_TALLIES_LOCK = threading.Lock()


def host_tally(host: Host) -> ResultTally:
    """The host's :class:`ResultTally` (made at the first leaderboard view, and again
    after a game was voided by the organiser: ``host.ratings_epoch``)."""
    with _TALLIES_LOCK:
        kept = _TALLIES.get(host)
        if kept is None or kept[0] != host.ratings_epoch:
            kept = _TALLIES[host] = (host.ratings_epoch, ResultTally())
        return kept[1]


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
    """The leaderboard: place, bot, owner, version, rating with its 95% interval (as a
    bar), the head-to-head with the next one down, games, win %, trend; sortable by any
    column (``?sort=rating&desc=1``). While some version is not fitted yet, a line under
    the table says why it ranks last. Once the competition has ended, the final's
    standings come first."""
    rows = api_leaderboard(s, host)
    tally = host_tally(host)
    tally.advance(s)
    records = tally.records([r.version_id for r in rows])
    table, key = leaderboard_table(rows, records, sort, bool(desc))
    rules, clock = rules_text(host)
    final = final_view(s, host) if host.season.phase(s) == "ended" else None
    return page(request, s, host, "leaderboard", table=table, sort=key, desc=bool(desc),
                rules=rules, clock=clock, host_status=host.status(s, tally.games),
                trend_games=TREND_GAMES, unfitted=any(r.rating is None for r in rows),
                separated=any(not r.anchor for r in rows if r.rating is not None),
                beyond=any(r.gap_beyond for r in rows),
                placement=host.settings.matchmaking.placement_sets,
                final=final if final is not None and final.standings else None)


__all__ = ["ResultTally", "host_tally", "router", "rules_text"]
