"""The stdio bridge: plays a bot that speaks JSON lines on stdin/stdout through the referee.

    python -m arena.sandbox.stdio_bridge [--name NAME] [--version V] -- CMD [ARGS...]

A bot whose manifest says ``language = "stdio"`` is run through this bridge automatically
(:meth:`arena.bots.manifest.BotSpec.command`). The bridge is an ordinary gRPC bot: it reads
``MOON_ADDRESS`` and ``MOON_TOKEN``, opens the ``BotService.Play`` stream and joins. It
starts ``CMD`` in the same folder with pipes and then

- writes every ``PlayResponse`` from the referee (welcome, events, turns, rejections) to
  the bot's stdin as one line of proto3 JSON (``json_format.MessageToJson``, compact);
- reads the bot's stdout line by line; each line is one ``PlayRequest`` in proto3 JSON
  (an ``action``: the bridge has done the join), sent on to the referee as it is. A line
  that is not a JSON ``PlayRequest`` is sent on as bytes that are not one either, so the
  referee records the bot's ``FAULT_REASON_PROTOCOL_ERROR`` (the reason is written to
  stderr, which ends up in the game record). A UTF-8 byte-order mark before the first line
  is dropped;
- lets the bot choose quiet: a first line ``{"join": {"quiet": true}}`` (a *hello*) is
  not sent on; from then on the bridge passes the bot no public event but ``game_ended``
  (what a quiet gRPC seat gets). Until the bot's first line or its first turn, whichever
  comes first, the bridge holds the events back, so a bot that writes its hello before
  reading anything gets none;
- leaves the bot's stderr alone: it is the bridge's own stderr. When the bot forfeits by a
  timeout, the bridge writes there what it saw on the bot's stdout (nothing at all, a
  line with no newline yet, or nothing since the turn), since a bot that never flushes
  stdout looks to the referee exactly like one that hangs.

The referee measures time and judges every message, so time limits, illegal actions and
protocol errors work exactly as for a gRPC bot. The bridge exits like the bot would
(docs/protocol.md): 2 without MOON_ADDRESS/MOON_TOKEN, 3 when the referee refuses the join,
127 when CMD cannot be started; after the game it closes the bot's stdin and exits with the
bot's own exit code (0 if the bot has to be stopped); if the bot exits during the game, the
bridge drops the stream and exits with the bot's code, which the runner records as a crash.

The bridge owns the stream, so a broken stream is its to mend: it joins again with the same
token (docs/protocol.md, "Reconnecting") for up to :data:`RECONNECT_S`, and the bot never
notices. The second ``Welcome`` and any public event the bot already had are not passed on;
the turn sent again goes to the bot as a normal turn if the bot never saw it, is answered
with the bot's answer if it had answered (the answer was lost with the stream), and is left
to the bot if it is still thinking (its answer goes on the new stream). When it cannot
rejoin in time, or the referee refuses the rejoin, the bridge exits with code 1.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m arena.sandbox.stdio_bridge",
        description="Play a bot that speaks JSON lines on stdin/stdout through the referee "
                    "(MOON_ADDRESS, MOON_TOKEN from the environment).")
    parser.add_argument("--name", default="", help="bot name for the join "
                        "(default: $MOON_BOT_NAME, else the command's name)")
    parser.add_argument("--version", default="0", help="bot version for the join")
    return parser


def _spawn(command: list[str], name: str) -> subprocess.Popen[bytes]:
    """Start the bot with pipes and the environment minus the referee's address and token.

    Raises:
        OSError: it cannot be started.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("MOON_TOKEN", "MOON_ADDRESS")}
    env.setdefault("MOON_BOT_NAME", name)
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)


