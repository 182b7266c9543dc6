"""`moon host`: run a competition (init, run, status, register)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import click
from rich.markup import escape
from rich.table import Table

from ..core.text import clean_line
from ..errors import ConfigError
from .client import (
    ClientError,
    api,
    check_config,
    default_name,
    find_token,
    save_token,
    saved_names,
    unnamed_token,
)
from .console import make_console
from .stops import STOPPED_EXIT


@click.group()
def host() -> None:
    """Host a competition: submissions, validation, continuous games, a JSON API."""


@host.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", default="Moon competition", show_default=True,
              help="The competition's name.")
@click.option("--open", "open_registration", is_flag=True,
              help="Anyone may register (default: with an invite code from you).")
@click.option("--trust-local", is_flag=True,
              help="Run submissions as local processes of your user, unsandboxed (only for "
                   "bots you trust); default: Docker containers.")
@click.option("--seed", type=int, default=None, help="Master seed of the boards.")
def init(folder: Path, name: str, open_registration: bool, trust_local: bool,
         seed: int | None) -> None:
    """Write a competition folder (competition.toml, admin.token, a reference bot).

    \b
    Example:  moon host init mycomp --name "Autumn cup"
              moon host init mycomp --open --trust-local
    """
    from ..host import init_competition

    token = init_competition(folder, name=name, open_registration=open_registration,
                             trust_local=trust_local, seed=seed)
    click.echo(f"wrote {folder}/competition.toml (edit it), {folder}/reference/random and "
               f"{folder}/admin.token (the organiser's token: {token[:9]}…, keep it secret)")
    click.echo(f"serve it: moon host run {folder}; invite participants with "
               f"`moon host invite URL --folder {folder}`")


@host.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--database", envvar="MOON_DATABASE", default=None,
              help="A database URL (postgresql://USER@HOST:PORT/DB); default: "
                   "FOLDER/host.sqlite.")
@click.option("--address", default="127.0.0.1:8000", show_default=True,
              help="HOST:PORT to serve the API on (port 0: any free port).")
@click.option("--cluster", default=None, metavar="tcp://HOST:PORT",
              help="Play the games on the workers of this Dask scheduler "
                   "(docs/distributed.md). Needs moon-arena[cluster].")
def run(folder: Path, database: str | None, address: str, cluster: str | None) -> None:
    """Serve a competition until Ctrl-C / SIGTERM; it restarts where it stopped.

    \b
    Example:  moon host run mycomp
              moon host run mycomp --address 127.0.0.1:8080
              moon host run mycomp --cluster tcp://10.0.0.5:8786
    """
    # the host itself (~2 s of imports) only once the refusals below have been ruled out
    from ..host.address import bind
    from ..host.lock import check_not_served
    from ..host.settings import load_settings

    console = make_console(stderr=True)
    load_settings(folder)  # a folder that is no competition: said first
    check_not_served(folder)  # ... then another host on it (not "port in use")
    sock = bind(address)  # a port in use is said before anything is recovered
    from ..host.run import open_host, serve

    try:
        host_, recovered = open_host(folder, database, cluster=cluster)
    except ConfigError:
        sock.close()
        raise
    if host_.settings.runner.kind == "docker":
        from ..sandbox.docker import engine_problem

        problem = engine_problem()
        if problem:
            console.print(f"[yellow]warning:[/] {escape(problem)}: submissions wait (pending) "
                          + escape("until an engine answers; [runner] kind = \"local\" (with "
                                   "trust_local = true) runs bots you trust without one"),
                          soft_wrap=True)
    if recovered["voided"] or recovered["rebuilt"]:
        tables = recovered.get("tables", 0)
        console.print(f"recovered: {recovered['voided'] - tables} game(s) in flight voided "
                      f"(replayed), {recovered['rebuilt']} version(s) to build again"
                      + (f"; {tables} game(s) at tables ended (not replayed: their "
                         "people are told on their table's page)" if tables else ""),
                      soft_wrap=True)

    def ready(url: str) -> None:
        s = host_.settings
        console.print(f"[bold]{escape(clean_line(s.competition.name))}[/]: pages on {url}/, "
                      f"API on {url}/api (OpenAPI: {url}/docs);"
                      f" {s.runner.kind} runner, {s.matchmaking.concurrency} games at once"
                      + (f" on the cluster {escape(cluster)}" if cluster else ""),
                      soft_wrap=True)  # one line, the terminal wraps it: URLs stay whole
        print(f"serving {url}", flush=True)

    # SIGTERM is Ctrl-C (arena.cli.stops): the server stops gracefully on either, then
    # re-raises it
    served = False
    try:
        serve(host_, sock, ready)
        served = True
    except KeyboardInterrupt:
        served = True
    finally:
        try:
            if served:
                console.print(stopped_line(host_), soft_wrap=True, markup=False)
        finally:
            host_.close()
    raise SystemExit(STOPPED_EXIT)  # only a signal ends the host


def stopped_line(host_: Any) -> str:
    """The line ``moon host run`` ends with: what a stop left, from the database (games
    left ``running`` are voided and replayed at the next start, but a table's, which ends
    there; versions caught in a build or validation start it again)."""
    from sqlalchemy import func, select

    from ..host.models import Game, Version

    with host_.Session() as s:
        games = s.scalar(select(func.count()).select_from(Game)
                         .where(Game.status == "running", Game.kind != "table")) or 0
        tables = s.scalar(select(func.count()).select_from(Game)
                          .where(Game.status == "running", Game.kind == "table")) or 0
        builds = s.scalar(select(func.count()).select_from(Version)
                          .where(Version.status.in_(("building", "validating")))) or 0
    parts = []
    if games:
        parts.append(f"{games} game(s) in flight aborted: voided and replayed at the next "
                     "start, never rated")
    if tables:
        parts.append(f"{tables} game(s) at tables cut off: ended at the next start (not "
                     "replayed, never rated)")
    line = "stopped: " + ("; ".join(parts) if parts else "no game was in flight")
    if builds:
        line += f"; {builds} version(s) being built or validated start again at the next start"
    return line + "; every finished game and submission is kept"


@host.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--database", envvar="MOON_DATABASE", default=None,
              help="The database URL the host runs with (default: FOLDER/host.sqlite).")
def rerate(folder: Path, database: str | None) -> None:
    """Recompute every version's ratings from all results (the host must be stopped).

    \b
    Example:  moon host rerate mycomp
    """
    from ..host.run import open_host

    host_, _ = open_host(folder, database, recover=False)
    try:
        n = host_.rerate()
        host_.batch_now()
    finally:
        host_.close()
    click.echo(f"rerated from {n} games: live (OpenSkill) and batch ratings recomputed")


@host.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--database", envvar="MOON_DATABASE", default=None,
              help="The database URL the host runs with (default: FOLDER/host.sqlite).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="The archive to write (default: FOLDER/export.tar.gz).")
@click.option("--force", is_flag=True, help="Replace the archive if it is there already.")
def export(folder: Path, database: str | None, output: Path | None, force: bool) -> None:
    """Write one archive to check the competition by: every record, the results, the
    settings, the seeds, the season's ratings and the final's standings (a re-fit of
    its games reproduces them). The host may keep running.

    \b
    Example:  moon host export mycomp --output mycomp-results.tar.gz
    """
    from ..host.export import export as write_export

    out = output or folder / "export.tar.gz"
    done = write_export(folder, out, database, replace=force)
    click.echo(f"wrote {done.path}: {done.games} games ({done.final_games} of the final), "
               f"{done.records} records")


@host.command()
@click.argument("url")
def status(url: str) -> None:
    """Print the status of a running host.

    \b
    Example:  moon host status http://127.0.0.1:8000
    """
    st = api("GET", url, "/api/status")
    t = Table(title=escape(clean_line(st["name"])), show_header=False)
    for key in ("queued", "running", "finished", "voided", "games_per_min", "workers",
                "runner", "builds_pending", "uptime_s"):
        t.add_row(key.replace("_", " "), escape(clean_line(st[key])))
    t.add_row("versions", escape(clean_line(", ".join(
        f"{k} {v}" for k, v in sorted(st["versions"].items())) or "none")))
    if st.get("phase"):
        t.add_row("phase", escape(clean_line(st["phase"])))
        nxt = (f"{st['next_phase']} at {st['next_change_at']}" if st.get("next_phase")
               else "none (as things stand)")
        t.add_row("next phase", escape(clean_line(nxt)))
    if st.get("final"):
        t.add_row("final", escape(clean_line(st["final"])))
    if st.get("waiting"):
        t.add_row("waiting", escape(clean_line(st["waiting"])))
    if st.get("builds_waiting"):
        t.add_row("builds wait", escape(clean_line(st["builds_waiting"])))
    make_console().print(t)


def organiser_options(f: Any) -> Any:
    """``--admin-token`` and ``--folder``: the organiser's token, given or read."""
    f = click.option("--folder", type=click.Path(file_okay=False, exists=True,
                                                 path_type=Path),
                     default=None, help="The competition folder: its admin.token is used.")(f)
    return click.option("--admin-token", "token", envvar="MOON_ADMIN_TOKEN", default=None,
                        help="The organiser's token (env MOON_ADMIN_TOKEN); or --folder.")(f)


