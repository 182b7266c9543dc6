"""The protocol's versions (proto/CHANGELOG.md): nothing of the last release
(tools/protocol-v1.binpb) is gone, every addition since is listed in the changelog, and a
bot generated from the last release alone (no SDK, its own protoc output) plays a whole
game against today's referee."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from google.protobuf import descriptor_pb2
from moon_sdk.v1 import bot_pb2, game_pb2, match_pb2

from arena.records.record import load_record, verify_record

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "tools" / "protocol-v1.binpb"
CHANGELOG = ROOT / "proto" / "CHANGELOG.md"
RELEASE_BOT = ROOT / "tests" / "bots" / "release_bot.py"


def _elements(files: Iterable[descriptor_pb2.FileDescriptorProto]) -> set[str]:
    """Every name a bot can depend on: messages, ``Message.field`` (nested messages as
    ``Outer.Inner``), enums and their values, services and ``Service.Method``."""
    names: set[str] = set()

    def enum(prefix: str, e: descriptor_pb2.EnumDescriptorProto) -> None:
        names.add(prefix + e.name)
        names.update(v.name for v in e.value)

    def message(prefix: str, m: descriptor_pb2.DescriptorProto) -> None:
        name = prefix + m.name
        names.add(name)
        names.update(f"{name}.{f.name}" for f in m.field)
        for nested in m.nested_type:
            message(name + ".", nested)
        for e in m.enum_type:
            enum(name + ".", e)

    for f in files:
        for m in f.message_type:
            message("", m)
        for e in f.enum_type:
            enum("", e)
        for s in f.service:
            names.add(s.name)
            names.update(f"{s.name}.{method.name}" for method in s.method)
    return names


def _released() -> descriptor_pb2.FileDescriptorSet:
    # a buf image is a FileDescriptorSet on the wire (with buf's extra fields, ignored)
    return descriptor_pb2.FileDescriptorSet.FromString(RELEASE.read_bytes())


def _current() -> list[descriptor_pb2.FileDescriptorProto]:
    return [descriptor_pb2.FileDescriptorProto.FromString(m.DESCRIPTOR.serialized_pb)
            for m in (game_pb2, bot_pb2, match_pb2)]


def _unreleased(text: str) -> str:
    """The changelog's "Unreleased" section ('' if it has none)."""
    m = re.search(r"(?ms)^## Unreleased\n(.*?)(?=^## |\Z)", text)
    return m[1] if m else ""


def _unlisted(text: str, added: set[str]) -> list[str]:
    """The additions that the changelog's Unreleased section does not name in backticks."""
    section = _unreleased(text)
    return sorted(a for a in added if f"`{a}`" not in section)


def added_since_release() -> set[str]:
    return _elements(_current()) - _elements(_released().file)


def test_nothing_of_the_last_release_is_gone() -> None:
    gone = _elements(_released().file) - _elements(_current())
    assert not gone, f"removed or renamed since the last release (breaks old bots): {gone}"


def test_changelog_lists_every_addition_since_the_last_release() -> None:
    unlisted = _unlisted(CHANGELOG.read_text(), added_since_release())
    assert not unlisted, (
        "proto/CHANGELOG.md, section 'Unreleased', must name each addition to moon.v1 "
        f"since the last release, in backticks: {unlisted}")


def test_the_changelog_check_bites() -> None:
    text = "# x\n\n## Unreleased\n\n- `Join.quiet`: ...\n\n## 1.0\n\n- `Join.token`\n"
    assert _unlisted(text, {"Join.quiet"}) == []
    assert _unlisted(text, {"Join.quiet", "TimeControl.max_hands"}) == ["TimeControl.max_hands"]
    assert _unlisted(text, {"Join.token"}) == ["Join.token"]  # listed, but not as unreleased
    assert "Join.quiet" in _elements(_current())


def _release_bot(folder: Path) -> Path:
    """A bot folder: release_bot.py and protoc's Python code of the last release's files,
    generated from the release's descriptors (never from proto/ as it is now)."""
    folder.mkdir()
    shutil.copy(RELEASE_BOT, folder / "bot.py")
    (folder / "bot.toml").write_text('name = "release-bot"\nrun = "{python} bot.py"\n')
    files = [f.name for f in _released().file]
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"--descriptor_set_in={RELEASE}",
                    f"--python_out={folder}", f"--grpc_python_out={folder}", *files],
                   check=True, capture_output=True, text=True)
    assert (folder / "moon" / "v1" / "bot_pb2_grpc.py").is_file()
    return folder


def test_a_bot_of_the_last_release_plays_a_game(tmp_path: Path) -> None:
    bot = _release_bot(tmp_path / "release-bot")
    done = subprocess.run([sys.executable, "-m", "arena.cli", "play", str(bot), "heuristic",
                           "random", "--seed", "21", "--records", str(tmp_path / "records")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = (tmp_path / "records").glob("*.json")
    record = load_record(path)
    assert verify_record(record) == []
    assert record["faults"] == []
    assert record["seats"][0]["name"] == "release-bot"
    assert record["result"]["termination"] in ("target", "moon")
    line = re.search(r"RELEASE_BOT turns=(\d+) events=(\d+) game_ended=(\d) unknown_fields=(\d+)",
                     record["logs"]["0"])
    assert line, record["logs"]["0"]
    turns, events, ended, unknown = map(int, line.groups())
    plays = sum(1 for h in record["hands"] for p in h["plays"] if p["seat"] == 0)
    assert turns >= plays > 0
    assert events > 0 and ended == 1  # it cannot ask to be quiet: it gets every event
    if "TimeControl.max_hands" in added_since_release():
        assert unknown == 1  # the Welcome's TimeControl has a field newer than the bot
