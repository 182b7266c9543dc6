"""People at the host's tables: "play against this bot" (``[tables]``, docs/table.md, "On a
competition host").

:class:`Tables` opens a table for a visitor (:meth:`Tables.open`): one game, the person in
the seat they chose (seat 0 unless they choose another: a
:class:`arena.table.seat.HumanSeat` played through the page of :mod:`arena.table.web`, a
client of the referee like a bot), the chosen version in seat 1 (seat 0 when the person
takes seat 1: :func:`version_seat`) and the chosen opponents (active versions, the
reference bots) in the others, in order. The game is
a ``table`` game: played by the host's own executor and sandbox like any other, recorded
by its recorder (``running``, then ``finished`` with its record), never rated and never
part of a duplicate set.

What keeps the rated games' pace: an open table takes one of the games' slots
(:class:`arena.host.executor.GameSlots`) while it plays, and at most ``max_open`` tables
are open at once (below ``[matchmaking] concurrency``: the settings check it), so rated
games always keep ``concurrency - max_open`` slots. A client address opens at most
``per_visitor_per_hour`` tables in any hour. Both refusals are :class:`TableRefused`
(429 with when to try again).

The tables live in the host's memory: a restart ends them. Their games, ``running`` in
the database, are voided at the next start (:data:`CUT_BY_RESTART`, never rated, never
played again: the person is not there to play it), and the table's address still answers
after the restart (its key is :func:`table_key` of the game's id, a secret kept in the
database): the page says in one line that the game was cut off and links a new table
(:meth:`Tables.ended`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import logging
import math
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from moon_sdk.rules import Ruleset
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload, sessionmaker

from ..bots.manifest import BotSpec
from ..core.timecontrol import TimeControl
from ..executor.game import MANUAL
from ..table import HUMAN
from ..table.seat import HumanSeat, LeftTable, sit
from ..table.web import WebPerson
from .builds import VersionSpecs
from .executor import GameRequest, GameSlots, InfrastructureError
from .matchmaking import side
from .models import Bot, Game, GameSeat, Meta, Participant, Version, utcnow
from .recorder import Recorder
from .registrations import RegistrationWindow, minutes
from .settings import Tables as TablesSettings
from .writer import Writer

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits

log = logging.getLogger("arena.host")

KIND = "table"
"""The ``Game.kind`` of a game at a table (never rated)."""
LINGER_S = 900.0
"""How long a finished table stays up for its end, record and replay (unless closed)."""
FULL_RETRY_S = 60
"""The Retry-After of a refusal because every table is taken: a table's game lasts
minutes, so a minute is the soonest a new try makes sense."""
NOT_PLAYED = ("the game could not be played, through the host's failure (never yours): "
              "it is not counted; open a new table to play again")
"""What the page says of a table's game the host could not play (the log says why)."""
GONE_S = 180.0
"""A person whose page has not asked for the table's state for this long on their move
has left (and forfeits, as a disconnect): a tab never opened or closed frees its table
and its slot in minutes, not after the whole clock (``decision_ms`` + ``bank_ms``, 17
minutes by default). The page asks every few seconds; a background tab's timers may be
slowed to once a minute, hence three."""
CUT_BY_RESTART = ("the host restarted during the game: a table's game ends there (its "
                  "person's seat and its bots are gone), not counted and never rated")
"""The void reason of a table's game cut off by a restart of the host (voided at the next
start: :meth:`arena.host.service.Host.recover`)."""
CUT_LINE = ("The host restarted during your game, so it ended there: it is not counted "
            "and rates no one.")
"""What a table's page says after a restart cut its game off (with a new table's link)."""
SECRET_KEY = "table_secret"
"""The :class:`arena.host.models.Meta` key of the secret tables' keys are made from."""
PERSON_SEAT = 0
"""The person's seat unless they choose another; the chosen version's is
:func:`version_seat`, the opponents' the others."""


def version_seat(person: int) -> int:
    """The seat of the version a table is opened against when the person sits in seat
    ``person``: seat 1, or seat 0 when the person takes seat 1."""
    return 0 if person == 1 else 1