def organiser_token(token: str | None, folder: Path | None) -> str:
    """The organiser's token from ``--admin-token`` or the folder's ``admin.token``.

    Raises:
        click.ClickException: neither.
    """
    from ..host.settings import ADMIN_TOKEN_FILE

    if token is None and folder is not None:
        token = (folder / ADMIN_TOKEN_FILE).read_text().strip()
    if not token:
        raise click.ClickException("the organiser's token is needed: --admin-token, "
                                   "MOON_ADMIN_TOKEN or --folder COMPETITION")
    return token


@host.command()
@click.argument("url")
@organiser_options
def invite(url: str, token: str | None, folder: Path | None) -> None:
    """Print a new invite code (the organiser's): good for one registration.

    \b
    Example:  moon host invite http://127.0.0.1:8000 --folder mycomp
    """
    click.echo(api("POST", url, "/api/invites", organiser_token(token, folder))["code"])


def _phase_line(p: dict[str, Any]) -> str:
    nxt = (f"next: {p['next_phase']} at {p['next_at']}" if p.get("next_phase")
           else "no next change (as things stand)")
    by = " (moved by hand" + (f": {p['reason']}" if p.get("reason") else "") + ")" \
        if p.get("by") == "organiser" else ""
    since = f" since {p['since']}" if p.get("since") else ""
    return clean_line(f"phase: {p['phase']}{since}{by}; {nxt}")