_early: tuple[list[str], subprocess.Popen[bytes]] | None = None
"""The bot, started before the gRPC imports below (they take about half a second): its
head start to write a hello before the game begins. Only when run as a program."""
if __name__ == "__main__" and "--" in sys.argv[1:] and os.environ.get("MOON_ADDRESS") \
        and os.environ.get("MOON_TOKEN"):
    _split = sys.argv.index("--")
    _command = sys.argv[_split + 1:]
    _opts, _ = _parser().parse_known_args(sys.argv[1:_split])
    if _command:
        try:
            _early = (_command, _spawn(_command, _opts.name or os.environ.get("MOON_BOT_NAME")
                                       or os.path.basename(_command[0])))
        except OSError:
            pass  # main() tries again and says why

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from moon_sdk.convert import PROTOCOL_VERSION  # noqa: E402
from moon_sdk.v1 import bot_pb2 as bpb  # noqa: E402
from moon_sdk.v1 import game_pb2 as pb  # noqa: E402

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
EXIT_REFUSED = 3
EXIT_CANNOT_RUN = 127
MAX_LINE_BYTES = 1024 * 1024
"""A longer line from the bot is a protocol error (the referee's own limit is 64 KiB)."""
CONNECT_TIMEOUT_S = 10.0
RECONNECT_S = 4.0
"""How long the bridge keeps trying to rejoin after a dropped stream, seconds (the referee
waits ``reconnect_ms``, 5 s by default)."""
EXIT_GRACE_S = 2.0
"""How long the bot gets to exit after the game, once its stdin is closed."""
REFUSED = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION,
           grpc.StatusCode.INVALID_ARGUMENT}
