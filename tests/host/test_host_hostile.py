"""A hostile participant against a real `moon host run` over HTTP: names that copy
another's in a different case or a reference bot's, ids and offsets too large for the
database, forged session cookies and CSRF values that are not ASCII. Each must get a clear
4xx, never a 500, and nobody's name or bot may be taken."""

from __future__ import annotations

import concurrent.futures
import io
import os
import re
import tarfile
from pathlib import Path

import httpx
import pytest
from host_support import (
    EXAMPLES,
    HostProcess,
    make_competition,
    sleepy_example,
    tar_files,
    tar_folder,
)

TOO_BIG = str(2**63)  # one more than a database integer holds
HUGE = "9" * 30


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory):
    folder = make_competition(tmp_path_factory.mktemp("hostile") / "comp", concurrency=1)
    # every request here is from 127.0.0.1, some hundred in a few seconds (27 registrations
    # at once, four times): the limit of one address's requests (its own tests:
    # tests/host/test_visitors.py, test_host_crowd.py) is not this module's subject, and
    # a host that answers quickly met it (429s)
    toml = folder / "competition.toml"
    text = toml.read_text()
    assert "per_client_per_s = 20 " in text and re.search(r"(?m)^burst = 60 ", text)
    toml.write_text(re.sub(r"(?m)^burst = 60 ", "burst = 1000 ", text.replace(
        "per_client_per_s = 20 ", "per_client_per_s = 1000 ")))
    h = HostProcess(folder, None).start()
    try:
        yield h
    finally:
        h.stop()


@pytest.fixture(scope="module")
def thinker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The random bot thinking 0.1 s a decision: the bots uploaded here that pass their
    validation then play the module's host's rated games for as long as it runs, and no
    test here looks at a game; thinking, they play a few games a minute, not one a
    second (the host's CPU was most of the module's)."""
    return sleepy_example(tmp_path_factory.mktemp("thinker") / "random", "random", 0.1)


def register(host: HostProcess, name: str) -> httpx.Response:
    invite = host.ok("POST", "/api/invites", host.admin)["code"]
    return host.call("POST", "/api/register", json={"name": name, "invite": invite})


# The two versions that fail come first: the host builds and validates two versions at a
# time, and a version of the thinking bot takes some 25 s to validate; these two need
# not wait behind three of them (they did: 45 s).
def test_reason_and_log_never_show_where_the_competition_lives(host: HostProcess) -> None:
    """A build that prints its folder: the owner reads why it failed and its log, with the
    host's folder written as <competition> (with it and a version's hash one could name
    the image built from another participant's Dockerfile)."""
    carol = host.register("carol")
    folder = str(host.folder.resolve())
    data = tar_folder(EXAMPLES / "random", rename="whereami")
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        files = {m.name: tf.extractfile(m).read() for m in tf if m.isfile()}  # type: ignore
    files["bot.toml"] += b'build = "echo built in $(pwd) >&2; echo in $(pwd); exit 3"\n'
    r = host.submit(carol, tar_files(files))
    assert r.status_code == 201, r.text
    v = host.wait_version(carol, r.json()["id"])
    assert v["status"] == "rejected", v
    log = host.call("GET", f"/api/versions/{v['id']}/log", carol).text
    hash_ = v["hash"]
    assert f"<competition>/store/versions/{hash_}" in log, log
    for text in (v["reason"], log, host.call("GET", f"/versions/{v['id']}").text):
        assert folder not in text, text


