"""moon_sdk.bot.reply_bytes (the bot loop's answer, encoded without building a message):
byte for byte what protobuf serializes for the same PlayRequest, for every action and
request ids of every varint length, and read back by protobuf as that answer."""

from __future__ import annotations

import pytest
from moon_sdk.bot import reply_bytes
from moon_sdk.convert import action_from_pb, action_to_pb
from moon_sdk.rules.actions import NUM_ACTIONS
from moon_sdk.v1 import bot_pb2 as bpb


@pytest.mark.parametrize("request_id", [0, 1, 2, 127, 128, 300, 16383, 16384, 2**21, 2**63])
def test_every_answer_is_what_protobuf_encodes(request_id):
    for action in range(NUM_ACTIONS):
        raw = reply_bytes(request_id, action)
        assert raw == bpb.PlayRequest(action=bpb.ActionReply(
            request_id=request_id, action=action_to_pb(action))).SerializeToString()
        back = bpb.PlayRequest.FromString(raw)
        assert back.WhichOneof("kind") == "action"
        assert back.action.request_id == request_id
        assert action_from_pb(back.action.action) == action
