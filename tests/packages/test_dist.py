"""The distributions `make dist` builds (tools/dist.py): what the wheels and sdists hold,
compared with what git tracks, and their metadata. The SDK's wheel depends on grpcio and
protobuf only, so a bot's requirements.txt is the one line `moon-sdk`."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import tarfile
import zipfile
from pathlib import Path

import moon_sdk
import pytest
from packages_support import ROOT, Dists, tracked, wheel_metadata

import arena
from arena.bots.resources import BUNDLED, PACKAGE_DATA

THIRD_PARTY_SDK = {"grpcio", "protobuf"}
"""The SDK's only requirements (not counting extras)."""


def _names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return sorted(n for n in z.namelist() if not n.endswith("/"))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _requirements(meta) -> dict[str, str]:
    """``{name: specifier}`` of the Requires-Dist lines without an ``extra`` marker."""
    out = {}
    for line in meta.get_all("Requires-Dist") or []:
        if "extra ==" in line:
            continue
        m = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?$", line)
        assert m, line
        out[m[1].lower().replace("_", "-")] = m[2]
    return out


def _load_setup_py():
    spec = importlib.util.spec_from_file_location("moon_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # setup() runs only as __main__
    return module


# --- the SDK -----------------------------------------------------------------------------------


def test_sdk_wheel_requires_grpcio_and_protobuf_only(dists: Dists) -> None:
    meta = wheel_metadata(dists.wheels["moon-sdk"])
    assert meta["Name"] == "moon-sdk"
    assert meta["Version"] == moon_sdk.__version__
    requires = _requirements(meta)
    assert set(requires) == THIRD_PARTY_SDK, requires
    for forbidden in ("moon-arena", "numpy", "docker", "scipy", "click", "rich"):
        assert forbidden not in requires


def test_sdk_wheel_holds_moon_sdk_and_nothing_else(dists: Dists) -> None:
    names = _names(dists.wheels["moon-sdk"])
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"moon_sdk"}  # no top-level `moon` package, no arena
    sources = tracked("sdk/python/moon_sdk")
    packaged = {"sdk/python/" + n for n in names if n.startswith("moon_sdk/")}
    assert sorted(packaged) == sources, "the SDK wheel differs from sdk/python/moon_sdk"
    assert "moon_sdk/py.typed" in names and "moon_sdk/v1/bot_pb2.pyi" in names


# --- the arena ---------------------------------------------------------------------------------


def test_arena_wheel_metadata(dists: Dists) -> None:
    meta = wheel_metadata(dists.wheels["moon-arena"])
    assert meta["Name"] == "moon-arena"
    assert meta["Version"] == arena.__version__
    requires = _requirements(meta)
    # the SDK of the same release line: the arena imports its rules and protocol code
    assert requires["moon-sdk"] == f"~={moon_sdk.__version__}"
    for name in ("grpcio", "protobuf", "click", "docker"):
        assert name in requires
    with zipfile.ZipFile(dists.wheels["moon-arena"]) as z:
        [entry] = [n for n in z.namelist() if n.endswith("entry_points.txt")]
        assert "moon = arena.cli:main" in z.read(entry).decode()