def test_a_crash_log_does_not_show_where_the_arena_is_installed(host: HostProcess) -> None:
    """A bot that crashes in its first turn: its traceback (through the SDK's bot loop) is
    in its owner's log and reason, with the arena's own install folders written as
    <arena>: the host's layout is not a participant's business."""
    from host_support import ROOT

    dave = host.register("dave")
    with tarfile.open(fileobj=io.BytesIO(tar_folder(EXAMPLES / "random", rename="crasher"))
                      ) as tf:
        files = {m.name: tf.extractfile(m).read() for m in tf if m.isfile()}  # type: ignore
    files["bot.py"] = files["bot.py"].replace(b"    def act(self, obs):\n",
                                              b"    def act(self, obs):\n        1 / 0\n")
    assert b"1 / 0" in files["bot.py"]
    r = host.submit(dave, tar_files(files))
    assert r.status_code == 201, r.text
    v = host.wait_version(dave, r.json()["id"])
    assert v["status"] == "rejected", v
    log = host.call("GET", f"/api/versions/{v['id']}/log", dave).text
    assert "ZeroDivisionError" in log and "<arena>/" in log and "moon_sdk" in log, log
    for text in (v["reason"], log, host.call("GET", f"/versions/{v['id']}", dave).text):
        assert str(ROOT) + "/" not in text, text


def test_names_are_one_name_in_any_case(host: HostProcess, thinker: Path) -> None:
    assert register(host, "alice").status_code == 201
    for name in ("Alice", "ALICE", "aLiCe", "Admin"):
        r = register(host, name)
        assert r.status_code == 409, (name, r.text)
        assert "taken" in r.json()["detail"]
    alice = host.register("alice2")
    bob = host.register("bob")
    r = host.submit(alice, tar_folder(thinker, rename="bestbot"))
    assert r.status_code == 201, r.text
    # bob cannot make "BestBot" next to alice's "bestbot" (it would read as hers)
    for name in ("BestBot", "BESTBOT", "bestbot"):
        r = host.submit(bob, tar_folder(thinker, rename=name))
        assert r.status_code == 409, (name, r.text)
        assert "belongs to another participant" in r.json()["detail"]
    # alice herself must keep her bot's spelling: one bot, one name
    r = host.submit(alice, tar_folder(thinker, rename="BestBot", edit="v2"))
    assert r.status_code == 409 and "'bestbot'" in r.json()["detail"], r.text
    bots = {b["name"]: b["owner"] for b in host.ok("GET", "/api/bots")}
    assert {n: o for n, o in bots.items() if n.lower() == "bestbot"} == {"bestbot": "alice2"}


def test_reference_bot_names_are_reserved(host: HostProcess) -> None:
    mallory = host.register("mallory")
    for name in ("reference-random", "Reference-Random"):
        r = host.submit(mallory, tar_folder(EXAMPLES / "random", rename=name))
        assert r.status_code == 409, (name, r.text)
        assert "reference bot" in r.json()["detail"]
    assert "reference-random" not in {b["name"].lower() for b in host.ok("GET", "/api/bots")}


def test_names_that_read_alike_are_one_name(host: HostProcess, thinker: Path) -> None:
    """I (capital i), l and 1 read alike in most fonts, so do O and 0, rn and m: a
    participant or bot name that reads as another's is taken, as one in another case is."""
    assert register(host, "millie").status_code == 201
    for name, like in (("mi1lie", "millie"), ("miIlie", "millie"), ("rniIlie", "millie"),
                       ("adrnin", "admin"), ("ADM1N", "admin")):
        r = register(host, name)
        assert r.status_code == 409, (name, r.text)
        assert f"looks like {like!r}" in r.json()["detail"], r.text
    assert register(host, "mollie").status_code == 201  # o is no l: another name
    millie = host.register("millie-2")
    rival = host.register("rival")
    r = host.submit(millie, tar_folder(thinker, rename="sharpbot"))
    assert r.status_code == 201, r.text
    for name in ("sharpb0t", "SHARPB0T", "sharpbot"):
        r = host.submit(rival, tar_folder(thinker, rename=name))
        assert r.status_code == 409, (name, r.text)
        assert "another participant" in r.json()["detail"], r.text
    r = host.submit(rival, tar_folder(thinker, rename="reference-randorn"))
    assert r.status_code == 409 and "reference bot" in r.json()["detail"], r.text
    # her own bots may read alike: nobody else's name is taken by them
    r = host.submit(millie, tar_folder(thinker, rename="sharpb0t", edit="own"))
    assert r.status_code == 201, r.text
    bots = {b["name"]: b["owner"] for b in host.ok("GET", "/api/bots")}
    assert {n: o for n, o in bots.items() if n.lower().startswith("sharp")} == {
        "sharpbot": "millie-2", "sharpb0t": "millie-2"}


