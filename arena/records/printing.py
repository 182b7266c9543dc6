"""Readable text of game records (`moon play`, `moon replay show`)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..core.text import clean
from .record import GameRecord


def _e(x: object) -> str:
    """Text of a record, safe to print with rich (a record is a file: its strings are data,
    never markup, and their control characters are shown as escapes, :mod:`arena.core.text`)."""
    return escape(clean(x))


def _bid_text(b: int) -> str:
    return "-" if b == 0 else str(b)


def legend(seats: int, sides: int, plays: bool = False) -> list[str]:
    """The lines under :func:`print_game`'s table that say what its columns hold, in the
    field's terms (docs/rules.md: bid, pass, shoot the moon, trump, trick, made or set), each
    short enough for 80 columns: ``seats`` players, ``sides`` score columns (2: the
    partnerships of 4-player Moon), ``plays``: the tricks are listed too."""
    score = ("0 & 2, 1 & 3: team scores so far" if sides == 2 and seats == 4
             else f"{' '.join(str(k) for k in range(sides))}: scores so far")
    lines = ["auction: seat:bid (- pass, 21 shoot the moon) · contract: bidder:bid trump",
             f"tricks: by seat · result: bid made or set · {score}"]
    if plays:
        lines.append("each trick: seat:tile in the order played → the seat that won it")
    return lines


def print_game(console: Console, record: GameRecord, plays: bool = False,
               forfeit: bool = True) -> None:
    """Print a record hand by hand (counted from 1, as the replay page does; the record's
    ``number`` is from 0): the auction, the contract, (with ``plays``) every
    trick, the tricks taken, made or set, and the scores; then the result and the faults
    (the forfeit's line unless ``forfeit`` is False: a caller that says it itself).
    A damaged record shows what it holds (:attr:`GameRecord.errors` says what not)."""
    sides = record.side_labels()
    table = Table(title=_e(f"match {record.match_id}  ({record.preset or 'custom'}, "
                           f"seed {record.seed})"), show_lines=plays)
    table.add_column("hand", justify="right")
    table.add_column("dealer")
    table.add_column("auction")
    table.add_column("contract")
    table.add_column("tricks")
    table.add_column("result")
    # the score columns by seat number, the names in full above the table: a name cut to
    # fit a column ("0:sea…") could not tell two bots apart
    for k in range(len(sides)):
        table.add_column("0 & 2" if len(sides) == 2 and k == 0 else "1 & 3" if len(sides) == 2
                         else str(k), justify="right", no_wrap=True)
    console.print(_e("seats: " + ", ".join(record.seat_label(i)
                                           for i in range(len(record.seats)))),
                  highlight=False)
    for h in record.hands:
        auction = " ".join(f"{b.seat}:{_bid_text(b.bid)}" for b in h.bids)
        if h.bidder is None:
            contract, result = "—", "all passed: redeal" if h.finished else "unfinished"
        else:
            contract = f"{h.bidder}:{h.bid} trump {h.trump or '?'}"
            if plays and h.discard:
                contract += f"\ndiscard {h.discard}"
            result = ("made" if h.made else "set") if h.finished else "unfinished"
        tricks = " ".join(str(x) for x in (h.tricks_taken or ()))
        scores = h.scores or ("",) * len(sides)
        detail = ""
        if plays and h.tricks:
            detail = "\n" + "\n".join(
                " ".join(f"{p.seat}:{p.tile}" for p in t.plays) + f" → {t.winner}"
                for t in h.tricks)
        table.add_row(*(_e(x) for x in (h.number + 1, h.dealer, auction, contract + detail,
                                        tricks, result, *scores)))
    console.print(table)
    for line in legend(len(record.seats), len(sides), plays=plays):
        console.print(line, style="dim", highlight=False)
    res = record.result
    if res.winner is not None and 0 <= res.winner < len(sides):
        final = ", ".join(f"{s} {x}" for s, x in zip(sides, res.scores, strict=False))
        console.print(f"[bold green]winner: {_e(sides[res.winner])}[/] ({_e(res.termination)}); "
                      f"final scores {_e(final)}")
    else:
        console.print(f"[bold yellow]no winner[/] ({_e(res.termination)})")
    if res.forfeit is not None and forfeit:
        f = res.forfeit
        console.print(f"[red]forfeit[/]: seat {_e(record.seat_label(f.seat))} — "
                      f"{_e(f.reason)}: {_e(f.detail)}")
    for f in record.faults:
        if not f.forfeit:
            console.print(f"fault: seat {_e(record.seat_label(f.seat))} — {_e(f.reason)}: "
                          f"{_e(f.detail)}")
    for problem in record.errors:
        console.print(f"[yellow]damaged[/]: {_e(problem)}")