@pytest.mark.parametrize("dist", ["moon-sdk", "moon-arena"])
def test_metadata_for_an_index(dists: Dists, dist: str) -> None:
    """Licence, classifiers, project URLs and a readme, as an index shows them."""
    meta = wheel_metadata(dists.wheels[dist])
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    assert "Topic :: Games/Entertainment :: Board Games" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Source", "Issues", "Protocol"} <= set(urls)
    assert urls["Protocol"].endswith("/proto/CHANGELOG.md")
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = ROOT / ("README.md" if dist == "moon-arena" else "sdk/python/README.md")
    assert meta.get_payload().strip() == readme.read_text().strip()
    with zipfile.ZipFile(dists.wheels[dist]) as z:
        [licence] = [n for n in z.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert z.read(licence).decode() == (ROOT / "LICENSE").read_text()


def test_the_sdk_ships_the_same_licence() -> None:
    assert (ROOT / "sdk/python/LICENSE").read_text() == (ROOT / "LICENSE").read_text()


def test_arena_wheel_holds_every_file_of_arena(dists: Dists) -> None:
    """Every file git tracks under arena/ (code, templates with their nested folders,
    whatever else a command reads) is in the wheel."""
    names = set(_names(dists.wheels["moon-arena"]))
    missing = [p for p in tracked("arena") if p not in names]
    assert not missing, f"not in the wheel (package-data in pyproject.toml?): {missing}"


@pytest.mark.parametrize("top", BUNDLED)
def test_arena_wheel_carries_the_repository_folder(dists: Dists, top: str) -> None:
    """arena/_data/<top> is exactly what git tracks in <top>, byte for byte: no file
    missing, no build output (a Go binary, node_modules, a Rust target) or cache added."""
    prefix = "arena/_data/"
    with zipfile.ZipFile(dists.wheels["moon-arena"]) as z:
        packaged = {n[len(prefix):]: _sha(z.read(n)) for n in z.namelist()
                    if n.startswith(prefix + top + "/") and not n.endswith("/")}
    expected = {p: _sha((ROOT / p).read_bytes()) for p in tracked(top)}
    assert sorted(packaged) == sorted(expected)
    assert packaged == expected, "a bundled file differs from the repository's"


@pytest.mark.parametrize("top", BUNDLED)
def test_arena_sdist_carries_the_repository_folder(dists: Dists, top: str) -> None:
    sdist = dists.sdists["moon-arena"]
    base = sdist.name.removesuffix(".tar.gz") + "/"
    with tarfile.open(sdist) as tar:
        names = sorted(m.name[len(base):] for m in tar.getmembers()
                       if m.isfile() and m.name.startswith(base + top + "/"))
        top_level = {m.name[len(base):] for m in tar.getmembers() if m.isfile()}
    assert names == tracked(top)
    assert {"LICENSE", "README.md", "setup.py", "pyproject.toml"} <= top_level


def test_sdk_sdist_has_its_licence_and_readme(dists: Dists) -> None:
    sdist = dists.sdists["moon-sdk"]
    base = sdist.name.removesuffix(".tar.gz") + "/"
    with tarfile.open(sdist) as tar:
        names = {m.name[len(base):] for m in tar.getmembers() if m.isfile()}
    assert {"LICENSE", "README.md", "pyproject.toml"} <= names


def test_the_checkout_holds_no_copy() -> None:
    """The copies exist only in builds: in the repository, arena.bots.resources finds the
    top-level folders themselves, so no copy can go stale."""
    assert not PACKAGE_DATA.exists()
    from arena.bots.resources import resource_dir

    for top in BUNDLED:
        assert resource_dir(top) == ROOT / top


def test_build_outputs_are_left_out(tmp_path: Path) -> None:
    """setup.py's rule on a made-up tree: a Go bot's binary (its run names it, its build
    makes it), node_modules, a Rust target, caches, build stamps stay out; sources,
    including a file named like a binary in a bot without a build, go in."""
    setup_py = _load_setup_py()
    files = {
        "example_bots/gob/bot.toml": 'name = "gob"\nbuild = "go build -o bot ."\nrun = "./bot"\n',
        "example_bots/gob/main.go": "package main\n",
        "example_bots/gob/bot": "\x7fELF",
        "example_bots/gob/.build-stamp": "go build -o bot .",
        "example_bots/gob/.build-lock": "",
        "example_bots/nob/bot.toml": 'name = "nob"\nbuild = "npm ci"\nrun = "node bot.js"\n',
        "example_bots/nob/bot.js": "//",
        "example_bots/nob/node_modules/x/index.js": "//",
        "example_bots/rb/src/main.rs": "fn main() {}",
        "example_bots/rb/target/release/rb": "\x7fELF",
        "example_bots/py/bot.toml": 'name = "py"\nrun = "./bot"\n',
        "example_bots/py/bot": "#!/usr/bin/env python3\n",
        "example_bots/py/__pycache__/bot.cpython-311.pyc": "",
        "example_bots/py/helper.pyc": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    got = [str(p) for p in setup_py.bundled_files("example_bots", tmp_path)]
    assert got == sorted([
        "example_bots/gob/bot.toml", "example_bots/gob/main.go", "example_bots/nob/bot.js",
        "example_bots/nob/bot.toml", "example_bots/py/bot", "example_bots/py/bot.toml",
        "example_bots/rb/src/main.rs"])
    assert setup_py.BUNDLED == BUNDLED