PLAY_METHOD = "/moon.v1.BotService/Play"
BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some tools (.NET, PowerShell, Windows editors) write first."""
FLUSH_HINT = (
    "a stdio bot must end each answer with a newline and flush stdout at once "
    "(Python: print(..., flush=True) or python -u; C/C++: fflush(stdout) or "
    "setvbuf(stdout, NULL, _IOLBF, 0); Java: System.out.flush(); awk: fflush(); mawk also "
    "buffers its input: mawk -W interactive), and read stdin line by line as it comes")
"""How to fix a bot whose answers never arrive (docs/protocol.md, "The stdio protocol")."""


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


def hello_from_line(line: bytes) -> bpb.Join | None:
    """The bot's first line as a hello (a ``join`` holding its options), or None."""
    raw, error = request_from_line(line)
    if error:
        return None
    request = bpb.PlayRequest.FromString(raw)
    return request.join if request.WhichOneof("kind") == "join" else None


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
        self.seat: int | None = None
        self.lock = threading.Lock()
        """Guards what follows and the writes to the bot's stdin."""
        self.decided = False
        """Whether the bot has had its say on quiet (its first line, or its first turn)."""
        self.quiet = False
        self.held: list[bytes] = []
        """Event lines held back until decided."""
        self.stdout_bytes = 0
        """Bytes the bot has written on stdout (a byte-order mark included)."""
        self.lines = 0
        """Complete lines read from the bot's stdout."""
        self.pending: tuple[int, float, int, int] | None = None
        """The turn the bot owes: (request id, when it was fed, stdout bytes and lines
        then), or None."""
        self.fed_turn = -1
        """The request id of the last turn passed to the bot."""
        self.answer: tuple[int, bytes, queue.Queue[bytes | None]] | None = None
        """The bot's answer to its last turn: (request id, the bytes sent, the stream's
        queue it went to), kept to answer the same turn sent again after a rejoin."""
        self.last_sequence = 0
        """The sequence number of the last event passed on (a rejoin's are not again)."""

    def start_bot(self) -> int | None:
        """Start the bot (or take the one started early); an exit code if it cannot be
        started."""
        if _early is not None and _early[0] == self.command:
            self.proc = _early[1]
            return None
        try:
            self.proc = _spawn(self.command, self.name)
        except OSError as e:
            say(f"cannot run {' '.join(self.command)!r}: {e.strerror or e}")
            return EXIT_CANNOT_RUN
        return None

    def pump_stdout(self) -> None:
        """Bot stdout → referee, one JSON line at a time (runs in a thread)."""
        assert self.proc is not None and self.proc.stdout is not None
        out: IO[bytes] = self.proc.stdout
        buf = bytearray()
        at_start = True  # nothing but (part of) a byte-order mark read yet
        skipping = False  # the rest of an overlong line
        while chunk := out.read1(1 << 16):  # type: ignore[attr-defined]
            with self.lock:
                self.stdout_bytes += len(chunk)
            buf += chunk
            if at_start:
                if BOM.startswith(bytes(buf[:3])) and len(buf) < 3:
                    continue  # maybe a byte-order mark: wait for its third byte
                if buf.startswith(BOM):
                    del buf[:3]
                at_start = False
            while (end := buf.find(b"\n")) >= 0:
                line = bytes(buf[:end + 1])
                del buf[:end + 1]
                if skipping:
                    skipping = False
                    continue
                self.take_line(line)
            if len(buf) > MAX_LINE_BYTES and not skipping:
                with self.lock:
                    self.lines += 1
                    self.pending = None
                say(f"line {self.lines} of the bot's stdout is longer than "
                    f"{MAX_LINE_BYTES} bytes; sending it on as a protocol error")
                self.outbox.put(not_a_message(bytes(buf[:1024])))
                skipping = True
            if skipping:
                buf.clear()
        if buf and not skipping:
            self.take_line(bytes(buf))  # the last line, with no newline before the end
        self.proc.wait()
        self.bot_gone.set()
        if not self.over and self.call is not None:
            say(f"the bot exited (code {self.proc.returncode}) before the game ended")
            self.call.cancel()

    def take_line(self, line: bytes) -> None:
        """One line of the bot's stdout (its newline included, if it had one)."""
        text = line.rstrip(b"\r\n")
        if not text.strip():
            return
        with self.lock:
            self.lines += 1
            number = self.lines
            answering = self.pending[0] if self.pending is not None else None
            self.pending = None
        if number == 1 and (hello := hello_from_line(text)) is not None:
            self.decide(quiet=hello.quiet)
            return
        self.decide(quiet=False)
        raw, error = request_from_line(text)
        if error:
            say(f"line {number} of the bot's stdout is not a JSON moon.v1.PlayRequest "
                f"({error}); sending it on as a protocol error: {text[:200]!r}")
        with self.lock:
            if answering is not None:
                self.answer = (answering, raw, self.outbox)
            self.outbox.put(raw)

    def decide(self, quiet: bool) -> None:
        """The bot has had its say on quiet: pass on (or drop) the held events."""
        with self.lock:
            self.quiet = self.quiet or quiet
            if not self.decided:
                self.decided = True
                held, self.held = self.held, []
                if not self.quiet:
                    for line in held:
                        self._write(line)

    @staticmethod
    def requests(box: queue.Queue[bytes | None]) -> Iterator[bytes]:
        """One stream's requests: ``box`` until None (each stream has its own, so a broken
        stream's sender takes nothing meant for the next)."""
        while (raw := box.get()) is not None:
            yield raw

    def open_stream(self, play: grpc.StreamStreamMultiCallable[bytes, bpb.PlayResponse]
                    ) -> Iterator[bpb.PlayResponse]:
        """A new ``Play`` stream that starts with the join (the same token each time); what
        the bot writes from now on goes on it."""
        box: queue.Queue[bytes | None] = queue.Queue()
        box.put(bpb.PlayRequest(join=bpb.Join(
            token=self.token, protocol_version=PROTOCOL_VERSION, bot_name=self.name,
            bot_version=self.version)).SerializeToString())
        with self.lock:
            old, self.outbox = self.outbox, box
            old.put(None)
            responses: Iterator[bpb.PlayResponse] = play(self.requests(box))
            self.call = responses  # type: ignore[assignment]
        return responses

    def feed(self, response: bpb.PlayResponse) -> None:
        """Referee → bot stdin: every response, but the public events of a bot that asked
        for quiet; events are held back until the bot has had its say (its first line)."""
        kind = response.WhichOneof("kind")
        ending = kind == "event" and response.event.WhichOneof("kind") == "game_ended"
        public = kind == "event" and not ending
        line = response_line(response)
        with self.lock:
            if kind == "event":
                if 0 < response.event.sequence <= self.last_sequence:
                    return  # sent again after a rejoin: the bot has it
                self.last_sequence = max(self.last_sequence, response.event.sequence)
            if kind == "turn" and response.turn.request_id == self.fed_turn:
                # the same turn again after a rejoin: the bot's answer went on the old
                # stream and was lost with it (send it again), or it is on this stream
                # already, or the bot is still on it (its answer will be)
                if self.answer is not None and self.answer[0] == self.fed_turn \
                        and self.answer[2] is not self.outbox:
                    self.outbox.put(self.answer[1])
                return
            if public and not self.decided:
                self.held.append(line)
                return
        if kind == "turn" or ending:  # it had its turn before it said anything
            self.decide(quiet=False)
        with self.lock:
            if public and self.quiet:
                return
            if kind == "turn":
                self.fed_turn = response.turn.request_id
                self.pending = (response.turn.request_id, time.monotonic(), self.stdout_bytes,
                                self.lines)
            self._write(line)

    def _write(self, line: bytes) -> None:
        """A line to the bot's stdin; a bot that stopped reading is noticed by its exit."""
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def explain_timeout(self, result: pb.GameResult) -> None:
        """If the game ended with this seat's timeout, say what its stdout showed."""
        fault = result.forfeit
        if (self.seat is None or result.termination != pb.TERMINATION_FORFEIT
                or fault.seat != self.seat or fault.reason != pb.FAULT_REASON_TIMEOUT):
            return
        with self.lock:
            pending, total = self.pending, self.stdout_bytes
        if pending is None:
            return
        rid, fed_at, bytes_then, lines_then = pending
        waited = int((time.monotonic() - fed_at) * 1000)
        since = total - bytes_then
        if total == 0:
            seen = "nothing at all arrived on the bot's stdout during the whole game"
        elif since:
            seen = (f"{since} bytes arrived on the bot's stdout after it, but no newline: "
                    "the answer is not complete until its line ends")
        elif lines_then == 0:
            seen = (f"not one line arrived on the bot's stdout during the whole game (only "
                    f"{total} bytes, before the turn)")
        else:
            seen = (f"nothing arrived on the bot's stdout since (its {lines_then} earlier "
                    "lines did): it was still thinking, stuck, or its output is buffered")
        say(f"timed out on the turn with requestId {rid} ({waited} ms after it was passed "
            f"to the bot): {seen}. If the bot did answer, {FLUSH_HINT}.")

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
            play: grpc.StreamStreamMultiCallable[bytes, bpb.PlayResponse] = channel.stream_stream(
                PLAY_METHOD, request_serializer=None,
                response_deserializer=bpb.PlayResponse.FromString)
            responses = self.open_stream(play)
            threading.Thread(target=self.pump_stdout, name="bot-stdout", daemon=True).start()
            welcomed = False
            dropped_at: float | None = None
            while True:
                try:
                    for response in responses:
                        kind = response.WhichOneof("kind")
                        if kind == "welcome":
                            dropped_at = None
                            if welcomed:
                                continue  # a rejoin's: the bot had its welcome
                            welcomed = True
                            self.seat = response.welcome.seat
                        if kind == "event" and \
                                response.event.WhichOneof("kind") == "game_ended":
                            self.over = True
                            self.explain_timeout(response.event.game_ended)
                        self.feed(response)
                    if self.over:
                        return self.finish_bot()
                    say("the referee ended the stream before the game was over")
                except grpc.RpcError as e:
                    if self.over:
                        return self.finish_bot()
                    if self.bot_gone.is_set():
                        return exit_code(self.proc.returncode)
                    code = e.code()
                    say(f"referee: {code.name}: {e.details()}")
                    if code in REFUSED or code is grpc.StatusCode.RESOURCE_EXHAUSTED \
                            and dropped_at is not None:
                        return EXIT_REFUSED if not welcomed else EXIT_ERROR
                if not welcomed:
                    return EXIT_ERROR
                now = time.monotonic()
                dropped_at = dropped_at or now
                if now - dropped_at > RECONNECT_S:
                    say(f"gave up rejoining after {RECONNECT_S:.0f} s")
                    return EXIT_ERROR
                say("the stream broke; joining again with the same token")
                time.sleep(0.2)
                responses = self.open_stream(play)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
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
