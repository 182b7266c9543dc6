from . import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_WAITING: _ClassVar[MatchStatus]
    MATCH_STATUS_RUNNING: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_WAITING: MatchStatus
MATCH_STATUS_RUNNING: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus

class SeatConfig(_message.Message):
    __slots__ = ("name", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("ruleset", "seed", "seats", "time_control", "match_id")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ruleset: _game_pb2.Ruleset
    seed: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatConfig]
    time_control: _game_pb2.TimeControl
    match_id: str
    def __init__(self, ruleset: _Optional[_Union[_game_pb2.Ruleset, _Mapping]] = ..., seed: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatConfig, _Mapping]]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., match_id: _Optional[str] = ...) -> None: ...

class SeatToken(_message.Message):
    __slots__ = ("seat", "token")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    token: str
    def __init__(self, seat: _Optional[int] = ..., token: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match", "tokens")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    tokens: _containers.RepeatedCompositeFieldContainer[SeatToken]
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ..., tokens: _Optional[_Iterable[_Union[SeatToken, _Mapping]]] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "name", "version", "connected")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    version: str
    connected: bool
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., connected: _Optional[bool] = ...) -> None: ...

class MatchInfo(_message.Message):
    __slots__ = ("match_id", "status", "ruleset", "seed", "seats", "time_control", "scores", "hands_played", "result", "record_path", "faults")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    HANDS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RECORD_PATH_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: MatchStatus
    ruleset: _game_pb2.Ruleset
    seed: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    time_control: _game_pb2.TimeControl
    scores: _containers.RepeatedScalarFieldContainer[int]
    hands_played: int
    result: _game_pb2.GameResult
    record_path: str
    faults: _containers.RepeatedCompositeFieldContainer[_game_pb2.Fault]
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[_Union[MatchStatus, str]] = ..., ruleset: _Optional[_Union[_game_pb2.Ruleset, _Mapping]] = ..., seed: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., scores: _Optional[_Iterable[int]] = ..., hands_played: _Optional[int] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., record_path: _Optional[str] = ..., faults: _Optional[_Iterable[_Union[_game_pb2.Fault, _Mapping]]] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetMatchResponse(_message.Message):
    __slots__ = ("match",)
    MATCH_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class WatchMatchResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _game_pb2.Event
    def __init__(self, event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ...) -> None: ...

class CancelMatchRequest(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelMatchResponse(_message.Message):
    __slots__ = ("match",)
    MATCH_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ...) -> None: ...
