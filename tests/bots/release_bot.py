"""A bot as an author wrote it against an earlier release of ``moon.v1``: no Moon SDK, only
grpcio, protobuf and the code protoc generated from that release's ``.proto`` files, as the
package ``moon.v1`` in this folder (tests/test_proto_versions.py generates it from the
release's buf image next to a copy of this file).

It joins with ``protocol_version`` 1 and nothing newer, answers every turn with the first
legal action, and at the end writes one line to stderr:
``RELEASE_BOT turns=N events=K game_ended=0|1 unknown_fields=U`` (U is 1 when the
``Welcome`` came with fields its release does not know, a newer ``TimeControl`` say).
"""

from __future__ import annotations

import os
import queue
import sys

import grpc
from moon.v1 import bot_pb2, bot_pb2_grpc


def main() -> int:
    outbox: queue.Queue[bot_pb2.PlayRequest | None] = queue.Queue()
    outbox.put(bot_pb2.PlayRequest(join=bot_pb2.Join(
        token=os.environ["MOON_TOKEN"], protocol_version=1, bot_name="release-bot",
        bot_version="1.0")))
    turns = events = unknown = 0
    ended = False
    with grpc.insecure_channel(os.environ["MOON_ADDRESS"]) as channel:
        try:
            for response in bot_pb2_grpc.BotServiceStub(channel).Play(iter(outbox.get, None)):
                kind = response.WhichOneof("kind")
                if kind == "welcome":
                    unknown += bool(_has_unknown(response.welcome))
                elif kind == "turn":
                    turns += 1
                    outbox.put(bot_pb2.PlayRequest(action=bot_pb2.ActionReply(
                        request_id=response.turn.request_id,
                        action=response.turn.legal_actions[0])))
                elif kind == "event":
                    events += 1
                    ended = ended or response.event.HasField("game_ended")
        except grpc.RpcError as error:
            print(f"referee: {error.code().name}: {error.details()}", file=sys.stderr)
            return 1
        finally:
            outbox.put(None)
    print(f"RELEASE_BOT turns={turns} events={events} game_ended={int(ended)} "
          f"unknown_fields={unknown}", file=sys.stderr, flush=True)
    return 0


def _has_unknown(message) -> bool:
    """True if ``message`` or a message inside it came with fields this release lacks."""
    from google.protobuf import unknown_fields

    if len(unknown_fields.UnknownFieldSet(message)):
        return True
    return any(_has_unknown(value) for field, value in message.ListFields()
               if field.message_type is not None and not field.is_repeated)


if __name__ == "__main__":
    sys.exit(main())
