"""Helpers of the host tests: a real PostgreSQL server, a real `moon host run` process on
127.0.0.1, and a small HTTP client of its API."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
PG_BIN = max(Path("/usr/lib/postgresql").glob("*/bin"),
             key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
             default=Path("/usr/lib/postgresql/15/bin"))
"""Debian's PostgreSQL binaries (the newest installed; 15 on bookworm)."""
MOON = [sys.executable, "-m", "arena.cli"]

# Games that last a couple of seconds: few hands to a small target, short clocks.
FAST = {"rules": "target_score = 7", "time_control": (
    "decision_ms = 1000\nbank_ms = 5000\nstartup_ms = 10000\nmax_hands = 4")}


SEED = (1 << 62) + 7
"""The competitions' master seed: fixed, so their deals are the same from run to run, and
long (`moon host run` warns of a short one, which a published record gives away)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Postgres:
    """A throwaway PostgreSQL server (Debian's binaries) on 127.0.0.1, as the
    ``postgres`` user, in a temp folder; :meth:`database` makes a fresh database."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="moon-pg-"))
        self.port = free_port()
        shutil.chown(self.dir, "postgres", "postgres")
        os.chmod(self.dir, 0o700)

    def _as_pg(self, *argv: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *argv], check=True,
                       capture_output=True, timeout=120)

    def start(self) -> None:
        self._as_pg(str(PG_BIN / "initdb"), "-D", f"{self.dir}/data", "-U", "postgres",
                    "--auth=trust")
        self.resume()

    def pause(self) -> None:
        """Stop the server (fast: its sessions are cut), keeping its data."""
        self._as_pg(str(PG_BIN / "pg_ctl"), "-D", f"{self.dir}/data", "-m", "fast", "-w",
                    "stop")

    def resume(self) -> None:
        """Start the server (again) on its port."""
        self._as_pg(str(PG_BIN / "pg_ctl"), "-D", f"{self.dir}/data", "-o",
                    f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir}",
                    "-l", f"{self.dir}/log", "-w", "start")

    def stop(self) -> None:
        try:
            self._as_pg(str(PG_BIN / "pg_ctl"), "-D", f"{self.dir}/data", "-m", "fast",
                        "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"


def postgres_problem() -> str | None:
    """Why no PostgreSQL server can be started here, or None."""
    if not (PG_BIN / "initdb").is_file():
        return "PostgreSQL is not installed (apt-get install -y postgresql)"
    if os.geteuid() != 0:
        return "the PostgreSQL fixture runs the server as the postgres user: needs root"
    if shutil.which("runuser") is None:
        return "runuser (util-linux) is missing"
    return None


@contextlib.contextmanager
def started_postgres() -> Iterator[Postgres]:
    """A started :class:`Postgres`, stopped at the end; skips the test where none can run
    (fails it under ``MOON_REQUIRE_POSTGRES=1``)."""
    import pytest

    problem = postgres_problem()
    if problem:
        if os.environ.get("MOON_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"MOON_REQUIRE_POSTGRES=1, but {problem}", pytrace=False)
        pytest.skip(problem)
    pg = Postgres()
    pg.start()
    try:
        yield pg
    finally:
        with contextlib.suppress(Exception):  # a test may have stopped it already
            pg.stop()


class HostProcess:
    """`moon host run FOLDER` as a real process on 127.0.0.1 with a free port."""

    def __init__(self, folder: Path, database: str | None, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> None:
        self.folder = folder
        self.database = database
        self.args = args
        """More options for `moon host run` (``--cluster ADDRESS``...)."""
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.log = folder / "host.log"

    @property
    def admin(self) -> str:
        return (self.folder / "admin.token").read_text().strip()

    def start(self, timeout: float = 60.0) -> HostProcess:
        argv = [*MOON, "host", "run", str(self.folder), "--address", "127.0.0.1:0"]
        if self.database:
            argv += ["--database", self.database]
        argv += self.args
        log = open(self.log, "a")  # noqa: SIM115 - the process writes it
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True,
                                     env=self.env, cwd=ROOT)
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.match(r"serving (http://\S+)", line)
            if m:
                self.url = m.group(1)
                return self
        self.kill()
        raise AssertionError(f"moon host run did not start: {self.log.read_text()[-3000:]}")

    def kill9(self) -> None:
        """SIGKILL: no cleanup at all."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    # -- the API ----------------------------------------------------------------------
    def call(self, method: str, path: str, token: str | None = None, **kw: Any
             ) -> httpx.Response:
        # the figures of now, not the host's copy for visitors (arena.host.visitors)
        headers = {"Cache-Control": "no-cache", **kw.pop("headers", {})}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.request(method, self.url + path, headers=headers, timeout=60, **kw)

    def ok(self, method: str, path: str, token: str | None = None, **kw: Any) -> Any:
        r = self.call(method, path, token, **kw)
        assert r.status_code < 400, (r.status_code, r.text)
        return r.json()

    def register(self, name: str) -> str:
        invite = self.ok("POST", "/api/invites", self.admin)["code"]
        return self.ok("POST", "/api/register", json={"name": name, "invite": invite})["token"]

    def submit(self, token: str, archive: bytes, name: str = "bot.tar.gz") -> httpx.Response:
        return self.call("POST", "/api/submissions", token,
                         files={"archive": (name, archive, "application/gzip")})

    def wait_version(self, token: str, version_id: int, timeout: float = 120.0) -> dict:
        """Poll a version until its build and validation are over."""
        def done() -> dict | None:
            v = self.ok("GET", f"/api/versions/{version_id}", token)
            return v if v["status"] not in ("pending", "building", "validating") else None
        return wait_for(done, timeout, f"version {version_id} to be built and validated")

    def enter(self, bots: tuple[str, ...]) -> list[tuple[str, dict]]:
        """Each example bot of ``bots`` submitted by a participant of its own (p0, p1, ...)
        and waited for until active: their (token, version) pairs."""
        versions = []
        for i, bot in enumerate(bots):
            token = self.register(f"p{i}")
            versions.append((token, self.submit(token, tar_folder(EXAMPLES / bot)).json()))
        for token, v in versions:
            assert self.wait_version(token, v["id"])["status"] == "active"
        return versions


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: float = 0.2) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = check()
        if out:
            return out
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@contextlib.contextmanager
def small_disk_at(disk: Path, size: str = "32m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``disk`` (made) while the block runs; the test is
    skipped where mount is not allowed."""
    import pytest

    disk.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"cannot mount a small disk (tmpfs) here: "
                    f"{(out.stderr.strip() or 'mount failed').splitlines()[0]}")
    try:
        yield disk
    finally:
        if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def fill(disk: Path) -> Path:
    """Fill ``disk`` to its last byte with one file; the file."""
    filler = disk / "filler"
    chunk = b"\0" * (1 << 16)
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
        try:  # not a byte more
            f.write(b"\0")
        except OSError:
            return filler
    raise AssertionError(f"{disk} took a byte after it was full")


MAX_ATTEMPTS = 3
"""A voided rated game is played again until its third try (arena.host.recorder)."""


def sqlite_rows(db: Path) -> Callable[[str], list[tuple]]:
    """A query of the SQLite file ``db``, read-only (``sql`` -> its rows)."""
    def rows(sql: str) -> list[tuple]:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            return list(conn.execute(sql).fetchall())
        finally:
            conn.close()
    return rows


def assert_nothing_lost(rows: Callable[[str], list[tuple]], what: str,
                        records: Path | None = None) -> None:
    """After a fault the host lived through (``what``: "the full disk", "the outage"),
    its database as ``rows`` reads it: the games voided because their result or record
    could not be written were played again (none lost) and never rated; every finished
    rated game is rated once (and has its record in ``records``, when given); no seating
    of a set finished twice; each version's game count is the finished rated games it sat
    in, counted here."""
    unwritten = rows("SELECT id, attempt, rated FROM games WHERE kind = 'rated' AND "
                     "status = 'voided' AND void_reason LIKE '%could not be written%'")
    assert unwritten, f"no game was caught by {what}"
    ids = {r[0] for r in rows("SELECT id FROM games")}
    for gid, attempt, rated in unwritten:
        assert not rated
        if attempt + 1 < MAX_ATTEMPTS:
            assert f"{gid.split('-r')[0]}-r{attempt + 1}" in ids, gid
    done = rows("SELECT id, dset_id, seating, rated FROM games WHERE kind = 'rated' "
                "AND status = 'finished'")
    assert all(r[3] for r in done)
    if records is not None:
        assert [r[0] for r in done if not (records / f"{r[0]}.json").is_file()] == []
    assert rows("SELECT count(*) FROM games WHERE rated AND status <> 'finished'") == [(0,)]
    twice = [k for k, c in Counter((r[1], r[2]) for r in done).items() if c > 1]
    assert twice == []
    sat = rows("SELECT DISTINCT s.version_id, g.id FROM game_seats s JOIN games g ON "
               "g.id = s.game_id WHERE g.kind = 'rated' AND g.status = 'finished'")
    per_version = Counter(v for v, _ in sat)
    games = dict(rows("SELECT id, games FROM versions"))
    assert {v: n for v, n in games.items() if n} == dict(per_version)


def make_competition(folder: Path, *, runner: str = "local", concurrency: int = 2,
                     extra: str = "") -> Path:
    """A competition folder (what `moon host init` writes, written in process: the command
    itself is tests/host/test_settings.py's) with fast games."""
    from arena.host import init_competition

    init_competition(folder, trust_local=runner == "local", seed=SEED)
    path = folder / "competition.toml"
    text = path.read_text()
    text = re.sub(r"(?m)^\[rules\].*$", "[rules]\n" + FAST["rules"], text)
    text = re.sub(r"(?ms)^\[time_control\].*?\n\n", "[time_control]\n"
                  + FAST["time_control"] + "\n\n", text)
    text = re.sub(r"(?m)^concurrency = \d+", f"concurrency = {concurrency}", text)
    text = re.sub(r"(?m)^batch_every_s = \d+", "batch_every_s = 2", text)
    text = re.sub(r"(?m)^bootstrap = \d+", "bootstrap = 20", text)
    path.write_text(text + extra)
    return folder


def tar_files(files: dict[str, bytes]) -> bytes:
    """A .tar.gz of ``files`` (name -> contents)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def tar_folder(folder: Path, *, rename: str | None = None, edit: str = "") -> bytes:
    """A bot folder as a .tar.gz (``rename``: another name in its bot.toml; ``edit``: a
    line appended to its bot.py, making a new version)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for p in sorted(folder.rglob("*")):
            if p.is_dir() or "__pycache__" in p.parts:
                continue
            data = p.read_bytes()
            rel = p.relative_to(folder).as_posix()
            if rel == "bot.toml" and rename:
                data = re.sub(rb'(?m)^name = ".*"', f'name = "{rename}"'.encode(), data)
            if rel == "bot.py" and edit:
                data += f"\n# {edit}\n".encode()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def stopped_line(folder: Path) -> str:
    """The line a stopped `moon host run` ends with, worked out from its SQLite database:
    the games left running (voided at the next start) and the versions caught mid-build."""
    with contextlib.closing(sqlite3.connect(folder / "host.sqlite")) as db:
        games = db.execute("SELECT count(*) FROM games WHERE status = 'running' AND "
                           "kind != 'table'").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM games WHERE status = 'running' AND "
                            "kind = 'table'").fetchone()[0]
        builds = db.execute("SELECT count(*) FROM versions WHERE status IN ('building', "
                            "'validating')").fetchone()[0]
    parts = [f"{games} game(s) in flight aborted: voided and replayed at the next start, "
             "never rated"] if games else []
    if tables:
        parts.append(f"{tables} game(s) at tables cut off: ended at the next start (not "
                     "replayed, never rated)")
    line = "stopped: " + ("; ".join(parts) if parts else "no game was in flight")
    if builds:
        line += f"; {builds} version(s) being built or validated start again at the next start"
    return line + "; every finished game and submission is kept"


