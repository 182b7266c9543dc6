"""The stdio bridge: plays a bot that speaks JSON lines on stdin/stdout through the referee.

    python -m arena.stdio_bridge [--name NAME] [--version V] -- CMD [ARGS...]

A bot whose manifest says ``language = "stdio"`` is run through this bridge automatically
(:meth:`arena.bots.BotSpec.command`). The bridge is an ordinary gRPC bot: it reads
``MOON_ADDRESS`` and ``MOON_TOKEN``, opens the ``BotService.Play`` stream and joins. It
starts ``CMD`` in the same folder with pipes and then

- writes every ``PlayResponse`` from the referee (welcome, events, turns, rejections) to
  the bot's stdin as one line of proto3 JSON (``json_format.MessageToJson``, compact);
- reads the bot's stdout line by line; each line is one ``PlayRequest`` in proto3 JSON
  (an ``action``: the bridge has done the join), sent on to the referee as it is. A line
  that is not a JSON ``PlayRequest`` is sent on as bytes that are not one either, so the
  referee records the bot's ``FAULT_REASON_PROTOCOL_ERROR`` (the reason is written to
  stderr, which ends up in the game record);
- leaves the bot's stderr alone: it is the bridge's own stderr.

The referee measures time and judges every message, so time limits, illegal actions and
protocol errors work exactly as for a gRPC bot. The bridge exits like the bot would
(docs/protocol.md): 2 without MOON_ADDRESS/MOON_TOKEN, 3 when the referee refuses the join,
127 when CMD cannot be started; after the game it closes the bot's stdin and exits with the
bot's own exit code (0 if the bot has to be stopped); if the bot exits during the game, the
bridge drops the stream and exits with the bot's code, which the runner records as a crash.
A broken stream ends the bridge with code 1 (it does not reconnect).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import IO

import grpc
from google.protobuf import json_format
from moon_sdk.convert import PROTOCOL_VERSION
from moon_sdk.v1 import bot_pb2 as bpb

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
EXIT_REFUSED = 3
EXIT_CANNOT_RUN = 127
MAX_LINE_BYTES = 1024 * 1024
"""A longer line from the bot is a protocol error (the referee's own limit is 64 KiB)."""
CONNECT_TIMEOUT_S = 10.0
EXIT_GRACE_S = 2.0
"""How long the bot gets to exit after the game, once its stdin is closed."""
REFUSED = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION,
           grpc.StatusCode.INVALID_ARGUMENT}
PLAY_METHOD = "/moon.v1.BotService/Play"


def say(message: str) -> None:
    """A line from the bridge on stderr (the bot's log)."""
    print(f"stdio bridge: {message}", file=sys.stderr, flush=True)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def not_a_message(raw: bytes) -> bytes:
    """Bytes that carry ``raw`` but never parse as a ``PlayRequest``: field 1 with a length
    one byte longer than what follows (a truncated message)."""
    return b"\x0a" + _varint(len(raw) + 1) + raw


def request_from_line(line: bytes) -> tuple[bytes, str]:
    """A line of the bot's stdout as the bytes to send, and an error ('' if it is fine)."""
    try:
        value = json.loads(line.decode("utf-8"))
        if not isinstance(value, dict):
            raise ValueError("the line is JSON, but not a JSON object")
        msg = json_format.ParseDict(value, bpb.PlayRequest())
    except (json_format.ParseError, ValueError, RecursionError) as e:
        # a prefix is enough to be unparseable, and stays under every size limit
        return not_a_message(line[:1024]), str(e).splitlines()[0] if str(e) else type(e).__name__
    return msg.SerializeToString(), ""


def response_line(response: bpb.PlayResponse) -> bytes:
    """One ``PlayResponse`` as one line of compact proto3 JSON."""
    return json_format.MessageToJson(response, indent=None).encode("utf-8") + b"\n"


def exit_code(returncode: int) -> int:
    """A child's return code as an exit code (killed by signal N: 128 + N, as a shell)."""
    return returncode if returncode >= 0 else 128 - returncode


