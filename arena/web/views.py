"""What the pages show, from plain data: a version's win figures, the leaderboard's table
(sorted, with its interval bars), a game as a list's row, the API's endpoints from its
OpenAPI schema. Rows are read by attribute only (the host's API models fit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ..stats.intervals import Estimate
from . import charts

RESULTS = ("won", "lost", "target", "moon", "forfeit", "hand_limit")
"""The games list's result filter: ``won``/``lost`` (of the bot filtered on: its seat's
place is 1, or not) or a termination."""

SORTS = {"rank": "rank", "bot": "bot", "owner": "owner", "rating": "rating",
         "games": "games", "win": "win", "trend": "trend"}
TREND_GAMES = 10
"""The leaderboard's trend: the win % over a version's last this many games, against
its win % over all its games."""


class Record(NamedTuple):
    """A version's finished rated games, each counted once (a version in two seats of a
    game, in a competition with fewer bots than seats, played that game once, as
    ``Version.games`` counts it): ``played`` games, ``won`` of them (a seat of its
    placed first), and won/lost of its last :data:`TREND_GAMES` games, oldest first."""

    played: int
    won: int
    recent: tuple[bool, ...]


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


def leaderboard_table(rows: Sequence[Any], records: dict[int, Record], sort: str, desc: bool
                      ) -> tuple[list[dict[str, Any]], str]:
    """The leaderboard's table and the column it is sorted on (``rank`` for a ``sort``
    not in :data:`SORTS`): per row of ``rows`` (in rank order, each with ``version_id``,
    ``bot``, ``owner``, ``games``, ``rating``, ``rating_open``, ``rating_low``,
    ``rating_high``, ``conservative``), ``{"row", "bar"}`` and its :func:`win_figures`
    from ``records``; ``desc`` reverses the order, keeping rows without a value last."""
    table = [{"row": r, **win_figures(records[r.version_id])} for r in rows]
    key = SORTS.get(sort, "rank")
    if key != "rank":
        def value(t: dict[str, Any]) -> Any:
            r = t["row"]
            v = {"bot": r.bot.lower(), "owner": r.owner.lower(),
                 "rating": r.rating if r.rating is not None else r.conservative - 1e6,
                 "games": r.games, "win": t["win"], "trend": t["trend"]}[key]
            return (v is None, v if v is not None else 0)
        table.sort(key=value, reverse=desc)
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
    return table, key


def rating_parts(rating: float | None, low: float | None, high: float | None,
                 open_: bool = False) -> tuple[str, str]:
    """A rating as the terminal writes it (``moon ladder show``:
    :meth:`arena.stats.intervals.Estimate.text`), in two parts for a page: the figure and
    its interval. Whole numbers; an open rating is only its bound; no rating is a dash.

    >>> rating_parts(1540.2, 1490.1, 1590.3)
    ('1540', '± 50')
    >>> rating_parts(2022.9, 1609.5, None, open_=True), rating_parts(1500.0, None, None, True)
    (('≥ 1610', ''), ('n/a', ''))
    >>> rating_parts(1500.0, None, None), rating_parts(None, None, None)
    (('1500', '(n/a)'), ('–', ''))
    """
    if rating is None:
        return "–", ""
    e = Estimate(rating, low, high, determined=not open_)
    text = e.text()
    if not e.determined and not e.two_sided:
        return text, ""
    figure, _, interval = text.partition(" ")
    return figure, interval


def side_labels(seats: Sequence[Any]) -> list[str]:
    """The scoring sides of a game's seats (each with ``seat`` and ``bot``), as the replay
    labels them: each seat (``"1:random"``), or with 4 seats the partnerships
    (``"0:a & 2:c"``).

    >>> from types import SimpleNamespace as S
    >>> side_labels([S(seat=i, bot=b) for i, b in enumerate("abcd")])
    ['0:a & 2:c', '1:b & 3:d']
    """
    names = [f"{x.seat}:{x.bot}" for x in seats]
    if len(names) == 4:
        return [f"{names[0]} & {names[2]}", f"{names[1]} & {names[3]}"]
    return names


def game_row(g: Any, vids: set[int] | None = None) -> dict[str, Any]:
    """A game (with ``status`` and ``seats``, each with ``version_id`` and ``place``) for
    a list: ``{"game", "outcome"}``, ``outcome`` won/lost of the versions ``vids``."""
    outcome = None
    if vids is not None and g.status == "finished":
        places = [x.place for x in g.seats if x.version_id in vids]
        if places:
            outcome = "won" if places[0] == 1 else "lost"
    return {"game": g, "outcome": outcome}


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


__all__ = ["RESULTS", "SORTS", "TREND_GAMES", "Record", "api_endpoints", "game_row",
           "leaderboard_table", "rating_parts", "side_labels", "win_figures"]
