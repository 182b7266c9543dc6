"""A person's seat in a browser: a page served on 127.0.0.1 for one game, the table drawn
with the replay player's board (the same dominoes, the same felt), the person's legal tiles
clickable, the others dimmed with the reason on hover, the auction and the trumps as
buttons, the clock counting down, keyboard play (the digits pick the numbered actions).

:class:`WebPerson` is the :class:`~arena.table.seat.Person`; :class:`TableServer` serves
its page and its state (``GET /state``, a long poll) and takes the person's answers
(``POST /act``). Everything served is built from what the seat was told (its turns and
the public events): the other seats' tiles are drawn face down, from their counts alone.
Every request carries the table's key (``k``), so another user of the machine cannot take
the seat.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from moon_sdk.convert import ruleset_from_pb, tile_from_pb, trump_from_pb
from moon_sdk.rules import Action, ActionKind, Observation, Phase, Ruleset, action_kind
from moon_sdk.rules.tiles import tile_name, tiles_of, trump_name
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from ..web.templating import static_text, templates
from .choice import PHASE_VERB, Refused, choose, label, why_not
from .seat import LeftTable, TimedOut
from .terminal import SLACK_S
from .words import Seats, bid_text, event_line, trumps_text

LOG_LINES = 40
"""How many of the hand's latest public events the page lists (a hand of 4 players has
about 40)."""
POLL_S = 20.0
"""The longest a ``GET /state`` waits for something new."""
MAX_BODY = 4096
"""The largest request body taken (an answer is a few bytes)."""


@dataclass
class _Table:
    """What the page shows, as the seat was told it: its last turn's observation, brought
    up to date by the public events since (the plays, the tricks, the scores)."""

    version: int = 0
    seats: Seats | None = None
    ruleset: Ruleset | None = None
    me: int = -1
    hand_number: int = 0
    dealer: int = -1
    phase: Phase = Phase.BIDDING
    hand: int = 0
    """The seat's tiles (a set), as its last turn showed them, less what it played since."""
    widow: int = 0
    discard: int = -1
    counts: list[int] = field(default_factory=list)
    """How many tiles each seat holds, from public facts alone."""
    bids: list[tuple[int, int]] = field(default_factory=list)
    bidder: int = -1
    bid: int = 0
    trump: int = -1
    trick: list[tuple[int, int]] = field(default_factory=list)
    last: tuple[list[tuple[int, int]], int] | None = None
    """The trick just won: its plays and its winner, until the next play."""
    taken: list[int] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    acting: int = -1
    obs: Observation | None = None
    """The open turn's observation (None while others act)."""
    turn: dict[str, Any] | None = None
    doing: dict[int, str] = field(default_factory=dict)
    """Each seat's last public action in this hand (``bid 5``, ``played 6-4``)."""
    log: list[str] = field(default_factory=list)
    refusal: str = ""
    over: dict[str, Any] | None = None

    def start_hand(self, number: int, dealer: int) -> None:
        assert self.ruleset is not None
        n = self.ruleset.players
        widow = 1 if self.ruleset.has_widow else 0
        self.hand_number, self.dealer, self.phase = number, dealer, Phase.BIDDING
        self.counts = [(self.ruleset.num_tiles - widow) // n] * n
        self.taken = [0] * n
        self.hand, self.widow, self.discard = 0, 0, -1
        self.bids, self.bidder, self.bid, self.trump = [], -1, 0, -1
        self.trick, self.last, self.doing = [], None, {}
        self.acting = (dealer + 1) % n

    def sync(self, obs: Observation) -> None:
        """The seat's turn: its observation is the whole truth of what it may know."""
        self.obs = obs
        self.hand_number, self.dealer, self.phase = obs.hand_number, obs.dealer, obs.phase
        self.hand, self.widow, self.discard = obs.hand, obs.widow, obs.discard
        self.bids, self.bidder, self.bid = list(obs.bids), obs.bidder, obs.bid
        self.trump, self.trick = obs.trump, list(obs.trick)
        self.taken, self.scores = list(obs.tricks_taken), list(obs.scores)
        self.acting = obs.current_player
        self.counts[obs.seat] = obs.hand.bit_count()


class WebPerson:
    """A person at a page: :meth:`choose` waits for the page's answer. ``gone_s``: the
    person has left once their page has not asked for the table's :meth:`state` for this
    many seconds on their move (a closed tab, or one never opened); None: they are there
    until their clock runs out."""

    def __init__(self, gone_s: float | None = None) -> None:
        self._t = _Table()
        self._cv = threading.Condition()
        self._answer: dict[str, Any] | None = None
        self.gone_s = gone_s
        self._seen = time.monotonic()
        """When the page last asked for the state (or the person was seated)."""
        self.closed = threading.Event()
        """Set when the person is done with the page (the ``done`` button after the game)."""
        self._sent_away = ""
        """Why the host ended the person's seat (:meth:`send_away`), or empty."""

    # -- what the seat is told -----------------------------------------------------------
    def welcome(self, welcome: bpb.Welcome) -> None:
        """Seat the person: their seat, the names."""
        with self._cv:
            t = self._t
            t.me = welcome.seat
            t.ruleset = ruleset_from_pb(welcome.ruleset)
            t.seats = Seats(welcome.seat, list(welcome.seat_names), t.ruleset)
            t.scores = [0] * t.ruleset.num_sides
            t.start_hand(0, 0)
            self._changed()

    def event(self, event: pb.Event) -> None:
        """A public event: the log, and what the seat did (drawn by its place)."""
        with self._cv:
            t = self._t
            assert t.seats is not None
            kind = event.WhichOneof("kind")
            line = event_line(event, t.seats)
            if kind == "hand_started":  # the log is of this hand
                t.log = []
            if line is not None:
                t.log = (t.log + [line])[-LOG_LINES:]
            assert t.ruleset is not None
            n = t.ruleset.players
            if kind == "hand_started":
                t.start_hand(event.hand_started.hand_number, event.hand_started.dealer)
            elif kind == "bid":
                b = event.bid
                t.bids.append((b.seat, b.value))
                t.doing[b.seat] = bid_text(b.value)
                if b.value > t.bid:
                    t.bidder, t.bid = b.seat, b.value
                t.acting = (b.seat + 1) % n
            elif kind == "widow_taken":
                t.counts[event.widow_taken.seat] += 1
                t.phase = Phase.DISCARD
            elif kind == "discarded":
                t.counts[event.discarded.seat] -= 1
            elif kind == "trump_named":
                t.trump = trump_from_pb(event.trump_named.trump)
                t.doing[event.trump_named.seat] = trumps_text(t.trump)
            elif kind == "played":
                seat, tile = event.played.seat, tile_from_pb(event.played.tile)
                t.phase = Phase.PLAY
                t.last = None
                t.trick.append((seat, tile))
                t.counts[seat] -= 1
                if seat == t.me:
                    t.hand &= ~(1 << tile)
                t.doing[seat] = f"played {tile_name(tile)}"
                t.acting = (seat + 1) % n
            elif kind == "trick_won":
                w = event.trick_won.seat
                t.last, t.trick = (t.trick, w), []
                t.taken[w] += 1
                t.acting = w
            elif kind == "hand_ended":
                t.scores = list(event.hand_ended.scores)
                t.acting = -1
            self._changed()

    def rejected(self, reason: str, retries_left: int) -> None:
        """The referee refused an action (choose() sends none it would)."""
        with self._cv:
            self._t.refusal = f"refused by the referee: {reason}"
            self._changed()

    def choose(self, obs: Observation, decision_ms: int, bank_ms: int) -> Action:
        """Show the turn, wait for the page's legal answer.

        Raises:
            LeftTable: the person left from the page.
            TimedOut: the turn's time passed.
        """
        deadline = time.monotonic() + (decision_ms + bank_ms) / 1000 + SLACK_S
        with self._cv:
            self._t.sync(obs)
            self._t.turn = {"decision_ms": decision_ms, "bank_ms": bank_ms,
                            "phase": PHASE_VERB[obs.phase]}
            self._t.refusal = ""
            self._changed()
            try:
                while True:
                    while self._answer is None:
                        if self._sent_away:
                            raise LeftTable(self._sent_away)
                        now = time.monotonic()
                        left = deadline - now
                        if left <= 0:
                            self._t.refusal = "your time for this move ran out"
                            raise TimedOut()
                        if self.gone_s is not None:
                            # no page asks: the game does not wait out a whole bank for it
                            away = now - self._seen
                            if away >= self.gone_s:
                                raise LeftTable(f"the page was gone for over "
                                                f"{self.gone_s:.0f} s")
                            left = min(left, self.gone_s - away)
                        self._cv.wait(left)
                    answer, self._answer = self._answer, None
                    if answer.get("leave"):
                        raise LeftTable("left from the page")
                    try:
                        action = _answer_action(answer, obs)
                    except Refused as e:
                        self._t.refusal = str(e)
                        self._changed()
                        continue
                    self._t.refusal = ""
                    return action
            finally:
                self._t.turn, self._t.obs = None, None
                self._changed()

    def finish(self, line: str, record_path: str, record_url: str = "") -> None:
        """The game is over: ``line`` says how; the record (``record_path`` names it; the
        page links ``record_url`` when given) and its replay are ready."""
        with self._cv:
            self._t.over = {"line": line, "record": record_path, "record_url": record_url}
            self._t.turn = None
            self._changed()

    def close(self) -> None:
        """The person is done with the page (its ``done`` button): :attr:`closed` is set,
        and the page's next state says so (it stops asking)."""
        with self._cv:
            self.closed.set()
            self._changed()

    def send_away(self, how: str) -> None:
        """End the seat from the host's side (it is stopping): an open decision ends with
        :class:`LeftTable` (``how``), so the seat's stream closes before the referee's
        server stops, and no later decision is waited for."""
        with self._cv:
            self._sent_away = how
            self._cv.notify_all()

    # -- the page's side -----------------------------------------------------------------
    def answer(self, answer: dict[str, Any]) -> None:
        """The page's answer (``{"action": N}``, ``{"text": "bid 5"}`` or ``{"leave":
        true}``), for the open decision."""
        with self._cv:
            self._answer = answer
            self._cv.notify_all()

    @property
    def version(self) -> int:
        """Counts the table's changes (a ``state`` newer than ``since`` is one past it)."""
        return self._t.version

    def state(self, since: int, wait_s: float) -> dict[str, Any]:
        """The table as JSON-ready data once its version is past ``since`` (or after
        ``wait_s`` seconds, as it is)."""
        with self._cv:
            self._seen = time.monotonic()
            self._cv.wait_for(lambda: self._t.version > since, timeout=wait_s)
            self._seen = time.monotonic()
            return self._render()

    def _changed(self) -> None:
        self._t.version += 1
        self._cv.notify_all()

    def _render(self) -> dict[str, Any]:
        t = self._t
        out: dict[str, Any] = {"version": t.version, "log": t.log, "refusal": t.refusal,
                               "over": t.over, "turn": None, "board": "", "status": "",
                               "closed": self.closed.is_set()}
        if t.seats is None:
            out["status"] = "waiting for the game to start"
            return out
        out["board"] = _board_html(t)
        out["scores"] = [{"side": t.seats.side(k), "score": v} for k, v in enumerate(t.scores)]
        out["target"] = t.ruleset.target if t.ruleset else 0
        obs = t.obs
        if t.turn is not None and obs is not None:
            out["turn"] = {**t.turn, "actions": [
                {"n": k, "action": a, "label": label(a), "kind": action_kind(a).name.lower()}
                for k, a in enumerate(obs.legal_actions, 1)]}
            out["status"] = f"your move: {t.turn['phase']}"
        elif t.over is None:
            out["status"] = "the others are playing"
        return out


def _answer_action(answer: dict[str, Any], obs: Observation) -> Action:
    """The action of a page's answer.

    Raises:
        Refused: not a legal action now (with why), or no answer at all.
    """
    a = answer.get("action")
    if isinstance(a, int) and not isinstance(a, bool):
        if a in obs.legal_actions:
            return a
        if 0 <= a < 72:
            raise Refused(why_not(a, obs))
    text = answer.get("text")
    if isinstance(text, str):
        return choose(text[:100], obs)
    raise Refused("click a tile or a button, or type its number")


def _board_html(t: _Table) -> str:
    """The board, as the replay player draws it, from this seat's chair (the person at the
    bottom): their tiles face up, clickable when legal, the others' face down."""
    assert t.seats is not None and t.ruleset is not None
    n = t.ruleset.players
    me = t.me
    obs = t.obs
    legal = list(obs.legal_actions) if obs is not None else []
    kind = action_kind(legal[0]) if legal else None
    trump = trump_name(t.trump) if t.trump >= 0 else None
    mine = []
    for tile in sorted(tiles_of(t.hand)):  # as the legal actions go: keys 1, 2... left to right
        a = tile if kind is ActionKind.PLAY else tile + 28 if kind is ActionKind.DISCARD \
            else None
        ok = a is not None and a in legal
        if ok or obs is None:
            why = "" if ok else "wait for your turn"
        else:
            why = why_not(a, obs) if a is not None else f"not now: you {PHASE_VERB[t.phase]}"
        mine.append({"tile": tile_name(tile), "action": a, "ok": ok, "why": why,
                     "n": legal.index(a) + 1 if ok and a is not None else None})
    seats = [{"seat": s, "pos": (s - me) % n, "name": t.seats(s), "count": t.counts[s],
              "dealer": s == t.dealer, "bidder": s == t.bidder and t.phase is not Phase.BIDDING,
              "acting": s == t.acting and t.over is None, "doing": t.doing.get(s, ""),
              "taken": t.taken[s] if s < len(t.taken) else 0}
             for s in range(n)]
    shown = t.trick if t.trick or t.last is None else t.last[0]
    trick = [{"pos": (s - me) % n, "tile": tile_name(x),
              "wins": t.last is not None and not t.trick and s == t.last[1]} for s, x in shown]
    note = ""
    if t.last is not None and not t.trick:
        note = f"trick to {t.seats(t.last[1])}"
    elif t.phase is Phase.BIDDING:
        note = "auction"
    contract = ""
    if t.bidder >= 0 and t.phase is not Phase.BIDDING:
        contract = f"{t.seats(t.bidder)} {bid_text(t.bid)}"
        if t.trump >= 0:
            contract += f", {trumps_text(t.trump)}"
    return templates().get_template("table/board.html").render(
        players=n, seats=seats, mine=mine, trump=trump, trick=trick, note=note,
        widow_left=t.ruleset.has_widow and t.phase is Phase.BIDDING, contract=contract,
        hand=t.hand_number + 1, widow=[tile_name(x) for x in tiles_of(t.widow)],
        discard=tile_name(t.discard) if t.discard >= 0 else None, me=me)


def render_page(key: str, base: str = "") -> str:
    """The table's page (HTML): its state, answers and replay are under ``base`` (``""``
    for ``moon play --web``, ``/tables/ID`` on a host), each request with ``key``."""
    return templates().get_template("table/page.html").render(key=key, base=base)


class TableServer:
    """The page of one table on ``127.0.0.1:port`` (0: any free port), on a thread.

    ``replay`` gives the finished game's replay page (HTML) once there is one."""

    def __init__(self, person: WebPerson, port: int = 0) -> None:
        self.person = person
        self.key = secrets.token_urlsafe(16)
        self.replay_html = ""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        name="moon-table-web", daemon=True)

    @property
    def url(self) -> str:
        """Where the person opens the table (with its key)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/?k={self.key}"

    def start(self) -> None:
        """Serve, on a thread of its own."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving."""
        self._httpd.shutdown()
        self._httpd.server_close()