@pytest.mark.parametrize("path", [
    f"/api/versions/{TOO_BIG}", f"/api/versions/{HUGE}", f"/api/versions/{TOO_BIG}/log",
    f"/api/games?version={TOO_BIG}", f"/api/games?offset={TOO_BIG}",
    f"/api/games?offset={HUGE}", f"/versions/{TOO_BIG}", f"/versions/{HUGE}"])
def test_numbers_too_large_for_the_database_are_a_clear_422(host: HostProcess,
                                                            path: str) -> None:
    r = host.call("GET", path)
    if path.startswith("/api"):
        assert r.status_code == 422, (path, r.status_code, r.text[:200])
        assert "less than or equal" in r.text
    else:  # a page: no version can have that id, so there is no page (the pages' 404)
        assert r.status_code == 404, (path, r.status_code, r.text[:200])
        assert "<h1>Not found</h1>" in r.text


def test_forged_cookies_and_csrf_values(host: HostProcess) -> None:
    # digits that are not ASCII ('²' is a digit to str.isdigit), a signature that is not
    # ASCII: the visitor is simply not signed in
    for value in (b"\xb2.1.abc", b"1.\xb2.abc", b"1.1.\xe9\xe9", HUGE.encode() + b".1.ab"):
        r = httpx.get(host.url + "/", headers=[(b"cookie", b"moon_session=" + value)])
        assert r.status_code == 200, (value, r.status_code)
        assert "Sign out" not in r.text
    # a CSRF cookie or field that is not ASCII: compared like any other (403 when they
    # differ; when they match, the sign-in goes on to refuse the unknown token: 401)
    for cookie, field, status in (("x" * 40, "é" * 40, 403), ("é" * 40, "x" * 40, 403),
                                  ("é" * 40, "é" * 40, 401)):
        r = httpx.post(host.url + "/signin", data={"csrf": field, "token": "moon_x"},
                       headers=[(b"cookie", b"moon_csrf=" + cookie.encode("latin-1"))])
        assert r.status_code == status, (cookie, field, r.status_code, r.text[:200])


@pytest.mark.parametrize("vowel", "aeou")
def test_names_that_read_alike_sent_at_once_make_one_participant(host: HostProcess,
                                                                 vowel: str) -> None:
    # 27 spellings of one name, each another name to the database (no two alike in lower
    # case): l, i or 1 in its first, third and fifth letters
    names = [f"{a}{vowel}{b}{vowel}{c}" for a in "li1" for b in "li1" for c in "li1"]
    invites = [host.ok("POST", "/api/invites", host.admin)["code"] for _ in names]
    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        answers = list(pool.map(lambda ni: host.call("POST", "/api/register", json={
            "name": ni[0], "invite": ni[1]}), zip(names, invites, strict=True)))
    codes = sorted(r.status_code for r in answers)
    assert codes == [201] + [409] * (len(names) - 1), [(r.status_code, r.text[:120])
                                                       for r in answers]


def test_an_invite_code_that_is_no_text_is_refused(host: HostProcess) -> None:
    """JSON may carry a lone surrogate, which has no UTF-8: the code is simply not valid
    (it was a 500)."""
    for invite in ("\\ud800", "a\\udfffb"):
        r = httpx.post(host.url + "/api/register", content=f'{{"name": "sur", "invite": '
                       f'"{invite}"}}', headers={"Content-Type": "application/json"})
        assert r.status_code == 403, (invite, r.status_code, r.text)
        assert "not valid" in r.json()["detail"]


