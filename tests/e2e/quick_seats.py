"""Quick seats for tests that need many streams at once: each is one `BotService.Play`
stream of a gRPC client in the test's own event loop (no process per bot)."""

from __future__ import annotations

from collections.abc import Callable

import grpc
from moon_sdk.convert import PROTOCOL_VERSION
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

Chooser = Callable[[bpb.Turn], pb.Action]
"""What a seat answers a turn with (default: its first legal action)."""


def play_call(channel: grpc.aio.Channel) -> grpc.aio.StreamStreamCall:
    """A new Play stream on ``channel``."""
    return channel.stream_stream(
        "/moon.v1.BotService/Play", request_serializer=bpb.PlayRequest.SerializeToString,
        response_deserializer=bpb.PlayResponse.FromString)()


async def quick_seat(channel: grpc.aio.Channel, token: str,
                     choose: Chooser | None = None) -> list[bpb.PlayResponse]:
    """Join with ``token`` and answer every turn (``choose``, else the first legal
    action) until the game ends; every message received."""
    call = play_call(channel)
    await call.write(bpb.PlayRequest(join=bpb.Join(
        token=token, protocol_version=PROTOCOL_VERSION, bot_name="quick")))
    got = []
    async for resp in call:
        got.append(resp)
        kind = resp.WhichOneof("kind")
        if kind == "turn":
            action = choose(resp.turn) if choose else resp.turn.legal_actions[0]
            await call.write(bpb.PlayRequest(action=bpb.ActionReply(
                request_id=resp.turn.request_id, action=action)))
        elif kind == "event" and resp.event.WhichOneof("kind") == "game_ended":
            break
    call.cancel()
    return got
