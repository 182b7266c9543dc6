"""`moon submit`: send a bot folder to a competition host as a new version."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from ..core.text import clean, clean_line
from . import stops
from .client import ClientError, api, find_token

FINAL = ("active", "rejected", "disabled", "retired")


@click.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--server", envvar="MOON_SERVER", required=True,
              help="The host's URL, e.g. http://127.0.0.1:8000 (env MOON_SERVER).")
@click.option("--token", default=None,
              help="Your API token (default: env MOON_TOKEN, else the moon config file).")
@click.option("--as", "as_", default=None, metavar="NAME",
              help="Submit as NAME: their token from the moon config file (default: the "
              "participant registered last from here).")
@click.option("--wait/--no-wait", default=False,
              help="Wait for the build and validation and print the outcome.")
@click.option("--timeout", type=float, default=900.0, show_default=True,
              help="Seconds --wait waits at most.")
def submit(folder: Path, server: str, token: str | None, as_: str | None, wait: bool,
           timeout: float) -> None:
    """Submit the bot in FOLDER: it is packed (sources and bot.toml, no build outputs),
    uploaded, then built and validated by the host. Exits 1 if it is rejected.

    \b
    Example:  moon submit ./mybot --server http://127.0.0.1:8000 --wait
    """
    from ..host.submissions import pack

    tok = find_token(server, token, as_)
    if not tok:
        raise click.ClickException(f"no token for {server}: pass --token, set MOON_TOKEN, or "
                                   f"register first with `moon host register {server} NAME "
                                   "--invite CODE` (the code from the organiser; no --invite "
                                   "if the host's registration is open)")
    stops.saying("stopped before the upload: nothing was sent to the host")
    data = pack(folder)
    stops.saying("stopped during the upload: the host may or may not have the version; run "
                 "the same command again (the same sources give back the same version)")
    v = api("POST", server, "/api/submissions", tok,
            files={"archive": (f"{folder.name}.tar.gz", data, "application/gzip")})
    click.echo(clean_line(f"{v['label']}: version {v['number']} of {v['bot']}, "
                          f"{v['status']}"))
    if not wait:
        return
    deadline = time.monotonic() + timeout
    status = v["status"]
    stops.saying(lambda: waiting_stopped(server, v, status))
    while status not in FINAL and time.monotonic() < deadline:
        time.sleep(1.0)
        v = api("GET", server, f"/api/versions/{v['id']}", tok)
        if v["status"] != status:
            status = v["status"]
            click.echo(clean_line(f"{v['label']}: {status}"))
    if status == "rejected":
        click.echo(clean_line(f"rejected: {v.get('reason') or 'no reason given'}"), err=True)
        try:
            click.echo(clean(api("GET", server, f"/api/versions/{v['id']}/log", tok,
                                 text=True)), err=True)
        except ClientError:
            pass
        raise SystemExit(1)
    if status not in FINAL:
        raise click.ClickException(f"still {status} after {timeout:.0f} s")


def waiting_stopped(server: str, v: dict[str, Any], status: str) -> str:
    """The line of a stopped ``--wait``: the version is the host's, its build and
    validation go on there, and how to follow them."""
    return clean_line(f"stopped waiting: {v['label']} (version {v['number']} of {v['bot']}, "
                      f"{status} when last seen) is submitted, and its build and validation "
                      f"go on at the host: follow it with `moon host status {server}` or "
                      f"GET {server.rstrip('/')}/api/versions/{v['id']}")
