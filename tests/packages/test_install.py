"""The wheels, installed into fresh virtual environments outside the repository (no source
tree on sys.path, the working folder a temporary one, the packages from the built wheels
and the wheelhouse only), do what a user without a clone does: `moon new-bot`, `moon play`
with the bundled example bots, a small `moon ladder run`, `moon bot check`; and a bot
whose environment has nothing but `pip install -r requirements.txt` (the one line
`moon-sdk`) plays a whole game."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from packages_support import ROOT, Dists, make_venv, run_in, tracked

from arena.bots.starters import LANGUAGES, PROTO_FOLDER
from arena.records.record import load_record, verify_record


@pytest.fixture(scope="module")
def arena_venv(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with `pip install moon-arena` (and so moon-sdk)."""
    return make_venv(tmp_path_factory.mktemp("arena-install") / "venv", dists, "moon-arena")


@pytest.fixture(scope="module")
def sdk_venv(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with a bot's requirements.txt installed: `moon-sdk`."""
    where = tmp_path_factory.mktemp("sdk-install")
    (where / "requirements.txt").write_text("moon-sdk\n")
    return make_venv(where / "venv", dists, "-r", str(where / "requirements.txt"))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The working folder of a test: a temporary folder outside the repository."""
    assert ROOT not in tmp_path.parents
    return tmp_path


def _python(venv: Path, work: Path, code: str) -> str:
    done = run_in(venv, work, "python", "-c", code)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _normal(name: str) -> str:
    """A distribution name in its normal form (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_installed_packages_come_from_the_wheels(arena_venv: Path, work: Path) -> None:
    found = json.loads(_python(arena_venv, work, (
        "import json, sys, arena, moon_sdk, importlib.util as u; print(json.dumps("
        "[arena.__file__, moon_sdk.__file__, sys.path, u.find_spec('moon') is None]))")))
    arena_file, sdk_file, path, no_moon = found
    site = str(arena_venv / "lib")
    assert arena_file.startswith(site) and sdk_file.startswith(site)
    assert not [p for p in path if p.startswith(str(ROOT))], path
    assert no_moon, "a top-level package `moon` is installed"
    version = _ok(run_in(arena_venv, work, "moon", "--version"))
    import arena

    assert arena.__version__ in version


def test_a_bot_author_gets_no_web_framework_and_is_told_how_to_host(arena_venv: Path,
                                                                     work: Path) -> None:
    """`pip install moon-arena` brings play, ladders, matches, the sandbox and `moon bot
    check`, without the host's web framework or database driver; `moon host run` then says
    in one line what to install (`moon-arena[host]`)."""
    found = json.loads(_python(arena_venv, work, (
        "import json, importlib.util as u; print(json.dumps({m: u.find_spec(m) is not None "
        "for m in ('fastapi', 'uvicorn', 'sqlalchemy', 'alembic', 'psycopg', 'starlette')}))")))
    assert not any(found.values()), found
    _ok(run_in(arena_venv, work, "moon", "host", "init", "comp"))
    done = run_in(arena_venv, work, "moon", "host", "run", "comp")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: moon host needs the competition host's packages ('sqlalchemy' is not "
        "installed here): pip install 'moon-arena[host]'"], done.stderr


def test_new_bot_play_and_ladder_without_a_clone(arena_venv: Path, work: Path) -> None:
    out = _ok(run_in(arena_venv, work, "moon", "new-bot", "mybot"))
    assert "made ./mybot (python)" in out
    # the example bots by name, found in the installed package
    out = _ok(run_in(arena_venv, work, "moon", "play", "./mybot", "heuristic", "random",
                     "--seed", "11", "--records", "records"))
    assert "winner:" in out
    [path] = (work / "records").glob("*.json")
    record = load_record(path)
    assert verify_record(record) == []
    assert [s["name"] for s in record["seats"]] == ["mybot", "heuristic", "random"]
    assert record["faults"] == []
    # a small ladder: 3 bots, 1 board, all 6 seatings
    _ok(run_in(arena_venv, work, "moon", "ladder", "run", "--bot", "./mybot", "--bot",
               "heuristic", "--bot", "random", "--boards", "1", "-j", "1", "--seed", "5",
               "--results", "ladder.sqlite", "--bootstrap", "20"))
    shown = json.loads(_ok(run_in(arena_venv, work, "moon", "ladder", "show", "ladder.sqlite",
                                  "--format", "json", "--bootstrap", "20")))
    assert shown["games"] == 6
    folders = {b["name"]: b["folder"] for b in shown["ladder"]["bots"]}
    assert folders["mybot"] == str(work / "mybot")
    assert folders["heuristic"].startswith(str(arena_venv / "lib"))


def test_unknown_bot_lists_the_bundled_examples(arena_venv: Path, work: Path) -> None:
    done = run_in(arena_venv, work, "moon", "play", "nosuchbot", "heuristic", "random")
    assert done.returncode == 2
    names = sorted(p.split("/")[1] for p in tracked("example_bots") if p.endswith("/bot.toml"))
    listed = re.search(r"an example bot \(([^)]*)\)", done.stderr.replace("\n", " "))
    assert listed, done.stderr
    assert re.split(r",\s*", listed[1].replace("│", "").strip()) == names
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "python"])
def test_new_bot_in_other_languages_from_the_wheel(arena_venv: Path, work: Path,
                                                   lang: str) -> None:
    """Every template, nested folders too, comes out of the installed package; the bots
    that carry the protocol get the bundled .proto files (Go: the example bot's generated
    code and go.sum), the same bytes as the repository's."""
    _ok(run_in(arena_venv, work, "moon", "new-bot", f"b{lang}", "--lang", lang))
    bot = work / f"b{lang}"
    template = f"arena/bots/templates/{lang}/"
    for path in tracked(template):
        rel = Path(path[len(template):])
        made = bot / (rel.parent / ".gitignore" if rel.name == "gitignore" else rel)
        assert made.is_file(), f"{made} is missing"
    copies = [("proto/moon/v1", bot / PROTO_FOLDER[lang] / "moon" / "v1")] \
        if lang in PROTO_FOLDER else []
    if lang == "go":
        copies.append(("example_bots/go-heuristic/gen/moonv1", bot / "gen" / "moonv1"))
        assert (bot / "go.sum").read_bytes() == \
            (ROOT / "example_bots/go-heuristic/go.sum").read_bytes()
    for source, dest in copies:
        files = tracked(source)
        assert files
        for p in files:
            assert (dest / Path(p).name).read_bytes() == (ROOT / p).read_bytes(), p