def other_seats(person: int, players: int) -> list[int]:
    """The seats of the chosen opponents, in order (every seat but the person's and the
    version's): ``[2]`` for a person in seat 0 of 3 players."""
    return [k for k in range(players) if k not in (person, version_seat(person))]


def table_key(secret: bytes, table_id: str) -> str:
    """The key of table ``table_id`` (the secret of its address): 22 URL-safe characters
    (128 bits) of HMAC-SHA256 keyed by the host's ``secret``, so that the host can tell
    the table's person after a restart, when the table itself is gone."""
    mac = hmac.new(secret, f"table:{table_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode()[:22]


@dataclass(frozen=True)
class Ended:
    """A table that a restart of the host closed: what its page says (``line``) and where
    a new one against the same version, from the same seat, is opened (``new_url``)."""

    id: str
    line: str
    new_url: str


class TableRefused(Exception):
    """A table that cannot be opened: ``status`` (403, 404, 422, 429, 503), one line
    (``str()``), and for a 429 ``retry_s`` (seconds until a new try may succeed)."""

    def __init__(self, status: int, line: str, retry_s: int | None = None) -> None:
        super().__init__(line)
        self.status = status
        self.retry_s = retry_s


@dataclass
class Table:
    """One open (or just finished) table."""

    id: str
    """The game's id (``table-...``)."""
    key: str
    """The secret of the table's address: whoever has it plays the seat."""
    person: WebPerson
    seat: HumanSeat
    names: list[str]
    """The seats' names, seat 0 first (the person's ``human``)."""
    client: str
    version_id: int = 0
    """The version the table was opened against (its "play again")."""
    task: asyncio.Task[None] | None = None
    ended_at: float | None = None
    """``time.monotonic()`` at the game's end (None while it plays)."""
    replay_html: str = ""
    record: dict[str, object] | None = None
    """The finished game's record, every bot's stderr left out."""


class Tables:
    """The host's tables (module docstring): ``settings`` (``[tables]``), the games'
    ``slots``, the ``recorder`` and ``writer`` that record their games, and what a game of
    the competition is (``ruleset``, ``preset``, ``tc``, ``docker_limits``); ``specs``
    makes a version's bot, ``references`` are the host's own bots. ``clock`` is
    ``time.monotonic`` but in tests."""

    def __init__(self, settings: TablesSettings, session: sessionmaker[Session],
                 writer: Writer, recorder: Recorder, slots: GameSlots, specs: VersionSpecs,
                 references: list[BotSpec], ruleset: Ruleset, preset: str, tc: TimeControl,
                 docker_limits: DockerLimits | None, folder: Path,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.Session = session
        self.writer = writer
        self.recorder = recorder
        self.slots = slots
        self.specs = specs
        self.references = {r.name: r for r in references}
        self.ruleset = ruleset
        self.preset = preset
        self.tc = tc
        self.docker_limits = docker_limits
        self.folder = folder
        self.clock = clock
        self.window = RegistrationWindow(settings.per_visitor_per_hour, clock)
        """Tables opened per client address over the last hour."""
        self.tables: dict[str, Table] = {}
        self._lock = threading.RLock()  # open() holds it across check()

    @property
    def on(self) -> bool:
        """Whether visitors may sit at tables (``[tables] enabled``)."""
        return self.settings.enabled

    def playing(self) -> set[str]:
        """The ids of the tables' games being played now."""
        with self._lock:
            return {t.id for t in self.tables.values() if t.ended_at is None}

    def get(self, table_id: str, key: str) -> Table | None:
        """The table ``table_id`` if ``key`` is its key (compared in constant time)."""
        self._forget_old()
        t = self.tables.get(table_id)
        if t is None or not secrets.compare_digest(key.encode(), t.key.encode()):
            return None
        return t

    def _secret(self, s: Session, make: bool = False) -> bytes | None:
        """The secret of the tables' keys (made if ``make``, on the writer: else None
        until the first table)."""
        row = s.get(Meta, SECRET_KEY)
        if row is None:
            if not make:
                return None
            row = Meta(key=SECRET_KEY, value=secrets.token_hex(32))
            s.add(row)
        return bytes.fromhex(str(row.value))

    def ended(self, s: Session, table_id: str, key: str) -> Ended | None:
        """The table ``table_id`` whose game a restart of the host cut off
        (:data:`CUT_BY_RESTART`), if ``key`` is its key (read in session ``s``); None
        for any other (an open table is :meth:`get`'s; one finished and forgotten is
        gone)."""
        if not table_id.startswith(f"{KIND}-") or len(table_id) > 64:
            return None
        secret = self._secret(s)
        if secret is None or not secrets.compare_digest(
                key.encode(), table_key(secret, table_id).encode()):
            return None
        g = s.scalar(select(Game).where(Game.id == table_id, Game.kind == KIND)
                     .options(selectinload(Game.seats)))
        if g is None or g.status != "voided" or g.void_reason != CUT_BY_RESTART:
            return None
        person = next((x.seat for x in g.seats if x.reference == HUMAN), PERSON_SEAT)
        version = next((x.version_id for x in g.seats
                        if x.seat == version_seat(person)), None)
        return Ended(table_id, CUT_LINE, f"/tables/new?version={version}&seat={person}")

    def _forget_old(self) -> None:
        now = self.clock()
        with self._lock:
            for tid, t in list(self.tables.items()):
                if t.ended_at is not None and (t.person.closed.is_set()
                                               or now - t.ended_at > LINGER_S):
                    del self.tables[tid]

    # -- opening a table ---------------------------------------------------------------
    def choices(self, s: Session) -> list[tuple[str, str]]:
        """The opponents a visitor may choose: ``(value, label)``, every active version's
        bot (``bot:NAME``) then every reference bot (``ref:NAME``)."""
        bots = s.scalars(select(Bot).join(Version, Version.id == Bot.active_version_id)
                         .join(Participant, Participant.id == Bot.owner_id)
                         .where(Version.status == "active", Participant.disabled.is_(False))
                         .order_by(Bot.name)).all()
        return ([(f"bot:{b.name}", b.name) for b in bots]
                + [(f"ref:{n}", f"{n} (reference bot)") for n in sorted(self.references)])

    def check(self, caller: Participant | None, client: str) -> None:
        """Whether ``caller`` (None: not signed in) from ``client`` (an address's key) may
        open a table now.

        Raises:
            TableRefused: 404 tables are off; 403 not signed in where only participants
                sit; 429 every table is taken or the client's hour is full.
        """
        st = self.settings
        if not st.enabled:
            raise TableRefused(404, "this competition has no tables: its organiser has not "
                               "opened them ([tables] enabled)")
        if st.who == "participants" and caller is None:
            raise TableRefused(403, "only participants may sit at this competition's "
                               "tables: sign in first (with your API token)")
        organiser = caller is not None and caller.is_admin
        if not organiser:
            wait = self.window.wait_s(client)
            if wait > 0:
                raise TableRefused(
                    429, f"you opened {self.window.count(client)} tables in the last hour, "
                    f"the most this competition allows ([tables] per_visitor_per_hour = "
                    f"{st.per_visitor_per_hour}): try again in {minutes(wait)}",
                    math.ceil(wait))
        if len(self.playing()) >= st.max_open:
            raise TableRefused(
                429, f"every table is taken ({st.max_open} at once, [tables] max_open, so "
                "that rated games keep their pace): try again in a minute", FULL_RETRY_S)

    @staticmethod
    def version(s: Session, version_id: int) -> Version:
        """The version a table is opened against (its bot loaded).

        Raises:
            TableRefused: 404 it is not active, or its participant is disabled (whose
                versions play no more, even one that turned active since).
        """
        v = s.scalar(select(Version).where(Version.id == version_id)
                     .options(selectinload(Version.bot).selectinload(Bot.owner)))
        if v is None or v.status != "active" or v.bot.owner.disabled:
            raise TableRefused(404, f"version {version_id} is not an active version: "
                               "choose a bot on the leaderboard")
        return v

    def check_seat(self, seat: int) -> None:
        """Whether a person may sit in ``seat``.

        Raises:
            TableRefused: 422 it is not a seat of the competition's games.
        """
        players = self.ruleset.players
        if not 0 <= seat < players:
            raise TableRefused(422, f"seat {seat} is not a seat of this competition's "
                               f"games: choose one of 0 to {players - 1}")

    def seat_bots(self, s: Session, version_id: int, opponents: list[str],
                  seat: int = PERSON_SEAT) -> tuple[dict[int, BotSpec], list[GameSeat]]:
        """The bots of the seats but the person's ``seat`` (the version in
        :func:`version_seat`, ``opponents`` in :func:`other_seats`), by seat, and every
        seat's row, in seat order.

        Raises:
            TableRefused: 422 not a seat; 404 the version is not active; 422 the wrong
                number of opponents, or one that is neither an active bot nor a
                reference bot.
        """
        self.check_seat(seat)
        players = self.ruleset.players
        v = self.version(s, version_id)
        if len(opponents) != players - 2:
            raise TableRefused(422, f"choose {players - 2} opponent(s) for {players} "
                               f"players (you, {v.bot.name}, and the others), not "
                               f"{len(opponents)}")
        mine = version_seat(seat)
        specs = {mine: self.specs(v, v.bot.name)}
        rows = [GameSeat(seat=seat, version_id=None, reference=HUMAN,
                         side=side(seat, players)),
                GameSeat(seat=mine, version_id=v.id, side=side(mine, players))]
        for k, choice in zip(other_seats(seat, players), opponents, strict=True):
            what, _, name = choice.partition(":")
            if what == "ref" and name in self.references:
                specs[k] = self.references[name]
                rows.append(GameSeat(seat=k, version_id=None, reference=name,
                                     side=side(k, players)))
                continue
            b = s.scalar(select(Bot).where(Bot.name == name)) if what == "bot" else None
            av = s.get(Version, b.active_version_id) if b and b.active_version_id else None
            if b is None or av is None or av.status != "active" or b.owner.disabled:
                raise TableRefused(422, f"opponent {choice[:80]!r} is neither an active "
                                   "bot (bot:NAME) nor a reference bot (ref:NAME)")
            specs[k] = self.specs(av, b.name)
            rows.append(GameSeat(seat=k, version_id=av.id, side=side(k, players)))
        return specs, sorted(rows, key=lambda r: r.seat)

    def open(self, caller: Participant | None, client: str, version_id: int,
             opponents: list[str], seat: int = PERSON_SEAT) -> tuple[Table, GameRequest]:
        """Open a table with the person in ``seat`` (the checks of :meth:`check` and
        :meth:`seat_bots`) and write its game ``running``; :meth:`start` then plays it.
        Runs in a route's thread.

        Raises:
            TableRefused: see :meth:`check` and :meth:`seat_bots`; 503 the host's
                executor cannot seat a person (a cluster's).
        """
        ex = self.slots.executor
        if ex is not None and not getattr(ex, "seats_people", False):
            raise TableRefused(503, "this host plays its games on a cluster, whose workers "
                               "cannot seat a person: tables need the local executor")
        with self._lock:  # of two opened at once, the second sees the first
            self.check(caller, client)
            # on the host's one writer, in turn with the games' results and claims
            table_id, key, seed, bots = self.writer.write_now(self._add_game, version_id,
                                                              opponents, seat)
            human = BotSpec(name=HUMAN, folder=self.folder, run="", runner=MANUAL)
            specs = tuple(human if k == seat else bots[k]
                          for k in range(self.ruleset.players))
            person, hseat = WebPerson(gone_s=GONE_S), HumanSeat()
            t = Table(table_id, key, person, hseat,
                      [b.name for b in specs], client, version_id=version_id)
            self.tables[table_id] = t
            if not (caller is not None and caller.is_admin):
                self.window.add(client)
        req = GameRequest(table_id, specs, self.ruleset, self.preset, seed,
                          self.tc, self.docker_limits,
                          seat_clocks={seat: (self.settings.decision_ms,
                                              self.settings.bank_ms)},
                          people={seat: hseat},
                          on_start=lambda address, tokens: self._sit(t, address,
                                                                     tokens[seat]))
        return t, req

    def _add_game(self, version_id: int, opponents: list[str], seat: int
                  ) -> tuple[str, str, int, dict[int, BotSpec]]:
        """Write a new table's game ``running`` with the person in ``seat``: its id, its
        key, its seed, the bots of the other seats by seat.

        Raises:
            TableRefused: see :meth:`seat_bots` (nothing is written).
        """
        with self.Session.begin() as s:
            bots, rows = self.seat_bots(s, version_id, opponents, seat)
            table_id = f"{KIND}-{secrets.token_hex(6)}"
            g = Game(id=table_id, kind=KIND, seed=secrets.randbits(62), status="running",
                     started_at=utcnow())
            g.seats = rows
            s.add(g)
            secret = self._secret(s, make=True)
            assert secret is not None
            return table_id, table_key(secret, table_id), g.seed, bots

    def start(self, t: Table, req: GameRequest) -> None:
        """Play table ``t``'s game (:meth:`open`'s request) in a task of the running
        event loop (the host's)."""
        t.task = asyncio.create_task(self._play(t, req), name=f"moon-{t.id}")

    def tasks(self) -> list[asyncio.Task[None]]:
        """The tasks of the tables still playing (the host cancels them when it stops:
        their games stay ``running``, voided at the next start)."""
        with self._lock:
            return [t.task for t in self.tables.values()
                    if t.task is not None and not t.task.done()]

    def _sit(self, t: Table, address: str, token: str) -> None:
        """The person's seat joins (on a thread of its own: :func:`sit` blocks)."""
        def run() -> None:
            try:
                sit(t.person, address, token)  # the page's end comes with the record
            except LeftTable as e:
                t.seat.left(str(e))
            except (ConnectionError, OSError, grpc.RpcError, grpc.FutureTimeoutError) as e:
                t.seat.left(f"the seat's connection failed: {type(e).__name__}")
            except Exception as e:  # one line in the log, never a thread's traceback
                log.error("table %s: the person's seat failed: %s: %s", t.id,
                          type(e).__name__, e)
                t.seat.left("the seat failed")

        threading.Thread(target=run, name=f"moon-{t.id}", daemon=True).start()

    async def _play(self, t: Table, req: GameRequest) -> None:
        """Take a slot (waiting for one), play the game, record it (never rated), and
        give the page its end, record and replay."""
        try:
            async with self.slots:
                fg = await self.slots.play(req)
            await self.recorder.record(fg)
            # reading the record and drawing its replay: off the loop of the games' clocks
            await asyncio.to_thread(self._finish, t, fg.record_path)
        except InfrastructureError as e:
            log.warning("table %s voided: %s", t.id, e)
            t.seat.left("the game could not be played")
            await self.recorder.void_game(t.id, str(e))
            t.person.finish(NOT_PLAYED, "")
        except asyncio.CancelledError:
            t.seat.left("the host stopped")
            # a person thinking keeps their stream open: ended now, before the executor
            # stops the referee's server, or gRPC cancels it and logs that to the host's
            # stderr
            t.person.send_away("the host stopped")
            raise
        except Exception as e:
            log.error("table %s: the host failed: %s: %s", t.id, type(e).__name__, e)
            t.seat.left("the host failed")
            await self.recorder.void_game(t.id, "the host failed")
            t.person.finish(NOT_PLAYED, "")
        finally:
            t.ended_at = self.clock()

    def _finish(self, t: Table, record_path: str | None) -> None:
        import json

        from ..records.record import GameRecord
        from ..table.words import record_line
        from ..web.replay import render_html

        if not record_path:
            t.person.finish("the game is over (its record was not written)", "")
            return
        data = json.loads(Path(record_path).read_text())
        data["logs"] = {}  # the bots' stderr is their owners' alone
        t.record = data
        record = GameRecord.from_dict(data, record_path)
        t.replay_html = render_html(record)
        t.person.finish(record_line(record), f"game {t.id}",
                        record_url=f"/tables/{t.id}/record?k={t.key}")


def table_url(t: Table) -> str:
    """Where the person opens their table (with its key)."""
    return f"/tables/{t.id}?k={t.key}"


__all__ = ["CUT_BY_RESTART", "CUT_LINE", "GONE_S", "KIND", "LINGER_S", "PERSON_SEAT",
           "Ended", "Table", "TableRefused", "Tables", "other_seats",
           "table_key", "table_url", "version_seat"]
