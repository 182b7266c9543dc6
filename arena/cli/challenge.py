"""`moon challenge`: ask a competition host for an unrated test game against a chosen
opponent, and wait for its result."""

from __future__ import annotations

import time
from typing import Any

import click

from ..core.text import clean_line
from . import stops
from .client import api, find_token

OVER = ("finished", "voided", "cancelled")


def result_line(c: dict[str, Any]) -> str:
    """One line for a challenge: who played whom, and how it went."""
    head = f"challenge {c['id']}: {c['version']} against {c['opponent']}, {c['status']}"
    if c["status"] == "finished":
        mine, theirs = c["places"]
        game = c["game"]
        score = "-".join(str(x) for x in game.get("scores") or [])
        return (f"{head}: you placed {mine}, they placed {theirs} (scores {score}, "
                f"{game.get('termination')}); unrated; replay {c['page']}")
    if c["note"]:
        return f"{head}: {c['note']}"
    return head


@click.command()
@click.argument("opponent")
@click.option("--version", "number", type=click.IntRange(min=1), default=None,
              help="The opponent bot's version number (default: its active version).")
@click.option("--mine", type=click.IntRange(min=1), default=None, metavar="VERSION_ID",
              help="The id of your version that plays (default: your one active version).")
@click.option("--server", envvar="MOON_SERVER", required=True,
              help="The host's URL, e.g. http://127.0.0.1:8000 (env MOON_SERVER).")
@click.option("--token", default=None,
              help="Your API token (default: env MOON_TOKEN, else the moon config file).")
@click.option("--as", "as_", default=None, metavar="NAME",
              help="Ask as NAME: their token from the moon config file.")
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="Wait for the game's result and print it.")
@click.option("--timeout", type=float, default=900.0, show_default=True,
              help="Seconds --wait waits at most.")
def challenge(opponent: str, number: int | None, mine: int | None, server: str,
              token: str | None, as_: str | None, wait: bool, timeout: float) -> None:
    """Ask for an unrated test game of your bot against OPPONENT (a bot's name, or one of
    the host's reference bots), then wait for its result. It never counts in the
    ratings; the host plays it between rated games, and takes a few an hour from each
    participant ([challenges] per_hour). A game the host could not play is played again
    (followed here). Exits 1 if it could not be played.

    \b
    Example:  moon challenge heuristic --server http://127.0.0.1:8000
    """
    tok = find_token(server, token, as_)
    if not tok:
        raise click.ClickException(f"no token for {server}: pass --token, set MOON_TOKEN, "
                                   f"or register first with `moon host register {server} "
                                   "NAME`")
    stops.saying("stopped before the host answered: it may or may not have the challenge; "
                 f"see GET {server}/api/challenges")
    c = api("POST", server, "/api/challenges", tok,
            json={"opponent": opponent, "version": number, "mine": mine})
    click.echo(clean_line(result_line(c)))
    if not wait:
        return
    stops.saying(f"stopped waiting: challenge {c['id']} goes on at the host; follow it with "
                 f"GET {server}/api/challenges/{c['id']} or on {server}/challenges")
    deadline = time.monotonic() + timeout
    status = c["status"]
    while time.monotonic() < deadline:
        if status == "voided" and c.get("again"):  # the host's failure: played again
            click.echo(clean_line(result_line(c)))
            c = api("GET", server, f"/api/challenges/{c['again']}", tok)
            status = c["status"]
            if status not in OVER:
                click.echo(clean_line(result_line(c)))
            continue
        if status in OVER:
            break
        time.sleep(1.0)
        c = api("GET", server, f"/api/challenges/{c['id']}", tok)
        if c["status"] != status:
            status = c["status"]
            if status not in OVER:
                click.echo(clean_line(result_line(c)))
    if status not in OVER:
        raise click.ClickException(f"challenge {c['id']} is still {status} after "
                                   f"{timeout:.0f} s: follow it with GET /api/challenges/"
                                   f"{c['id']}")
    click.echo(clean_line(result_line(c)))
    if status != "finished":
        raise SystemExit(1)