def test_bot_check_without_a_clone(arena_venv: Path, work: Path) -> None:
    """A fresh starter passes `moon bot check` against the example bots bundled in the
    wheel (3 and 4 players, the hands under no trumps and doubles as trumps and its own bid
    beside the scripted seats the wheel carries, the dropped stream, a whole game)."""
    _ok(run_in(arena_venv, work, "moon", "new-bot", "checked"))
    out = _ok(run_in(arena_venv, work, "moon", "bot", "check", "./checked"))
    assert out.rstrip().endswith("checked: passed")
    assert sum(line.startswith("ok ") for line in out.splitlines()) == 9, out
    assert "ok   no trumps: a scripted seat" in out and "ok   its own bid" in out, out


def test_sdk_alone_installs_grpcio_and_protobuf_only(sdk_venv: Path, work: Path) -> None:
    """requirements.txt `moon-sdk` installs moon-sdk, grpcio, protobuf and what grpcio
    itself requires (read from grpcio's own metadata): no arena, numpy or docker."""
    found = json.loads(_python(sdk_venv, work, (
        "import json, importlib.metadata as m; print(json.dumps({"
        "'installed': [d.metadata['Name'] for d in m.distributions()],"
        "'grpcio': m.requires('grpcio') or []}))")))
    installed = {_normal(n) for n in found["installed"]}
    grpcio_needs = {_normal(re.match(r"[A-Za-z0-9_.-]+", r)[0])
                    for r in found["grpcio"] if "extra ==" not in r}
    assert installed == {"moon-sdk", "grpcio", "protobuf"} | grpcio_needs
    for absent in ("moon-arena", "numpy", "docker", "scipy"):
        assert absent not in installed
    _python(sdk_venv, work, "import moon_sdk.rules, moon_sdk.v1.bot_pb2; from moon_sdk import "
            "Bot, run")
    done = run_in(sdk_venv, work, "python", "-c", "import arena")
    assert done.returncode != 0 and "No module named 'arena'" in done.stderr


def test_bot_with_only_the_sdk_plays_a_game(arena_venv: Path, sdk_venv: Path,
                                            work: Path) -> None:
    """A bot folder from `moon new-bot`, run by the SDK-only environment's Python, plays a
    whole game against the bundled example bots."""
    _ok(run_in(arena_venv, work, "moon", "new-bot", "sdkbot"))
    manifest = work / "sdkbot" / "bot.toml"
    text = manifest.read_text()
    assert 'run = "{python} bot.py"' in text
    manifest.write_text(text.replace("{python}", str(sdk_venv / "bin" / "python")))
    _ok(run_in(arena_venv, work, "moon", "play", "./sdkbot", "random", "heuristic",
               "--seed", "12", "--records", "records"))
    [path] = (work / "records").glob("*.json")
    record = load_record(path)
    assert verify_record(record) == []
    assert record["faults"] == []
    assert record["result"]["termination"] in ("target", "moon")
    assert any(p["seat"] == 0 for h in record["hands"] for p in h["plays"])


def test_a_new_bots_readme_points_only_to_what_the_user_has(arena_venv: Path,
                                                            work: Path) -> None:
    """The README `moon new-bot` writes names files that exist for a user without a clone
    (no docs/, no example_bots/ of a checkout): each path in it is there, and the command it
    gives for obs's fields runs."""
    _ok(run_in(arena_venv, work, "moon", "new-bot", "readbot"))
    readme = (work / "readbot" / "README.md").read_text()
    paths = [p for p in re.findall(r"`([^`\s]+)`", readme)
             if "/" in p and re.search(r"\.\w+$", p)]
    assert paths, readme
    for p in paths:
        assert (work / "readbot" / p).exists() or Path(p).is_absolute() and Path(p).exists(), p
    assert "docs/" not in readme
    shown = _ok(run_in(arena_venv, work, "python", "-m", "pydoc", "moon_sdk.rules.Observation"))
    assert "legal_actions" in shown