# -- a host in process (no server, no loops) --------------------------------------------
def open_in_process(folder: Path, edit: Callable[[str], str] | None = None,
                    database: str | None = None) -> Any:
    """A new competition in ``folder`` (`moon host init --trust-local --seed 1`) opened in
    this process (:func:`arena.host.run.open_host`) on ``database`` (None: its own SQLite
    file), its competition.toml first passed through ``edit``; the caller closes it."""
    from arena.host import init_competition
    from arena.host.run import open_host

    init_competition(folder, trust_local=True, seed=1)
    if edit is not None:
        toml = folder / "competition.toml"
        toml.write_text(edit(toml.read_text()))
    host, _ = open_host(folder, database)
    return host


def add_active_versions(host: Any, names: str, code: str | None = None) -> dict[str, int]:
    """One participant with a bot per letter of ``names``, each with an active version 1
    (``code``: a reference bot whose folder is copied in as the version's code); their
    version ids by name."""
    from arena.host.models import Bot, Participant, Version

    with host.Session.begin() as s:
        p = Participant(name="p", token_hash="x" * 64)
        s.add(p)
        s.flush()
        ids = {}
        for n in names:
            b = Bot(owner_id=p.id, name=n)
            s.add(b)
            s.flush()
            v = Version(bot_id=b.id, number=1, hash=n * 64, archive_sha256="0" * 64,
                        status="active")
            s.add(v)
            s.flush()
            b.active_version_id = v.id
            if code is not None:
                shutil.copytree(host.folder / "reference" / code,
                                host.store / "versions" / v.hash)
            ids[n] = v.id
        return ids


