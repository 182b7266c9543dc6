"""The host's tables (:mod:`arena.host.tables`): "play against this bot".

- ``GET /tables/new?version=ID&seat=S``: the form (the version, the person's seat ``S``,
  0 unless given, each a link, the opponents to choose);
- ``POST /tables``: open the table (CSRF-checked form: ``version``, ``seat``, one
  ``opponent`` per other seat in seat order), then 303 to its page; refused
  with the error page and its one line: 403, 404, 422, or 429 with ``Retry-After``;
- ``GET /tables/{id}?k=KEY``: the table's page, the very page of ``moon play --web``
  (:func:`arena.table.web.render_page`), under ``/tables/{id}``;
- ``GET /tables/{id}/state``, ``POST /tables/{id}/act``, ``POST /tables/{id}/done``: its
  long poll, the person's answers, closing it (JSON, as :class:`arena.table.web.TableServer`);
- ``GET /tables/{id}/replay``, ``GET /tables/{id}/record``: the finished game's replay and
  record (every bot's stderr left out).

Every request of a table carries its key (``k``, or the ``X-Table-Key`` header): without
it the answer is the same 404 as for a table that does not exist. A table a restart of the
host closed (:meth:`arena.host.tables.Tables.ended`) still answers its page and its long
poll with the key: one line of what became of the game and a new table's link.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ...table.web import MAX_BODY, render_page
from ...web import auth
from ..deps import DB_INT_MAX, HostDep, SessionDep
from ..registrations import client_key
from ..service import Host
from ..tables import (
    PERSON_SEAT,
    Ended,
    Table,
    TableRefused,
    other_seats,
    table_url,
    version_seat,
)
from .base import page
from .sessions import signed_in

router = APIRouter(include_in_schema=False)

TABLE_CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
             "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""The table page's policy (as ``moon play --web``'s): its own style and script only."""
POLL_S = 3.0
"""The longest a table's long poll waits here (``moon play``'s waits longer): under the
server's grace at a stop (5 s), so that no poll is cut off mid-answer."""
STATE_STEP_S = 0.2
"""How often a waiting long poll looks for a change (no thread is held while it waits)."""


def _client(request: Request) -> str:
    return client_key(request.client.host if request.client else None)


def _refused(request: Request, host: Host, e: TableRefused) -> Response:
    with host.WebSession() as s:
        response = page(request, s, host, "error", status=e.status, title="No table",
                        message=str(e))
    if e.retry_s is not None:
        response.headers["Retry-After"] = str(e.retry_s)
    return response


