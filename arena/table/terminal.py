"""A person's seat in the terminal: the table drawn with rich at each decision (the hand,
the auction, the contract, the trick, the scores, the clock), the public events as lines
as they happen, the legal actions by number, and a prompt that takes a number or a name.

It scrolls (nothing is redrawn in place), so it works over SSH, in a terminal of 80
columns, and with its output in a file; colours only where the console has them.
"""

from __future__ import annotations

import select
import sys
import time

from moon_sdk.convert import ruleset_from_pb
from moon_sdk.rules import Action, Observation, Phase
from moon_sdk.rules.tiles import format_tiles, tile_name
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .choice import PHASE_VERB, Refused, choose, label
from .seat import LeftTable, TimedOut
from .words import Seats, bid_text, event_line, trumps_text

SLACK_S = 2.0
"""How long past the seat's time the prompt waits before it stops waiting (the referee
rules on the time; this only makes sure the prompt never outlives the turn)."""
QUIT_WORDS = ("q", "quit", "leave", "resign")
"""Answers that leave the game (a forfeit), after a confirmation."""


def clock_text(ms: int) -> str:
    """``4:05`` (minutes and seconds), ``1:02:03`` past an hour."""
    s = max(0, ms) // 1000
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class TerminalPerson:
    """A :class:`~arena.table.seat.Person` at a terminal: draws on ``console``, reads
    answers from standard input, a line at a time, until the turn's time is over (the end
    of input and Ctrl-C are the person leaving)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.seats: Seats | None = None
        self._deadline = float("inf")

    # -- what the seat is told -----------------------------------------------------------
    def welcome(self, welcome: bpb.Welcome) -> None:
        """Say who is where and how much time the seat has."""
        ruleset = ruleset_from_pb(welcome.ruleset)
        self.seats = Seats(welcome.seat, list(welcome.seat_names), ruleset)
        tc = welcome.time_control
        others = ", ".join(self.seats(s) for s in range(ruleset.players) if s != welcome.seat)
        self.console.print(escape(
            f"you are seat {welcome.seat} of {ruleset.players} against {others}; "
            f"first to {ruleset.target} wins"), highlight=False)
        self.console.print(escape(
            f"your clock: {clock_text(tc.decision_ms)} a decision, plus a "
            f"{clock_text(tc.bank_ms)} bank for the game; type q to leave (a forfeit)"),
            highlight=False)

    def event(self, event: pb.Event) -> None:
        """One line per public event; a rule above each new hand."""
        assert self.seats is not None
        line = event_line(event, self.seats)
        if line is None:
            return
        if event.WhichOneof("kind") == "hand_started":
            self.console.rule(escape(line))
        else:
            self.console.print(escape(line), highlight=False)

    def rejected(self, reason: str, retries_left: int) -> None:
        """The referee refused an action (choose() lets none through that it would)."""
        self.console.print(escape(f"refused: {reason} ({retries_left} retries left)"),
                           highlight=False)

    # -- a decision ----------------------------------------------------------------------
    def choose(self, obs: Observation, decision_ms: int, bank_ms: int) -> Action:
        """Draw the table, list the legal actions, ask until an answer picks one.

        Raises:
            LeftTable: end of input, Ctrl-C, or ``q`` confirmed.
            TimedOut: the turn's time (``decision_ms + bank_ms``) passed.
        """
        self._deadline = time.monotonic() + (decision_ms + bank_ms) / 1000 + SLACK_S
        self.console.print(self.table(obs, decision_ms, bank_ms))
        self.console.print(self.menu(obs))
        while True:
            text = self._ask(f"your move ({PHASE_VERB[obs.phase]}: a number or a name): ")
            if text.strip().lower() in QUIT_WORDS:
                sure = self._ask("leave the game? it counts as a forfeit [y/N]: ")
                if sure.strip().lower() in ("y", "yes"):
                    raise LeftTable("left with q")
                continue
            try:
                return choose(text, obs)
            except Refused as e:
                self.console.print(escape(f"not taken: {e}"), style="red", highlight=False)

    def _ask(self, prompt: str) -> str:
        """A line typed after ``prompt``.

        Raises:
            LeftTable: the end of input or Ctrl-C.
            TimedOut: the turn's time passed first.
        """
        self.console.print(Text(prompt, style="bold"), end="")
        self.console.file.flush()
        try:
            while True:
                left = self._deadline - time.monotonic()
                if left <= 0:
                    self.console.print()
                    self.console.print("your time for this move ran out", style="red")
                    raise TimedOut()
                ready, _, _ = select.select([sys.stdin], [], [], min(left, 1.0))
                if ready:
                    line = sys.stdin.readline()
                    if not line:
                        raise LeftTable("end of input")
                    return line.rstrip("\n")
        except KeyboardInterrupt:
            raise LeftTable("Ctrl-C") from None

    def table(self, obs: Observation, decision_ms: int, bank_ms: int) -> Panel:
        """The table as this seat sees it."""
        assert self.seats is not None
        seats = self.seats
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        scores = ", ".join(f"{seats.side(k)} {v}" for k, v in enumerate(obs.scores))
        grid.add_row("scores", escape(f"{scores} (to {obs.ruleset.target})"))
        auction = ", ".join(f"{seats(s)} {bid_text(v)}" for s, v in obs.bids) or "no bid yet"
        grid.add_row("auction", escape(auction))
        if obs.bidder >= 0 and obs.phase is not Phase.BIDDING:
            contract = f"{seats(obs.bidder)} {bid_text(obs.bid)}"
            if obs.trump >= 0:
                contract += f", {trumps_text(obs.trump)}"
            grid.add_row("contract", escape(contract))
        if obs.phase is Phase.PLAY:
            taken = ", ".join(f"{seats(s)} {n}" for s, n in enumerate(obs.tricks_taken))
            grid.add_row("tricks", escape(taken))
            if obs.tricks and not obs.trick:
                last = obs.tricks[-1]
                grid.add_row("last trick", escape(
                    "  ".join(f"{tile_name(t)} ({seats(s)})" for s, t in last.plays)
                    + f" → {seats(last.winner)}"))
            trick = "  ".join(f"{tile_name(t)} ({seats(s)})" for s, t in obs.trick)
            grid.add_row("trick", escape(trick or "you lead"))
        grid.add_row("your hand", Text(format_tiles(obs.hand), style="bold cyan"))
        if obs.widow:
            grid.add_row("widow", Text(f"{format_tiles(obs.widow)} (now in your hand)",
                                       style="cyan"))
        if obs.discard >= 0:
            grid.add_row("discarded", Text(tile_name(obs.discard), style="cyan"))
        grid.add_row("clock", f"{clock_text(decision_ms)} for this move, "
                              f"then {clock_text(bank_ms)} of bank")
        title = f"hand {obs.hand_number + 1} · you are seat {obs.seat}"
        return Panel(grid, title=escape(title), title_align="left", expand=False)

    def menu(self, obs: Observation) -> Group:
        """The legal actions, numbered from 1, several to a line."""
        items = [f"{k}) {label(a)}" for k, a in enumerate(obs.legal_actions, 1)]
        width = max(len(i) for i in items) + 2
        per_line = max(1, 76 // width)
        lines = ["".join(i.ljust(width) for i in items[j:j + per_line]).rstrip()
                 for j in range(0, len(items), per_line)]
        return Group(*(Text(line) for line in lines))