def test_cookies_are_secure_over_https(host: HostProcess) -> None:
    """Behind a TLS proxy on the same machine (X-Forwarded-Proto: https) the session and
    CSRF cookies are Secure, so a browser never sends them over plain HTTP; over plain
    HTTP itself they cannot be (the browser would drop them)."""
    token = host.register("carol-secure")
    for proto, secure in (("https", True), ("http", False)):
        r = httpx.get(host.url + "/signin", headers={"X-Forwarded-Proto": proto})
        csrf = [v for k, v in r.headers.multi_items()
                if k == "set-cookie" and v.startswith("moon_csrf=")]
        assert len(csrf) == 1 and ("; secure" in csrf[0].lower()) == secure, csrf
        field = re.search(r'name="csrf" value="([^"]+)"', r.text)
        assert field is not None
        r = httpx.post(host.url + "/signin", data={"csrf": field.group(1), "token": token},
                       headers={"X-Forwarded-Proto": proto,
                                "Cookie": f"moon_csrf={field.group(1)}"})
        assert r.status_code == 303, r.text[:300]
        session = [v for k, v in r.headers.multi_items()
                   if k == "set-cookie" and v.startswith("moon_session=")]
        assert len(session) == 1 and ("; secure" in session[0].lower()) == secure, session


def test_arena_images_cannot_be_named(host: HostProcess) -> None:
    """An image the arena built from another participant's Dockerfile holds their bot:
    naming it (or any image by id) in bot.toml is refused at the upload."""
    mallory = host.register("mallory2")
    for image in ("moon-arena-bot/bestbot-0123456789:latest", "docker.io/moon-arena-bot/x",
                  "moon-arena/base:1", "sha256:0123456789abcdef", "0123456789ab"):
        data = tar_files({"bot.toml": f'name = "peek"\nrun = "cat /app/bot.py"\n'
                                      f'image = "{image}"\n'.encode()})
        r = host.submit(mallory, data)
        assert r.status_code == 400 and "the arena's own image" in r.json()["detail"], \
            (image, r.text)


def test_large_bodies_are_refused_before_they_are_read(host: HostProcess) -> None:
    """Only a submission's archive may be large: a 1 MB JSON registration or sign-in form
    is a 413 by its Content-Length (read, it would sit in memory and be parsed on the
    event loop that keeps the games' clocks); a body without a length is a 411."""
    big = b'{"name": "zed", "invite": "' + b"a" * (1 << 20) + b'"}'
    r = host.call("POST", "/api/register", content=big,
                  headers={"content-type": "application/json"})
    assert r.status_code == 413 and "over 64 KB" in r.json()["detail"], r.text[:200]
    r = httpx.post(host.url + "/signin", data={"csrf": "x" * 40, "token": "a" * (1 << 20)})
    assert r.status_code == 413, r.text[:200]

    def chunks():
        yield b'{"name": "zed", '
        yield b'"invite": "x"}'
    r = host.call("POST", "/api/register", content=chunks(),
                  headers={"content-type": "application/json"})
    assert r.status_code == 411, r.text[:200]
    # a small body is read as before (an unknown invite: 403)
    r = host.call("POST", "/api/register", json={"name": "zed", "invite": "x"})
    assert r.status_code == 403, r.text


def test_log_of_this_run_has_no_traceback(host: HostProcess, tmp_path: Path) -> None:
    """Everything above was refused cleanly: the host logged no unhandled error."""
    text = host.log.read_text()
    assert "Traceback" not in text, text[-3000:]


def test_an_invite_code_makes_one_participant_even_sent_at_once(tmp_path: Path,
                                                                 database: str | None) -> None:
    """Twelve registrations with one invite code, all at once: exactly one participant."""
    import concurrent.futures

    folder = make_competition(tmp_path / "comp", concurrency=1)
    h = HostProcess(folder, database).start()
    try:
        for attempt in range(3):
            invite = h.ok("POST", "/api/invites", h.admin)["code"]

            def register_as(i: int, invite: str = invite, attempt: int = attempt) -> int:
                return h.call("POST", "/api/register", json={
                    "name": f"racer{attempt}x{i}", "invite": invite}).status_code
            with concurrent.futures.ThreadPoolExecutor(12) as pool:
                codes = sorted(pool.map(register_as, range(12)))
            assert codes == [201] + [403] * 11, codes
    finally:
        h.stop()