@router.get("/tables/new", response_class=HTMLResponse)
def new_table(request: Request, host: HostDep, s: SessionDep,
              version: Annotated[int, Query(ge=1, le=DB_INT_MAX)],
              seat: Annotated[int, Query(ge=0, le=DB_INT_MAX)] = PERSON_SEAT) -> Response:
    """The form that opens a table against ``version`` with the person in ``seat``:
    choose the seat (links to this form), then the opponents."""
    user = signed_in(request, s)
    try:
        host.tables.check(user, _client(request))
        host.tables.check_seat(seat)
        v = host.tables.version(s, version)
    except TableRefused as e:
        return _refused(request, host, e)
    players = host.ruleset.players
    st = host.settings.tables
    return page(request, s, host, "table_new", version=v, seat=seat,
                bot_seat=version_seat(seat), seats=other_seats(seat, players),
                choices=host.tables.choices(s), players=players,
                decision_s=st.decision_ms // 1000, bank_min=st.bank_ms // 60_000)


@router.post("/tables")
async def open_table(request: Request, host: HostDep,
                     version: Annotated[int, Form(ge=1, le=DB_INT_MAX)],
                     opponent: Annotated[list[str] | None, Form()] = None,
                     seat: Annotated[int, Form(ge=0, le=DB_INT_MAX)] = PERSON_SEAT,
                     csrf: Annotated[str, Form()] = "") -> Response:
    """Open a table (``[tables]``'s limits) with the person in ``seat``, then its page."""
    if not auth.csrf_ok(request, csrf):
        return await run_in_threadpool(_refused, request, host, TableRefused(
            403, "this form was not sent from this site's own page (or it has expired): "
            "open the page again and send it from there"))

    def open_it() -> tuple[Table, Any]:
        with host.WebSession() as s:
            user = signed_in(request, s)
        return host.tables.open(user, _client(request), version, list(opponent or []),
                                seat)

    try:
        t, req = await run_in_threadpool(open_it)
    except TableRefused as e:
        return await run_in_threadpool(_refused, request, host, e)
    host.tables.start(t, req)
    return RedirectResponse(table_url(t), status_code=303)


def _key(request: Request) -> str:
    return request.query_params.get("k") or request.headers.get("X-Table-Key", "")


def _table(request: Request, host: Host, table_id: str) -> Table | None:
    return host.tables.get(table_id, _key(request))


def _ended(request: Request, host: Host, table_id: str) -> Ended | None:
    """The table a restart closed, if the request has its key (reads the database)."""
    with host.WebSession() as s:
        return host.tables.ended(s, table_id, _key(request))


def _ended_state(e: Ended) -> dict[str, Any]:
    """The long poll's answer for a table a restart closed: over, with the line and the
    new table's link, and closed (the page stops asking)."""
    return {"version": 1, "log": [], "refusal": "", "turn": None, "board": "",
            "status": "game over", "closed": True,
            "over": {"line": e.line, "record": "", "record_url": "", "new_table": e.new_url}}


def _gone(table_id: str) -> JSONResponse:
    return JSONResponse({"error": f"no table {table_id[:80]!r} with this key: open the "
                         "address you were sent to, with its ?k=..."}, 404)


def _private(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"  # the address holds the key
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@router.get("/tables/{table_id}", response_class=HTMLResponse)
def table_page(table_id: str, request: Request, host: HostDep) -> Response:
    """The table's page (``moon play --web``'s)."""
    t = _table(request, host, table_id)
    if t is None:
        e = _ended(request, host, table_id)
        if e is None:
            return _private(_gone(table_id))
        with host.WebSession() as s:
            return _private(page(request, s, host, "table_ended", line=e.line,
                                 new_url=e.new_url))
    response = HTMLResponse(render_page(t.key, f"/tables/{t.id}"))
    response.headers["Content-Security-Policy"] = TABLE_CSP
    return _private(response)


@router.get("/tables/{table_id}/state")
async def table_state(table_id: str, request: Request, host: HostDep,
                      since: Annotated[int, Query(ge=0, le=DB_INT_MAX)] = 0) -> Response:
    """The table as the seat was told it, once it changed past ``since`` (a long poll of
    at most :data:`POLL_S` seconds)."""
    t = _table(request, host, table_id)
    if t is None:
        e = await run_in_threadpool(_ended, request, host, table_id)
        return _private(_gone(table_id) if e is None else JSONResponse(_ended_state(e)))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + POLL_S
    while t.person.version <= since and loop.time() < deadline:
        if await request.is_disconnected():
            break
        await asyncio.sleep(STATE_STEP_S)
    return _private(JSONResponse(t.person.state(since, 0.0)))


async def _body(request: Request) -> dict[str, Any] | JSONResponse:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        return JSONResponse({"error": "an answer is a few bytes"}, 413)
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return JSONResponse({"error": "send JSON: {\"action\": N}"}, 400)
    return body


@router.post("/tables/{table_id}/act")
async def table_act(table_id: str, request: Request, host: HostDep) -> Response:
    """The person's answer (``{"action": N}``, ``{"text": "bid 5"}``, ``{"leave": true}``)."""
    t = _table(request, host, table_id)
    if t is None:
        return _private(_gone(table_id))
    body = await _body(request)
    if isinstance(body, JSONResponse):
        return _private(body)
    t.person.answer(body)
    return _private(JSONResponse({"ok": True}))


@router.post("/tables/{table_id}/done")
def table_done(table_id: str, request: Request, host: HostDep) -> Response:
    """The person is done with the finished table."""
    t = _table(request, host, table_id)
    if t is None:
        return _private(_gone(table_id))
    if t.ended_at is not None:
        t.person.close()
    return _private(JSONResponse({"ok": True}))


@router.get("/tables/{table_id}/replay", response_class=HTMLResponse)
def table_replay(table_id: str, request: Request, host: HostDep) -> Response:
    """The finished game's replay (its own page, as ``moon replay html``'s)."""
    t = _table(request, host, table_id)
    if t is None or not t.replay_html:
        return _private(_gone(table_id) if t is None else JSONResponse(
            {"error": "the game is not over yet: its replay comes at the end"}, 409))
    return _private(HTMLResponse(t.replay_html))


@router.get("/tables/{table_id}/record")
def table_record(table_id: str, request: Request, host: HostDep) -> Response:
    """The finished game's record (every bot's stderr left out)."""
    t = _table(request, host, table_id)
    if t is None or t.record is None:
        return _private(_gone(table_id) if t is None else JSONResponse(
            {"error": "the game is not over yet: its record comes at the end"}, 409))
    response = JSONResponse(t.record)
    response.headers["Content-Disposition"] = f'attachment; filename="{t.id}.json"'
    return _private(response)


__all__ = ["router"]
