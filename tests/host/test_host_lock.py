"""One host per competition and per database: a second `moon host run` on a competition (or
a database) that a host is serving is refused in one line before it changes anything — it
used to "recover" the running host's games in flight, voiding them, and then fail on the
port with a traceback — and so is `moon host rerate`; a port in use is said in one line,
before anything is recovered. The same on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import subprocess
from pathlib import Path

from click.testing import CliRunner
from host_support import EXAMPLES, MOON, ROOT, HostProcess, make_competition, tar_folder, wait_for


def moon(*argv: str, database: str | None = None) -> subprocess.CompletedProcess[str]:
    args = [*MOON, *argv] + (["--database", database] if database else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)


def refused(*argv: str, database: str | None = None) -> str:
    """The one error line of a `moon` command refused in this process (exit 1, no
    exception other than click's exit)."""
    from arena.cli import main

    args = [*argv] + (["--database", database] if database else [])
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 1, (done.output, done.exception)
    assert isinstance(done.exception, SystemExit), done.exception
    lines = [ln for ln in done.output.splitlines() if ln.strip()]
    assert len(lines) == 1, done.output
    return lines[0]


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one error line of a refused command (and no traceback)."""
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_second_host_is_refused_before_it_changes_anything(
        tmp_path: Path, database: str | None) -> None:
    folder = make_competition(tmp_path / "comp")
    host = HostProcess(folder, database).start()
    try:
        for who, bot in (("ann", "random"), ("bob", "weak")):
            token = host.register(who)
            v = host.submit(token, tar_folder(EXAMPLES / bot)).json()
            assert host.wait_version(token, v["id"])["status"] == "active"
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= 2, 120, "rated games")
        before = host.ok("GET", "/api/status")
        assert before["voided"] == 0
        assert host.proc is not None
        pid = host.proc.pid

        # the same folder (and database): refused, naming the running host
        line = one_line(moon("host", "run", str(folder), "--address", "127.0.0.1:0",
                             database=database))
        assert "already served by another `moon host run`" in line, line
        assert f"(pid {pid})" in line, line
        # ... on the port it serves too: the line says another host, not "port in use"
        port = host.url.rsplit(":", 1)[1]
        line = refused("host", "run", str(folder), "--address", f"127.0.0.1:{port}",
                       database=database)
        assert "already served by another `moon host run`" in line, line
        # a folder that is no competition, on that port: said as such
        (tmp_path / "empty").mkdir()
        line = refused("host", "run", str(tmp_path / "empty"), "--address",
                       f"127.0.0.1:{port}")
        assert "competition.toml" in line and "in use" not in line, line
        # `moon host rerate` needs the host stopped: refused the same way
        line = refused("host", "rerate", str(folder), database=database)
        assert "already served" in line, line

        # another folder on the same database: refused too (on SQLite, the first
        # competition's own file given as --database)
        other = make_competition(tmp_path / "other")
        shared = database or f"sqlite:///{folder / 'host.sqlite'}"
        line = refused("host", "run", str(other), "--address", "127.0.0.1:0",
                       database=shared)
        assert "the database" in line and "already served" in line, line

        # the running host lost nothing: no game voided, it plays on
        after = host.ok("GET", "/api/status")
        assert after["voided"] == 0, after
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] > after["finished"], 120,
                 "more games after the refused starts")

        # a free competition on a port in use: one line, nothing recovered or created
        port = host.url.rsplit(":", 1)[1]
        third = make_competition(tmp_path / "third")
        line = refused("host", "run", str(third), "--address", f"127.0.0.1:{port}")
        assert line == (f"Error: --address 127.0.0.1:{port}: in use (another host, or another "
                        "server?): stop it or pass --address HOST:PORT with another port"), line
        assert not (third / "host.sqlite").exists()
    finally:
        host.stop()
    assert "Traceback" not in host.log.read_text()

    # once the first host is stopped, the competition can be served again (by the next
    # host, after a kill -9 too: the kernel and the database server drop the locks)
    again = HostProcess(folder, database).start()
    try:
        assert again.ok("GET", "/api/status")["name"]
        again.kill9()
    finally:
        again.kill()
    HostProcess(folder, database).start().stop()