_STATIC = {"base.css": "text/css", "replay.css": "text/css", "table.css": "text/css",
           "table.js": "text/javascript"}
_CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
        "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def _handler(server: TableServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Quiet: the terminal is the person's."""

        def _send(self, status: int, body: bytes, ctype: str, csp: bool = True) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            if csp:  # the replay page brings its own (inline style and script)
                self.send_header("Content-Security-Policy", _CSP)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, data: Any, status: int = 200) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def _error(self, status: HTTPStatus, line: str) -> None:
            self._json({"error": line}, status)

        def _keyed(self, query: dict[str, list[str]]) -> bool:
            given = (query.get("k") or [""])[0] or self.headers.get("X-Table-Key", "")
            if secrets.compare_digest(given, server.key):
                return True
            self._error(HTTPStatus.FORBIDDEN, "this table's key is missing or wrong: open "
                        "the address `moon play` printed, with its ?k=...")
            return False

        def do_GET(self) -> None:  # noqa: N802
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path.startswith("/static/") and url.path[8:] in _STATIC:
                name = url.path[8:]
                self._send(200, static_text(name).encode(), _STATIC[name])
                return
            if not self._keyed(query):
                return
            if url.path == "/":
                page = render_page(server.key)
                self._send(200, page.encode(), "text/html; charset=utf-8")
            elif url.path == "/state":
                try:
                    since = int((query.get("since") or ["0"])[0])
                except ValueError:
                    self._error(HTTPStatus.BAD_REQUEST, "since must be a whole number")
                    return
                self._json(server.person.state(since, POLL_S))
            elif url.path == "/replay" and server.replay_html:
                self._send(200, server.replay_html.encode(), "text/html; charset=utf-8",
                           csp=False)
            else:
                self._error(HTTPStatus.NOT_FOUND, f"no page {url.path}: the table is at /")

        def do_POST(self) -> None:  # noqa: N802
            url = urlsplit(self.path)
            if not self._keyed(parse_qs(url.query)):
                return
            size = int(self.headers.get("Content-Length") or 0)
            if size > MAX_BODY:
                self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "an answer is a few bytes")
                return
            try:
                body = json.loads(self.rfile.read(size) or b"{}")
            except ValueError:
                self._error(HTTPStatus.BAD_REQUEST, "send JSON: {\"action\": N}")
                return
            if not isinstance(body, dict):
                self._error(HTTPStatus.BAD_REQUEST, "send JSON: {\"action\": N}")
                return
            if url.path == "/act":
                server.person.answer(body)
                self._json({"ok": True})
            elif url.path == "/done":
                server.person.close()
                self._json({"ok": True})
            else:
                self._error(HTTPStatus.NOT_FOUND, f"nothing to post at {url.path}")

    return Handler
