"""`moon serve`: a standalone referee server."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import click

from ..sandbox.containment import cleanup_stale_once
from .console import make_console
from .options import TIME_FIELDS, make_time_control, time_options
from .stops import STOPPED_EXIT


@click.command()
@click.option("--address", default="127.0.0.1:50051", show_default=True,
              help="TCP host:port to listen on ('' for none).")
@click.option("--unix-socket", type=click.Path(dir_okay=False), default=None,
              help="Also listen on this Unix socket path.")
@click.option("--records", type=click.Path(file_okay=False, path_type=Path),
              default=Path("runs/records"), show_default=True,
              help="Folder for game records.")
@click.option("--grace", type=float, default=10.0, show_default=True,
              help="Seconds running games get to finish on shutdown before they are aborted.")
@click.option("--admin-token", envvar="MOON_ADMIN_TOKEN", default=None,
              help="The token MatchService calls must carry as 'authorization: Bearer "
                   "TOKEN' metadata (env MOON_ADMIN_TOKEN). Required unless "
                   "--insecure-no-admin-token.")
@click.option("--insecure-no-admin-token", "no_token", is_flag=True, default=False,
              help="Serve MatchService without a token: anyone who reaches the address can "
                   "create, list and cancel matches (only where nobody untrusted can).")
@click.option("--keep-finished", type=click.IntRange(min=0), default=None,
              help="Finished matches kept in memory for MatchService (default 64); older "
                   "ones are forgotten (GetMatch then reads their record): memory stays flat.")
@time_options
def serve(address: str, unix_socket: str | None, records: Path, grace: float,
          admin_token: str | None, no_token: bool, keep_finished: int | None,
          **tc: Any) -> None:
    """Run a referee server until Ctrl-C / SIGTERM.

    Create matches with MatchService.CreateMatch (e.g. grpcurl), hand each bot its token.
    MatchService calls carry the admin token ('authorization: Bearer TOKEN').

    \b
    Example:  moon serve --admin-token "$TOKEN"
              moon serve --insecure-no-admin-token --address 127.0.0.1:50052
              MOON_ADMIN_TOKEN=secret moon serve --address 0.0.0.0:50051
    """
    if not admin_token and not no_token:
        raise click.UsageError(
            "moon serve needs an admin token for its match service: give --admin-token "
            "TOKEN (or set MOON_ADMIN_TOKEN), e.g. from `python -c \"import secrets; "
            "print(secrets.token_urlsafe(24))\"`, or --insecure-no-admin-token where no "
            "untrusted program can reach the address")
    if admin_token and no_token:
        raise click.UsageError("--admin-token and --insecure-no-admin-token contradict each "
                               "other: give one")
    from ..executor.game import serving
    from ..referee.referee import KEEP_FINISHED, Referee

    time_control = make_time_control(**{k: tc[k] for k in TIME_FIELDS})
    console = make_console(stderr=True)
    cleanup_stale_once()  # local bots and cgroups a killed arena left behind

    async def run() -> None:
        referee = Referee(record_dir=records, default_tc=time_control,
                          keep_finished=KEEP_FINISHED if keep_finished is None
                          else keep_finished)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with serving(referee, address or None, unix_socket, grace_s=grace,
                           match_service=True, admin_token=admin_token) as ep:
            if not admin_token:
                console.print("[yellow]note[/]: --insecure-no-admin-token: MatchService is "
                              "open to anyone who reaches this address")
            where = [f"{address.rsplit(':', 1)[0]}:{ep.port}"] if address else []
            where += [f"unix://{unix_socket}"] if unix_socket else []
            console.print(f"[bold]moon referee[/] serving on {' and '.join(where)}; "
                          f"records in {records}")
            await stop.wait()
            # the stop's one line, said as it begins (the games' grace may take a while)
            console.print(f"stopped: shutting down; the running games get {grace:g} s to "
                          f"finish, then are aborted; every game's record is kept in "
                          f"{records}", highlight=False, soft_wrap=True)

    asyncio.run(run())
    raise SystemExit(STOPPED_EXIT)  # only a signal ends the server