# -- a person at a host's table, by its HTTP requests (no browser) -----------------------
class HeldTable:
    """A table opened on a real host through its form (its CSRF cookie and field, as a
    browser sends them), whose person holds their turn: :meth:`hold` keeps asking for the
    table's state, as an open page does (so the person has not left), and never answers;
    :meth:`leave` leaves the game (a forfeit) and stops asking."""

    def __init__(self, url: str, version: int, opponents: list[str], seat: int = 0) -> None:
        import threading

        self.url = url
        with httpx.Client(base_url=url, timeout=60) as c:
            r = c.get(f"/tables/new?version={version}&seat={seat}")  # a refusal, or the form
            m = re.search(r'name="csrf" value="([^"]+)"', r.text)
            if m is not None:
                r = c.post("/tables", data={"csrf": m.group(1), "version": version,
                                            "seat": seat, "opponent": opponents})
        self.status = r.status_code
        self.refusal = "" if r.status_code == 303 else r.text
        """The refusal's page (the form's, or the POST's) when the table was not opened."""
        self.where = r.headers.get("location", "")
        m = re.match(r"/tables/(table-[0-9a-f]{12})\?k=(\S+)$", self.where)
        self.id, self.key = (m.group(1), m.group(2)) if m else ("", "")
        self.state: dict[str, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def get_state(self, since: int = 0) -> dict[str, Any]:
        r = httpx.get(f"{self.url}/tables/{self.id}/state",
                      params={"k": self.key, "since": since}, timeout=60)
        return r.json() if r.status_code == 200 else {}

    def hold(self) -> HeldTable:
        """Keep the table's page asking (on a thread) from now on."""
        self._thread.start()
        return self

    def _poll(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(httpx.HTTPError, ValueError):
                self.state = self.get_state(self.state.get("version", 0)) or self.state
            self._stop.wait(0.5)

    def thinking(self) -> bool:
        """Whether it is the person's move now (their seat holds its game's slot)."""
        return bool(self.state.get("turn"))

    def leave(self) -> None:
        """Leave the game (a forfeit), then stop asking."""
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(f"{self.url}/tables/{self.id}/act", params={"k": self.key},
                       json={"leave": True}, timeout=60)
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)


# -- bots made for a test ----------------------------------------------------------------
def flaky_bot(counter: Path) -> bytes:
    """Plays like the random bot in its validation (the checks of `moon bot check` with 3
    players: a hand against itself, 3 runs; no trumps and doubles as trumps, 2 each; its own
    bid, 1; a dropped stream, 1; a whole game, 1: 10 runs), then
    crashes at the start of every later game: it counts its runs in ``counter``, one byte
    appended a run (atomic, so the 3 runs started at once each get their own number)."""
    random_py = (EXAMPLES / "random" / "bot.py").read_text()
    bot_py = (f"import os, sys\nfd = os.open({str(counter)!r}, "
              "os.O_WRONLY | os.O_APPEND | os.O_CREAT)\nos.write(fd, b'x')\n"
              "n = os.lseek(fd, 0, os.SEEK_CUR) - 1\nos.close(fd)\n"
              "if n >= 10:\n    print('crashing on purpose', file=sys.stderr)\n"
              "    sys.exit(1)\n" + random_py)
    files = {"bot.toml": b'name = "flaky"\nrun = "{python} bot.py"\n',
             "bot.py": bot_py.encode()}
    return tar_files(files)


def sleepy_example(folder: Path, example: str, seconds: float, flag: Path | None = None,
                   *, whole_games: bool = False) -> Path:
    """The example bot ``example`` copied to ``folder``, sleeping ``seconds`` before each
    decision (while the file ``flag`` exists, if one is given; with ``whole_games``, in
    the games where it existed at the bot's first decision: a game is slow throughout or
    not at all): a sleep costs no CPU, so its games last longer and a host playing them
    burns less; ``folder``."""
    shutil.copytree(EXAMPLES / example, folder,
                    ignore=shutil.ignore_patterns("__pycache__"))
    source = (folder / "bot.py").read_text()
    assert "    def act(self, obs):\n" in source and "\nfrom moon_sdk import" in source
    sleep = f"        time.sleep({seconds})\n"
    if flag is not None and whole_games:  # a bot process plays one game
        sleep = ("        global SLOW\n        if SLOW is None:\n"
                 f"            SLOW = os.path.exists({str(flag)!r})\n"
                 "        if SLOW:\n    " + sleep)
    elif flag is not None:
        sleep = f"        if os.path.exists({str(flag)!r}):\n    " + sleep
    (folder / "bot.py").write_text(source.replace(
        "    def act(self, obs):\n", "    def act(self, obs):\n" + sleep, 1)
        .replace("\nfrom moon_sdk import",
                 "\nimport os\nimport time\n\nSLOW = None\nfrom moon_sdk import", 1))
    return folder


def sleepy_weak(folder: Path, flag: Path, seconds: float) -> Path:
    """The weak example bot copied to ``folder``, sleeping ``seconds`` before each decision
    while the file ``flag`` exists (a game lasts longer, on a test's word); ``folder``."""
    return sleepy_example(folder, "weak", seconds, flag)


# -- a deal given away: what a visitor reads, against a board's hands (docs/rules.md) ------
TILE = re.compile(r"(?<![\w-])([0-6])-([0-6])(?![\w-])")
"""A tile's name as the pages and the records write it (``6-4``), not part of a longer
word (``s5-3``, a game id) or number (a date)."""


def board_hands(seed: int, rules: dict[str, Any], max_hands: int
                ) -> tuple[list[frozenset[str]], list[frozenset[str]]]:
    """The board of seed ``seed`` from the rules engine (``rules``: a ruleset's table):
    every seat's dealt hand of every hand a game of it can deal (hands 0 to ``max_hands``
    + 1: either numbering), and each hand's tiles with the widow's (what a bidder holds
    before the discard)."""
    from moon_sdk.rules import Ruleset
    from moon_sdk.rules.state import deal
    from moon_sdk.rules.tiles import tile_name, tiles_of

    ruleset = Ruleset.from_dict(rules)
    dealt, with_widow = [], []
    for n in range(max_hands + 2):
        hands, widow = deal(seed, n, ruleset)
        for h in hands:
            dealt.append(frozenset(tile_name(t) for t in tiles_of(h)))
            with_widow.append(frozenset(tile_name(t) for t in tiles_of(h | widow)))
    return dealt, with_widow


def _tile(hi: str, lo: str) -> str:
    a, b = sorted((int(hi), int(lo)), reverse=True)
    return f"{a}-{b}"


def _line_groups(text: str) -> list[list[str]]:
    return [[_tile(*m.groups()) for m in TILE.finditer(line)] for line in text.splitlines()]


def tile_groups(body: str) -> list[list[str]]:
    """The runs of tiles ``body`` shows together, as a hand is shown: a JSON list of
    tiles (an API answer, an event's data), adjacent tiles of a page (the replay's
    hands), the tiles on one line of text (a log); a string inside JSON is text."""
    import json

    out: list[list[str]] = []

    def walk(x: object) -> None:
        if isinstance(x, list):
            if x and all(isinstance(y, str) and TILE.fullmatch(y) for y in x):
                out.append([_tile(*TILE.fullmatch(y).groups()) for y in x])  # type: ignore
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
        elif isinstance(x, str):
            out.extend(_line_groups(x))

    for chunk in [body, *re.findall(r"(?m)^data: (.*)$", body)]:
        try:
            walk(json.loads(chunk))
        except ValueError:
            pass
    run: list[str] = []
    for piece in re.findall(r"<[^>]+>|[^<]+", body):
        m = re.match(r'<span class="dom[^"]*" data-tile="([^"]+)"', piece)
        if m and TILE.fullmatch(m.group(1)):
            run.append(_tile(*TILE.fullmatch(m.group(1)).groups()))  # type: ignore
        elif piece.startswith(("<i ", "</i>", "</span>")) or not piece.strip():
            continue
        else:
            out.append(run)
            run = []
            if not piece.startswith("<"):
                out.extend(_line_groups(piece))
    out.append(run)
    return out


def leaks(body: str, seed: int, dealt: list[frozenset[str]]) -> list[str]:
    """What of a board ``body`` gives away: its seed, or one of the hands ``dealt`` shown
    as a group of tiles (a bidder's, with the widow tile, too)."""
    found = [f"seed {seed}"] if str(seed) in body else []
    for g in tile_groups(body):
        if 7 <= len(set(g)) <= 8:
            found += [f"hand {sorted(h)}" for h in dealt if h <= set(g)]
    return found


def crawl(url: str, game_ids: list[str], received: dict[str, float] | None = None
          ) -> dict[str, str]:
    """Every address a visitor (no token) reaches on the host at ``url``: the pages linked
    from ``/`` (breadth first, up to 300), the GETs of the API's OpenAPI schema (each
    game's for the games ``game_ids``, each bot's and version's for those the games list
    shows), and the event stream of each game of ``game_ids`` (read for up to 2 s);
    ``{address: body}``. ``received``, when given, gets when each answer had come in
    (``time.time()``)."""
    seen: dict[str, str] = {}
    at = received if received is not None else {}
    with httpx.Client(base_url=url, timeout=30) as client:
        def get(path: str) -> httpx.Response:
            # a visitor over the host's rate (429) waits as told and asks again: an
            # answer that is a refusal would check nothing
            for _ in range(20):
                r = client.get(path)
                if r.status_code != 429:
                    return r
                time.sleep(float(r.headers.get("Retry-After") or 1))
            raise AssertionError(f"{path}: refused (429) 20 times")

        todo = ["/"]
        while todo and len(seen) < 300:
            path = todo.pop(0)
            if path in seen:
                continue
            r = get(path)
            seen[path], at[path] = r.text, time.time()
            if "text/html" in r.headers.get("content-type", ""):
                for href in re.findall(r'href="(/[^"#]*)"', r.text):
                    href = href.replace("&amp;", "&")
                    if not href.startswith(("/static", "/signout")) \
                            and "/events" not in href and href not in seen:
                        todo.append(href)
        games = get("/api/games?limit=500").json()["games"]
        names = sorted({x["bot"] for g in games for x in g["seats"]})
        versions = sorted({x["version_id"] for g in games for x in g["seats"]
                           if x["version_id"]})
        for template, ops in get("/openapi.json").json()["paths"].items():
            if "get" not in ops:
                continue
            fills: list[dict[str, object]] = [{}]
            for key, values in (("game_id", game_ids), ("seat", [0, 1, 2]),
                                ("name", names), ("version_id", versions)):
                if "{" + key + "}" in template:
                    fills = [{**f, key: v} for f in fills for v in values]
            for f in fills:
                path = template.format(**f)
                queries = [""] if f else ["", "?limit=500", "?status=finished&limit=500",
                                          "?kind=final&limit=500"]
                for query in queries:
                    if path + query not in seen:
                        seen[path + query] = get(path + query).text
                        at[path + query] = time.time()
        for game_id in game_ids:
            path = f"/games/{game_id}/events"
            chunks: list[str] = []
            try:
                with client.stream("GET", path, timeout=5) as r:
                    deadline = time.monotonic() + 2
                    for chunk in r.iter_text():
                        chunks.append(chunk)
                        if time.monotonic() > deadline or "event: end" in chunk:
                            break
            except httpx.HTTPError:
                pass
            seen[path], at[path] = "".join(chunks), time.time()
    return seen
