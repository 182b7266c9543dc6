"""Readable text of game records (`moon play`, `moon replay show`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .text import clean


def seat_label(seats: list[dict[str, Any]], seat: int) -> str:
    """``"0:heuristic"``."""
    return f"{seat}:{seats[seat]['name']}"


def _e(x: object) -> str:
    """Text of a record, safe to print with rich (a record is a file: its strings are data,
    never markup, and their control characters are shown as escapes, :mod:`arena.text`)."""
    return escape(clean(x))


def side_labels(record: dict[str, Any]) -> list[str]:
    """Names of the scoring sides: each seat (3 players) or the two partnerships."""
    seats = record["seats"]
    if len(seats) == 4:
        return [f"{seat_label(seats, 0)} & {seat_label(seats, 2)}",
                f"{seat_label(seats, 1)} & {seat_label(seats, 3)}"]
    return [seat_label(seats, i) for i in range(len(seats))]


def _bid_text(b: int) -> str:
    return "-" if b == 0 else str(b)


def print_game(console: Console, record: dict[str, Any], plays: bool = False) -> None:
    """Print a record hand by hand: the auction, the contract, (with ``plays``) every
    trick, the tricks taken, made or set, and the scores; then the result."""
    seats = record["seats"]
    sides = side_labels(record)
    table = Table(title=_e(f"match {record['match_id']}  ({record.get('preset') or 'custom'}, "
                           f"seed {record['seed']})"), show_lines=plays)
    table.add_column("hand", justify="right")
    table.add_column("dealer")
    table.add_column("auction")
    table.add_column("contract")
    table.add_column("tricks")
    table.add_column("result")
    for s in sides:
        table.add_column(_e(s), justify="right")
    for h in record["hands"]:
        auction = " ".join(f"{b['seat']}:{_bid_text(b['bid'])}" for b in h["bids"])
        if h["bidder"] is None:
            contract, result = "—", "all passed: redeal" if h["finished"] else "unfinished"
        else:
            contract = f"{h['bidder']}:{h['bid']} trump {h['trump'] or '?'}"
            if plays and h.get("discard"):
                contract += f"\ndiscard {h['discard']}"
            result = ("made" if h["made"] else "set") if h["finished"] else "unfinished"
        tricks = " ".join(str(x) for x in (h["tricks_taken"] or []))
        scores = h["scores"] or [""] * len(sides)
        detail = ""
        if plays and h["tricks"]:
            detail = "\n" + "\n".join(
                " ".join(f"{p['seat']}:{p['tile']}" for p in t["plays"]) + f" → {t['winner']}"
                for t in h["tricks"])
        table.add_row(*(_e(x) for x in (h["number"], h["dealer"], auction, contract + detail,
                                        tricks, result, *scores)))
    console.print(table)
    res = record["result"]
    term = res["termination"]
    if res.get("winner") is not None:
        final = ", ".join(f"{s} {x}" for s, x in zip(sides, res["scores"], strict=False))
        console.print(f"[bold green]winner: {_e(sides[res['winner']])}[/] ({_e(term)}); "
                      f"final scores {_e(final)}")
    else:
        console.print(f"[bold yellow]no winner[/] ({_e(term)})")
    if res.get("forfeit"):
        f = res["forfeit"]
        console.print(f"[red]forfeit[/]: seat {_e(seat_label(seats, f['seat']))} — "
                      f"{_e(f['reason'])}: {_e(f['detail'])}")
    others = [f for f in record.get("faults", []) if not f["forfeit"]]
    for f in others:
        console.print(f"fault: seat {_e(seat_label(seats, f['seat']))} — {_e(f['reason'])}: "
                      f"{_e(f['detail'])}")