@host.command()
@click.argument("url")
@click.argument("to", required=False, metavar="[PHASE]")
@click.option("--until", default=None, metavar="TIME",
              help="Hold the phase until this time (UTC, 2026-12-24T18:00:00Z).")
@click.option("--reason", default="", help="Why (the audit log keeps it).")
@organiser_options
def phase(url: str, to: str | None, until: str | None, reason: str, token: str | None,
          folder: Path | None) -> None:
    """Print the competition's phase, or move it to PHASE by hand (the organiser's):
    upcoming, registration, season, freeze, final or ended. The phase holds until
    --until, else (ahead of the calendar) until the calendar reaches it, or (behind it)
    until the calendar's next change.

    \b
    Example:  moon host phase http://127.0.0.1:8000 freeze --folder mycomp \\
                --until 2027-01-20T12:00:00Z --reason "a fix of the referee"
    """
    if to is None:
        click.echo(_phase_line(api("GET", url, "/api/phase")))
        return
    body: dict[str, Any] = {"phase": to, "reason": reason}
    if until:
        body["until"] = until
    out = api("POST", url, "/api/phase", organiser_token(token, folder), json=body)
    click.echo(_phase_line(out))


@host.command()
@click.argument("url")
@click.option("--limit", default=50, show_default=True, help="Entries, newest first.")
@organiser_options
def audit(url: str, limit: int, token: str | None, folder: Path | None) -> None:
    """Print the audit log (the organiser's): every change of phase and every action of
    the organiser's, newest first.

    \b
    Example:  moon host audit http://127.0.0.1:8000 --folder mycomp
    """
    rows = api("GET", url, "/api/audit", organiser_token(token, folder),
               params={"limit": limit})
    if not rows:
        click.echo("the audit log is empty")
    for e in rows:
        click.echo(clean_line(f"{e['at']}  {e['actor']}  {e['action']}: {e['detail']}"))


@host.command()
@click.argument("url")
@click.argument("name")
@click.option("--invite", default=None, help="The invite code the organiser gave you.")
@click.option("--save/--no-save", default=True, show_default=True,
              help="Keep the token in your moon config file for this server.")
