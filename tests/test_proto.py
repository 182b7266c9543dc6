"""The protocol: committed stubs are fresh, messages round-trip, buf lint is clean, and
docs/protocol.md (its JSON examples and its minimal bot) matches the real protocol."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from types import ModuleType

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message
from moon_sdk.v1 import bot_pb2, bot_pb2_grpc, game_pb2, match_pb2

ROOT = Path(__file__).resolve().parents[1]
PROTO_DIR = ROOT / "proto"
STUB_DIR = ROOT / "sdk" / "python" / "moon_sdk" / "v1"
DOC = ROOT / "docs" / "protocol.md"
BUF = ROOT / "tools" / "node_modules" / ".bin" / "buf"
PROTO_MODULES = (game_pb2, bot_pb2, match_pb2)


def _load_examples() -> ModuleType:
    return _load_module("protocol_examples", ROOT / "docs" / "protocol_examples.py")


def _load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


protocol_examples = _load_examples()
gen_python = _load_module("gen_python", ROOT / "tools" / "gen_python.py")
EXAMPLES: dict[str, Message] = protocol_examples.examples()


def _all_message_types() -> set[str]:
    names: set[str] = set()

    def visit(descriptor: Descriptor) -> None:
        names.add(descriptor.full_name)
        for nested in descriptor.nested_types:
            visit(nested)

    for module in PROTO_MODULES:
        for descriptor in module.DESCRIPTOR.message_types_by_name.values():
            visit(descriptor)
    return names


def _message_class(full_name: str) -> type[Message]:
    for module in PROTO_MODULES:
        for name, descriptor in module.DESCRIPTOR.message_types_by_name.items():
            if descriptor.full_name == full_name:
                return getattr(module, name)  # type: ignore[no-any-return]
    raise KeyError(f"no message {full_name} in moon.v1")


def _round_trip(message: Message) -> None:
    cls = type(message)
    assert cls.FromString(message.SerializeToString()) == message
    assert json_format.Parse(json_format.MessageToJson(message), cls()) == message
    snake = json_format.MessageToJson(message, preserving_proto_field_name=True)
    assert json_format.Parse(snake, cls()) == message
    assert json_format.ParseDict(json_format.MessageToDict(message), cls()) == message


# --- generated code --------------------------------------------------------------------------


def test_committed_stubs_match_the_protos() -> None:
    fresh = gen_python.generate()
    assert fresh, "protoc generated nothing from proto/moon/v1"
    committed = gen_python.committed()
    assert sorted(committed) == sorted(fresh), (
        "sdk/python/moon_sdk/v1 does not have the files protoc generates: run `make proto`"
    )
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"generated stubs are stale ({', '.join(stale)}): run `make proto`"


def test_generated_code_never_imports_a_top_level_moon_package() -> None:
    # the SDK must not need (or install) a package called `moon`: imports are relative
    for name, text in gen_python.committed().items():
        assert "from moon." not in text and "import moon." not in text, name


def test_stub_packages_are_importable() -> None:
    assert (STUB_DIR / "__init__.py").is_file()
    assert (STUB_DIR.parent / "__init__.py").is_file()
    assert bot_pb2_grpc.BotServiceStub and match_pb2.DESCRIPTOR.services_by_name["MatchService"]


# --- messages --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_round_trips(name: str) -> None:
    _round_trip(EXAMPLES[name])


@pytest.mark.parametrize("full_name", sorted(_all_message_types()))
def test_empty_message_round_trips(full_name: str) -> None:
    _round_trip(_message_class(full_name)())


def test_uint64_fields_are_json_strings() -> None:
    as_dict = json_format.MessageToDict(EXAMPLES["turn-play"])
    assert as_dict["turn"]["requestId"] == "13"
    big = bot_pb2.ActionReply(request_id=2**64 - 1)
    assert json_format.MessageToDict(big) == {"requestId": str(2**64 - 1)}
    _round_trip(big)


def test_examples_use_every_message() -> None:
    seen: set[str] = set()

    def visit(message: Message) -> None:
        seen.add(message.DESCRIPTOR.full_name)
        for field, value in message.ListFields():
            if field.message_type is None:
                continue
            for item in value if field.is_repeated else [value]:
                visit(item)

    for message in EXAMPLES.values():
        visit(message)
    missing = _all_message_types() - seen
    assert not missing, f"add examples in docs/protocol_examples.py for: {sorted(missing)}"


# --- docs/protocol.md ------------------------------------------------------------------------

JSON_BLOCK = re.compile(r"```json (\S+)\n(.*?)\n```", re.DOTALL)


def test_doc_json_blocks_parse_into_their_types() -> None:
    blocks = JSON_BLOCK.findall(DOC.read_text())
    assert len(blocks) >= len(EXAMPLES)
    for type_name, text in blocks:
        message = json_format.Parse(text, _message_class(type_name)())
        assert protocol_examples.to_json(message) == text, (
            f"a {type_name} block in docs/protocol.md is not what json_format writes"
        )


def test_doc_examples_are_current() -> None:
    text = DOC.read_text()
    names = [m["name"] for m in protocol_examples.BLOCK.finditer(text)]
    assert sorted(names) == sorted(EXAMPLES), (
        "docs/protocol.md must show every example of docs/protocol_examples.py once"
    )
    assert protocol_examples.rewrite(text) == text, (
        "docs/protocol.md has stale examples: run `python docs/protocol_examples.py --write`"
    )
    untagged = len(JSON_BLOCK.findall(text)) - len(names)
    assert untagged == 0, "every JSON block of docs/protocol.md needs an <!-- example --> tag"


# --- the minimal bot of docs/protocol.md, against a scripted referee -------------------------

TOKEN = "tok-good"


class ScriptedReferee(bot_pb2_grpc.BotServiceServicer):
    """Plays one short scripted game with one bot, recording what it sent."""

    def __init__(self) -> None:
        self.received: list[bot_pb2.PlayRequest] = []
        self.turns = [EXAMPLES["turn-bid"], EXAMPLES["turn-play"]]

    def Play(  # noqa: N802 (the gRPC method name)
        self, request_iterator: Iterator[bot_pb2.PlayRequest], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.PlayResponse]:
        first = next(request_iterator)
        self.received.append(first)
        if first.WhichOneof("kind") != "join":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a join")
        if first.join.token != TOKEN:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        yield EXAMPLES["welcome"]
        yield EXAMPLES["hand-started"]
        for turn in self.turns:
            yield turn
            self.received.append(next(request_iterator))
            yield EXAMPLES["event-bid"]
        yield EXAMPLES["game-ended"]


def _minimal_bot(tmp_path: Path) -> Path:
    match = re.search(r"<!-- minimal-bot -->\n```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert match, "docs/protocol.md lost its minimal bot"
    code = match[1]
    assert len(code.splitlines()) < 40, "the minimal bot must stay under 40 lines"
    path = tmp_path / "minimal_bot.py"
    path.write_text(code)
    return path


def _run_bot(bot: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MOON_")}
    environ.update(env)
    return subprocess.run(
        [sys.executable, str(bot)], env=environ, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[tuple[ScriptedReferee, dict[str, str]]]:
    servicer = ScriptedReferee()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    bot_pb2_grpc.add_BotServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    socket = tmp_path / "referee.sock"
    server.add_insecure_port(f"unix://{socket}")
    server.start()
    try:
        yield servicer, {"tcp": f"127.0.0.1:{port}", "unix": f"unix://{socket}"}
    finally:
        server.stop(grace=None)


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_minimal_bot_plays_a_game(
    tmp_path: Path, referee: tuple[ScriptedReferee, dict[str, str]], transport: str
) -> None:
    servicer, addresses = referee
    bot = _minimal_bot(tmp_path)
    done = _run_bot(bot, MOON_ADDRESS=addresses[transport], MOON_TOKEN=TOKEN, MOON_BOT_NAME="b")
    assert done.returncode == 0, done.stderr
    join, *replies = servicer.received
    assert join.join == bot_pb2.Join(token=TOKEN, protocol_version=1, bot_name="b",
                                     bot_version="1.0")  # fmt: skip
    assert len(replies) == len(servicer.turns)
    for reply, response in zip(replies, servicer.turns, strict=True):
        assert reply.action.request_id == response.turn.request_id
        assert reply.action.action == response.turn.legal_actions[0]


def test_minimal_bot_refused_exits_3(
    tmp_path: Path, referee: tuple[ScriptedReferee, dict[str, str]]
) -> None:
    _, addresses = referee
    done = _run_bot(_minimal_bot(tmp_path), MOON_ADDRESS=addresses["tcp"], MOON_TOKEN="nope")
    assert done.returncode == 3, done.stderr
    assert "UNAUTHENTICATED" in done.stderr


def test_minimal_bot_without_config_exits_2(tmp_path: Path) -> None:
    done = _run_bot(_minimal_bot(tmp_path), MOON_ADDRESS="127.0.0.1:1")
    assert done.returncode == 2, done.stderr


# --- buf ---------------------------------------------------------------------------------------


def test_buf_lint_is_clean() -> None:
    if not BUF.exists():
        pytest.skip("buf is not installed in tools/node_modules: `make buf` (npm ci) installs it")
    if shutil.which("node") is None:
        pytest.skip("buf from npm needs node on PATH")
    done = subprocess.run([str(BUF), "lint"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"buf lint:\n{done.stdout}{done.stderr}"


def test_buf_breaking_bites_against_the_published_protocol(tmp_path: Path) -> None:
    """The protocol as it is passes `buf breaking` against the committed baseline, and a
    copy with a field renumbered (what would break every existing bot) fails it."""
    if not BUF.exists():
        pytest.skip("buf is not installed in tools/node_modules: `make buf` (npm ci) installs it")
    if shutil.which("node") is None:
        pytest.skip("buf from npm needs node on PATH")
    baseline = ROOT / "tools" / "protocol-v1.binpb"
    done = subprocess.run([str(BUF), "breaking", "--against", str(baseline)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"buf breaking:\n{done.stdout}{done.stderr}"
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    bot = tmp_path / "proto" / "moon" / "v1" / "bot.proto"
    text = bot.read_text()
    assert "ActionReply action = 2;" in text
    bot.write_text(text.replace("ActionReply action = 2;", "ActionReply action = 29;"))
    done = subprocess.run([str(BUF), "breaking", "--against", str(baseline)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert 'field "2" with name "action"' in done.stdout + done.stderr