KILLED_WHILE_STARTING = """
import os, signal, multiprocessing
from arena.host.batchworker import batch_pool
pool = batch_pool()
pool.submit(os.getpid)  # spawns the worker, which takes a second or so to start
print(*[p.pid for p in multiprocessing.active_children()], flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # before the worker could ask to die with us
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_batch_worker_dies_with_a_host_killed_while_it_starts() -> None:
    """The batch fit's worker of a host killed (-9) while the worker was starting, before
    it asked for the parent-death signal: it exits on its own (it waited on its queue
    forever, about 120 MB each, with its resource tracker)."""
    import subprocess
    import sys

    from host_support import ROOT, wait_for

    out = subprocess.run([sys.executable, "-c", KILLED_WHILE_STARTING], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    pids = [int(x) for x in out.stdout.split()]
    assert pids, out
    try:
        wait_for(lambda: not any(alive(p) for p in pids), 60, "the orphaned worker to exit")
    finally:
        for p in pids:
            if alive(p):
                os.kill(p, 9)


def test_reasons_kept_from_before_lose_the_folder_at_the_next_start(tmp_path: Path) -> None:
    """A reason written with the host's folder in it (as hosts wrote them before) reads
    <competition> after a restart."""
    import sqlite3

    folder = make_competition(tmp_path / "comp", concurrency=1)
    h = HostProcess(folder, None).start()
    try:
        dave = h.register("dave")
        vid = h.submit(dave, tar_folder(EXAMPLES / "random", rename="old")).json()["id"]
    finally:
        h.kill9()  # at once, not after its validation
    where = str(folder.resolve())
    with sqlite3.connect(folder / "host.sqlite") as db:
        db.execute("UPDATE versions SET status = 'rejected', reason = ? WHERE id = ?",
                   (f"build failed: see {where}/store/logs/version-{vid}.log", vid))
    h.start()
    try:
        v = h.ok("GET", f"/api/versions/{vid}", dave)
        assert v["reason"] == f"build failed: see <competition>/store/logs/version-{vid}.log"
    finally:
        h.kill9()


def test_a_link_to_a_folder_is_part_of_the_version(host: HostProcess) -> None:
    """Two uploads that differ only in where a link to a folder points (``lib -> a`` or
    ``lib -> b``) run different code, so they are two versions, each stored with its own
    link; the link used to be no part of the version: the second upload was answered as
    the first version (200), its link dropped, and `moon submit` packed no such link."""
    from arena.host.submissions import pack

    erin = host.register("erin")

    def upload(target: str) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            for name, data in {"bot.toml": b'name = "linked"\nrun = "python lib/x.py"\n',
                               "a/x.py": b"print('a')\n", "b/x.py": b"print('b')\n"}.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            info = tarfile.TarInfo("lib")
            info.type, info.linkname = tarfile.SYMTYPE, target
            tf.addfile(info)
        return buf.getvalue()

    first = host.submit(erin, upload("a"))
    assert first.status_code == 201, first.text
    second = host.submit(erin, upload("b"))
    assert second.status_code == 201, second.text
    va, vb = first.json(), second.json()
    assert (va["number"], vb["number"]) == (1, 2) and va["hash"] != vb["hash"]
    for v, target in ((va, "a"), (vb, "b")):
        assert os.readlink(host.folder / "store" / "versions" / v["hash"] / "lib") == target
    again = host.submit(erin, upload("a"))
    assert again.status_code == 200 and again.json()["id"] == va["id"], again.text
    # what `moon submit` uploads from a folder holds the link too
    folder = host.folder.parent / "linked"
    with tarfile.open(fileobj=io.BytesIO(upload("b"))) as tf:
        tf.extractall(folder, filter="data")
    with tarfile.open(fileobj=io.BytesIO(pack(folder))) as tf:
        links = {m.name: m.linkname for m in tf if m.issym()}
    assert links == {"lib": "b"}
