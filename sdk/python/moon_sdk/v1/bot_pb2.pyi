from . import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PlayRequest(_message.Message):
    __slots__ = ("join", "action")
    JOIN_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    join: Join
    action: ActionReply
    def __init__(self, join: _Optional[_Union[Join, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ...) -> None: ...

class Join(_message.Message):
    __slots__ = ("token", "protocol_version", "bot_name", "bot_version", "quiet")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    QUIET_FIELD_NUMBER: _ClassVar[int]
    token: str
    protocol_version: int
    bot_name: str
    bot_version: str
    quiet: bool
    def __init__(self, token: _Optional[str] = ..., protocol_version: _Optional[int] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., quiet: _Optional[bool] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("request_id", "action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: _game_pb2.Action
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("welcome", "turn", "event", "rejected")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    turn: Turn
    event: _game_pb2.Event
    rejected: Rejected
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., turn: _Optional[_Union[Turn, _Mapping]] = ..., event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ..., rejected: _Optional[_Union[Rejected, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "seat", "ruleset", "time_control", "protocol_version", "seat_names", "resumed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    ruleset: _game_pb2.Ruleset
    time_control: _game_pb2.TimeControl
    protocol_version: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    resumed: bool
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., ruleset: _Optional[_Union[_game_pb2.Ruleset, _Mapping]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., protocol_version: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., resumed: _Optional[bool] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ("request_id", "observation", "legal_actions", "decision_ms", "bank_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    observation: _game_pb2.Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[_game_pb2.Action]
    decision_ms: int
    bank_ms: int
    def __init__(self, request_id: _Optional[int] = ..., observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[_game_pb2.Action, _Mapping]]] = ..., decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class Rejected(_message.Message):
    __slots__ = ("request_id", "reason", "retries_left")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRIES_LEFT_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    reason: str
    retries_left: int
    def __init__(self, request_id: _Optional[int] = ..., reason: _Optional[str] = ..., retries_left: _Optional[int] = ...) -> None: ...