def register(url: str, name: str, invite: str | None, save: bool) -> None:
    """Register NAME at the host URL and print your API token.

    The token is kept (unless --no-save) in $XDG_CONFIG_HOME/moon/config.toml, by default
    ~/.config/moon/config.toml (mode 0600, one entry per server, a token per participant);
    `moon submit` reads it from there: the last registered participant's by default, another
    one's with --as NAME. Set XDG_CONFIG_HOME to keep it elsewhere. --invite is needed
    unless the host's registration is open.

    \b
    Example:  moon host register http://127.0.0.1:8000 alice --invite CODE
    """
    if save:  # a config file that cannot be read is said before the name is taken
        try:
            check_config()
        except ClientError as e:
            raise ClientError(f"{e}, or register with --no-save") from None
    out = api("POST", url, "/api/register", json={"name": name, "invite": invite})
    token = out["token"]
    name = out.get("name", name)
    click.echo(token)  # first: if saving fails, the token is not lost
    try:
        before = saved_names(url) if save else []
        unnamed = save and unnamed_token(url)
        where = save_token(url, token, name) if save else None
    except ClientError as e:
        raise click.ClickException(f"the token above is not saved: {e}") from None
    if where:
        others = [n for n in before if n != name]
        said = (f"(saved in {where} as {name}'s token for {url.rstrip('/')}, its default now: "
                f"`moon submit FOLDER --server {url}` uses it")
        if name in before:
            said += f"; it replaces {name}'s token saved before"
        if unnamed:
            said += "; it replaces the token saved before for this server"
        if others:
            said += (f"; {', '.join(others)}'s kept: `moon submit ... --as "
                     f"{others[0]}`")
        click.echo(said + ")", err=True)


@host.command("new-token")
@click.argument("url")
@click.option("--token", default=None,
              help="Your API token now (default: env MOON_TOKEN, else the moon config file).")
@click.option("--as", "as_", default=None, metavar="NAME",
              help="Use NAME's token from the moon config file (default: the last "
              "registered participant's).")
@click.option("--save/--no-save", default=True, show_default=True,
              help="Keep the new token in your moon config file for this server.")
def new_token(url: str, token: str | None, as_: str | None, save: bool) -> None:
    """Replace your API token at the host URL (one that may have leaked) and print the new
    one: the old token and every web session signed in with it stop working at once.

    \b
    Example:  moon host new-token http://127.0.0.1:8000 --as alice
    """
    tok = find_token(url, token, as_)
    if not tok:
        raise click.ClickException(f"no token for {url}: pass --token, set MOON_TOKEN, or "
                                   "register first (moon host register)")
    out = api("POST", url, "/api/token", tok)
    name = out.get("name")
    click.echo(out["token"])  # first: the old token no longer works, this one must not be lost
    try:
        where = (save_token(url, out["token"], name,
                            default=default_name(url) in (None, name)) if save else None)
    except ClientError as e:
        raise click.ClickException(f"the token above is not saved: {e}") from None
    if where:
        click.echo(f"(saved in {where}" + (f" as {name}'s token" if name else "") + ")",
                   err=True)


@host.command()
@click.argument("url")
@click.argument("version_id", type=int)
@click.option("--reason", required=True, help="Why (its owner reads it).")
@organiser_options
def disable(url: str, version_id: int, reason: str, token: str | None,
            folder: Path | None) -> None:
    """Disable a version (the organiser's): it plays no new game; its owner reads why.

    \b
    Example:  moon host disable http://127.0.0.1:8000 12 --reason "reads the records" \\
                --folder mycomp
    """
    v = api("POST", url, f"/api/versions/{version_id}/disable",
            organiser_token(token, folder), json={"reason": reason})
    click.echo(clean_line(f"{v['label']}: {v['status']} ({v['reason']})"))


@host.command()
@click.argument("url")
@click.argument("version_id", type=int)
@click.option("--reason", default="", help="Why (the audit log keeps it).")
@organiser_options
def enable(url: str, version_id: int, reason: str, token: str | None,
           folder: Path | None) -> None:
    """Make a disabled version active again (the organiser's).

    \b
    Example:  moon host enable http://127.0.0.1:8000 12 --folder mycomp
    """
    v = api("POST", url, f"/api/versions/{version_id}/enable",
            organiser_token(token, folder), json={"reason": reason})
    click.echo(clean_line(f"{v['label']}: {v['status']}"))