class Bridge:
    """One game: the bot process, the stream, and the pumps between them."""

    def __init__(self, command: list[str], name: str, version: str, address: str,
                 token: str) -> None:
        self.command = command
        self.name = name
        self.version = version
        self.address = address
        self.token = token
        self.outbox: queue.Queue[bytes | None] = queue.Queue()
        self.proc: subprocess.Popen[bytes] | None = None
        self.call: grpc.RpcContext | None = None
        self.over = False
        self.bot_gone = threading.Event()

    def start_bot(self) -> int | None:
        """Start the bot; an exit code if it cannot be started."""
        env = {k: v for k, v in os.environ.items() if k not in ("MOON_TOKEN", "MOON_ADDRESS")}
        env.setdefault("MOON_BOT_NAME", self.name)
        try:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, env=env)
        except OSError as e:
            say(f"cannot run {' '.join(self.command)!r}: {e.strerror or e}")
            return EXIT_CANNOT_RUN
        return None

    def pump_stdout(self) -> None:
        """Bot stdout → referee, one JSON line at a time (runs in a thread)."""
        assert self.proc is not None and self.proc.stdout is not None
        out: IO[bytes] = self.proc.stdout
        number = 0
        while line := out.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(line) > MAX_LINE_BYTES:
                say(f"line {number} of the bot's stdout is longer than {MAX_LINE_BYTES} bytes; "
                    "sending it on as a protocol error")
                self.outbox.put(not_a_message(line[:1024]))
                continue
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue
            raw, error = request_from_line(line)
            if error:
                say(f"line {number} of the bot's stdout is not a JSON moon.v1.PlayRequest "
                    f"({error}); sending it on as a protocol error: {line[:200]!r}")
            self.outbox.put(raw)
        self.proc.wait()
        self.bot_gone.set()
        if not self.over and self.call is not None:
            say(f"the bot exited (code {self.proc.returncode}) before the game ended")
            self.call.cancel()

    def requests(self) -> Iterator[bytes]:
        while (raw := self.outbox.get()) is not None:
            yield raw

    def feed(self, line: bytes) -> None:
        """Referee → bot stdin; a bot that stopped reading is noticed by its exit."""
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def finish_bot(self) -> int:
        """Close the bot's stdin, let it exit for a moment, stop it if it won't; its code."""
        assert self.proc is not None
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            return exit_code(self.proc.wait(timeout=EXIT_GRACE_S))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return EXIT_OK

    def stop_bot(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def run(self) -> int:
        failed = self.start_bot()
        if failed is not None:
            return failed
        try:
            return self._play()
        finally:
            self.outbox.put(None)
            self.stop_bot()

    def _play(self) -> int:
        assert self.proc is not None
        with grpc.insecure_channel(self.address) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=CONNECT_TIMEOUT_S)
            except grpc.FutureTimeoutError:
                say(f"cannot reach the referee at {self.address}")
                return EXIT_ERROR
            play = channel.stream_stream(PLAY_METHOD, request_serializer=None,
                                         response_deserializer=bpb.PlayResponse.FromString)
            self.outbox.put(bpb.PlayRequest(join=bpb.Join(
                token=self.token, protocol_version=PROTOCOL_VERSION, bot_name=self.name,
                bot_version=self.version)).SerializeToString())
            responses = play(self.requests())
            self.call = responses
            threading.Thread(target=self.pump_stdout, name="bot-stdout", daemon=True).start()
            welcomed = False
            try:
                for response in responses:
                    kind = response.WhichOneof("kind")
                    welcomed = welcomed or kind == "welcome"
                    if kind == "event" and response.event.WhichOneof("kind") == "game_ended":
                        self.over = True
                    self.feed(response_line(response))
            except grpc.RpcError as e:
                if self.over:
                    return self.finish_bot()
                if self.bot_gone.is_set():
                    return exit_code(self.proc.returncode)
                code = e.code()  # type: ignore[attr-defined]
                say(f"referee: {code.name}: {e.details()}")  # type: ignore[attr-defined]
                if not welcomed and code in REFUSED:
                    return EXIT_REFUSED
                return EXIT_ERROR
            if not self.over:
                say("the referee ended the stream before the game was over")
                return EXIT_ERROR
            return self.finish_bot()


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m arena.stdio_bridge",
        description="Play a bot that speaks JSON lines on stdin/stdout through the referee "
                    "(MOON_ADDRESS, MOON_TOKEN from the environment).")
    parser.add_argument("--name", default="", help="bot name for the join "
                        "(default: $MOON_BOT_NAME, else the command's name)")
    parser.add_argument("--version", default="0", help="bot version for the join")
    if "--" not in args:
        parser.print_usage(sys.stderr)
        say("give the bot's command after --")
        return EXIT_CONFIG
    split = args.index("--")
    opts, command = parser.parse_args(args[:split]), args[split + 1:]
    if not command:
        say("give the bot's command after --")
        return EXIT_CONFIG
    address, token = os.environ.get("MOON_ADDRESS"), os.environ.get("MOON_TOKEN")
    if not address or not token:
        say("MOON_ADDRESS and MOON_TOKEN must be set (the referee's address and this seat's "
            "join token)")
        return EXIT_CONFIG
    name = opts.name or os.environ.get("MOON_BOT_NAME") or os.path.basename(command[0])
    return Bridge(command, name, opts.version, address, token).run()


if __name__ == "__main__":
    sys.exit(main())