@host.command("disable-participant")
@click.argument("url")
@click.argument("name")
@click.option("--reason", required=True, help="Why (they read it).")
@organiser_options
def disable_participant(url: str, name: str, reason: str, token: str | None,
                        folder: Path | None) -> None:
    """Disable participant NAME (the organiser's): their versions stop being matched,
    their queued games are cancelled, and they may not submit or ask for challenges; they
    read why. `moon host enable-participant` undoes it.

    \b
    Example:  moon host disable-participant http://127.0.0.1:8000 zed \\
                --reason "shares a bot with alice" --folder mycomp
    """
    p = api("POST", url, f"/api/participants/{quote(name, safe='')}/disable",
            organiser_token(token, folder), json={"reason": reason})
    click.echo(clean_line(f"participant {p['name']}: disabled ({p['reason']})"))


@host.command("enable-participant")
@click.argument("url")
@click.argument("name")
@click.option("--reason", default="", help="Why (the audit log keeps it).")
@organiser_options
def enable_participant(url: str, name: str, reason: str, token: str | None,
                       folder: Path | None) -> None:
    """Enable disabled participant NAME again (the organiser's): the versions disabled
    with them play again.

    \b
    Example:  moon host enable-participant http://127.0.0.1:8000 zed --folder mycomp
    """
    p = api("POST", url, f"/api/participants/{quote(name, safe='')}/enable",
            organiser_token(token, folder), json={"reason": reason})
    click.echo(clean_line(f"participant {p['name']}: enabled"))


@host.command()
@click.argument("url")
@click.argument("game_id")
@click.option("--reason", required=True, help="Why (the audit log keeps it).")
@organiser_options
def void(url: str, game_id: str, reason: str, token: str | None,
         folder: Path | None) -> None:
    """Void a finished rated game (the ratings are recomputed without it) or challenge
    (not played again; its asker reads why): the organiser's.

    \b
    Example:  moon host void http://127.0.0.1:8000 s12-3 --reason "a host fault" \\
                --folder mycomp
    """
    g = api("POST", url, f"/api/games/{game_id}/void", organiser_token(token, folder),
            json={"reason": reason})
    then = ("a challenge, never rated: not played again, its asker reads why"
            if g["kind"] == "challenge" else "the ratings are recomputed without it")
    click.echo(clean_line(f"game {g['id']}: {g['status']}; {then}"))


@host.command()
@click.argument("url")
@click.argument("text", default="")
@organiser_options
def announce(url: str, text: str, token: str | None, folder: Path | None) -> None:
    """Post TEXT as the announcement on every page (the organiser's); none takes it down.

    \b
    Example:  moon host announce http://127.0.0.1:8000 "The final starts at 18:00 UTC" \\
                --folder mycomp
    """
    out = api("POST", url, "/api/announcement", organiser_token(token, folder),
              json={"text": text})
    click.echo(clean_line(f"announcement: {out['detail']}" if out["detail"]
                          else "announcement taken down"))


@host.command("revalidate")
@click.argument("url")
@click.argument("version_id", type=click.IntRange(min=1))
@click.option("--token", default=None,
              help="Your API token (default: env MOON_TOKEN, else the moon config file).")
@click.option("--as", "as_", default=None, metavar="NAME",
              help="Use NAME's token from the moon config file (default: the last "
              "registered participant's).")
@click.option("--folder", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=None, help="The competition folder: the organiser's admin.token is "
              "used (for anyone's version, a disabled one's too).")
def revalidate(url: str, version_id: int, token: str | None, as_: str | None,
               folder: Path | None) -> None:
    """Have your rejected version VERSION_ID at the host URL built and validated again,
    unchanged (e.g. it was rejected because the host was too slow to start it); the
    organiser may ask for anyone's, and for a disabled version's (active again only if it
    passes; `moon host enable` makes it active at once). Follow it with `moon host status`
    or its page.

    \b
    Example:  moon host revalidate http://127.0.0.1:8000 12 --as alice
              moon host revalidate http://127.0.0.1:8000 12 --folder mycomp
    """
    tok = find_token(url, token, as_) if folder is None or token else \
        organiser_token(None, folder)
    if not tok:
        raise click.ClickException(f"no token for {url}: pass --token, set MOON_TOKEN, or "
                                   "register first (moon host register)")
    v = api("POST", url, f"/api/versions/{version_id}/validate", tok)
    click.echo(clean_line(f"{v['label']}: version {v['number']} of {v['bot']}, "
                          f"{v['status']} (validated again)"))
