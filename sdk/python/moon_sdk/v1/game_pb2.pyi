from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TrumpKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRUMP_KIND_UNSPECIFIED: _ClassVar[TrumpKind]
    TRUMP_KIND_NUMBER: _ClassVar[TrumpKind]
    TRUMP_KIND_DOUBLES: _ClassVar[TrumpKind]
    TRUMP_KIND_NO_TRUMP: _ClassVar[TrumpKind]

class AllPass(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ALL_PASS_UNSPECIFIED: _ClassVar[AllPass]
    ALL_PASS_REDEAL: _ClassVar[AllPass]
    ALL_PASS_FORCE_DEALER: _ClassVar[AllPass]

class Scoring(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORING_UNSPECIFIED: _ClassVar[Scoring]
    SCORING_POINTS: _ClassVar[Scoring]
    SCORING_MARKS: _ClassVar[Scoring]

class TeamMadeScores(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TEAM_MADE_SCORES_UNSPECIFIED: _ClassVar[TeamMadeScores]
    TEAM_MADE_SCORES_TRICKS: _ClassVar[TeamMadeScores]
    TEAM_MADE_SCORES_BID: _ClassVar[TeamMadeScores]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_BIDDING: _ClassVar[Phase]
    PHASE_DISCARD: _ClassVar[Phase]
    PHASE_TRUMP: _ClassVar[Phase]
    PHASE_PLAY: _ClassVar[Phase]
    PHASE_GAME_OVER: _ClassVar[Phase]

class Termination(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TERMINATION_UNSPECIFIED: _ClassVar[Termination]
    TERMINATION_TARGET: _ClassVar[Termination]
    TERMINATION_MOON: _ClassVar[Termination]
    TERMINATION_FORFEIT: _ClassVar[Termination]
    TERMINATION_CANCELLED: _ClassVar[Termination]
    TERMINATION_ABORTED: _ClassVar[Termination]
    TERMINATION_HAND_LIMIT: _ClassVar[Termination]

class FaultReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_REASON_UNSPECIFIED: _ClassVar[FaultReason]
    FAULT_REASON_STARTUP_STALL: _ClassVar[FaultReason]
    FAULT_REASON_TIMEOUT: _ClassVar[FaultReason]
    FAULT_REASON_DISCONNECT: _ClassVar[FaultReason]
    FAULT_REASON_PROTOCOL_ERROR: _ClassVar[FaultReason]
    FAULT_REASON_ILLEGAL_ACTION: _ClassVar[FaultReason]
    FAULT_REASON_CRASH: _ClassVar[FaultReason]
    FAULT_REASON_OUT_OF_MEMORY: _ClassVar[FaultReason]
TRUMP_KIND_UNSPECIFIED: TrumpKind
TRUMP_KIND_NUMBER: TrumpKind
TRUMP_KIND_DOUBLES: TrumpKind
TRUMP_KIND_NO_TRUMP: TrumpKind
ALL_PASS_UNSPECIFIED: AllPass
ALL_PASS_REDEAL: AllPass
ALL_PASS_FORCE_DEALER: AllPass
SCORING_UNSPECIFIED: Scoring
SCORING_POINTS: Scoring
SCORING_MARKS: Scoring
TEAM_MADE_SCORES_UNSPECIFIED: TeamMadeScores
TEAM_MADE_SCORES_TRICKS: TeamMadeScores
TEAM_MADE_SCORES_BID: TeamMadeScores
PHASE_UNSPECIFIED: Phase
PHASE_BIDDING: Phase
PHASE_DISCARD: Phase
PHASE_TRUMP: Phase
PHASE_PLAY: Phase
PHASE_GAME_OVER: Phase
TERMINATION_UNSPECIFIED: Termination
TERMINATION_TARGET: Termination
TERMINATION_MOON: Termination
TERMINATION_FORFEIT: Termination
TERMINATION_CANCELLED: Termination
TERMINATION_ABORTED: Termination
TERMINATION_HAND_LIMIT: Termination
FAULT_REASON_UNSPECIFIED: FaultReason
FAULT_REASON_STARTUP_STALL: FaultReason
FAULT_REASON_TIMEOUT: FaultReason
FAULT_REASON_DISCONNECT: FaultReason
FAULT_REASON_PROTOCOL_ERROR: FaultReason
FAULT_REASON_ILLEGAL_ACTION: FaultReason
FAULT_REASON_CRASH: FaultReason
FAULT_REASON_OUT_OF_MEMORY: FaultReason

class Tile(_message.Message):
    __slots__ = ("high", "low")
    HIGH_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    high: int
    low: int
    def __init__(self, high: _Optional[int] = ..., low: _Optional[int] = ...) -> None: ...

class Trump(_message.Message):
    __slots__ = ("kind", "number")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    kind: TrumpKind
    number: int
    def __init__(self, kind: _Optional[_Union[TrumpKind, str]] = ..., number: _Optional[int] = ...) -> None: ...

class Ruleset(_message.Message):
    __slots__ = ("preset", "players", "remove_double_blank", "min_bid", "all_pass", "trump_before_widow", "allow_doubles_trump", "allow_no_trump", "moon_wins_game", "scoring", "target_score", "target_marks", "team_made_scores")
    PRESET_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    REMOVE_DOUBLE_BLANK_FIELD_NUMBER: _ClassVar[int]
    MIN_BID_FIELD_NUMBER: _ClassVar[int]
    ALL_PASS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_BEFORE_WIDOW_FIELD_NUMBER: _ClassVar[int]
    ALLOW_DOUBLES_TRUMP_FIELD_NUMBER: _ClassVar[int]
    ALLOW_NO_TRUMP_FIELD_NUMBER: _ClassVar[int]
    MOON_WINS_GAME_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    TARGET_SCORE_FIELD_NUMBER: _ClassVar[int]
    TARGET_MARKS_FIELD_NUMBER: _ClassVar[int]
    TEAM_MADE_SCORES_FIELD_NUMBER: _ClassVar[int]
    preset: str
    players: int
    remove_double_blank: bool
    min_bid: int
    all_pass: AllPass
    trump_before_widow: bool
    allow_doubles_trump: bool
    allow_no_trump: bool
    moon_wins_game: bool
    scoring: Scoring
    target_score: int
    target_marks: int
    team_made_scores: TeamMadeScores
    def __init__(self, preset: _Optional[str] = ..., players: _Optional[int] = ..., remove_double_blank: _Optional[bool] = ..., min_bid: _Optional[int] = ..., all_pass: _Optional[_Union[AllPass, str]] = ..., trump_before_widow: _Optional[bool] = ..., allow_doubles_trump: _Optional[bool] = ..., allow_no_trump: _Optional[bool] = ..., moon_wins_game: _Optional[bool] = ..., scoring: _Optional[_Union[Scoring, str]] = ..., target_score: _Optional[int] = ..., target_marks: _Optional[int] = ..., team_made_scores: _Optional[_Union[TeamMadeScores, str]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("bid", "discard", "trump", "play")
    BID_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    bid: Bid
    discard: Tile
    trump: Trump
    play: Tile
    def __init__(self, bid: _Optional[_Union[Bid, _Mapping]] = ..., discard: _Optional[_Union[Tile, _Mapping]] = ..., trump: _Optional[_Union[Trump, _Mapping]] = ..., play: _Optional[_Union[Tile, _Mapping]] = ...) -> None: ...

class Bid(_message.Message):
    __slots__ = ("value",)
    VALUE_FIELD_NUMBER: _ClassVar[int]
    value: int
    def __init__(self, value: _Optional[int] = ...) -> None: ...

class SeatBid(_message.Message):
    __slots__ = ("seat", "value")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    value: int
    def __init__(self, seat: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...

class SeatPlay(_message.Message):
    __slots__ = ("seat", "tile")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TILE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    tile: Tile
    def __init__(self, seat: _Optional[int] = ..., tile: _Optional[_Union[Tile, _Mapping]] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("plays", "winner")
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    plays: _containers.RepeatedCompositeFieldContainer[SeatPlay]
    winner: int
    def __init__(self, plays: _Optional[_Iterable[_Union[SeatPlay, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class HandResult(_message.Message):
    __slots__ = ("hand_number", "dealer", "bids", "bidder", "bid", "trump", "tricks_taken", "made", "score_deltas", "scores")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    BIDDER_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    TRICKS_TAKEN_FIELD_NUMBER: _ClassVar[int]
    MADE_FIELD_NUMBER: _ClassVar[int]
    SCORE_DELTAS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    dealer: int
    bids: _containers.RepeatedCompositeFieldContainer[SeatBid]
    bidder: int
    bid: int
    trump: Trump
    tricks_taken: _containers.RepeatedScalarFieldContainer[int]
    made: bool
    score_deltas: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., bids: _Optional[_Iterable[_Union[SeatBid, _Mapping]]] = ..., bidder: _Optional[int] = ..., bid: _Optional[int] = ..., trump: _Optional[_Union[Trump, _Mapping]] = ..., tricks_taken: _Optional[_Iterable[int]] = ..., made: _Optional[bool] = ..., score_deltas: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "ruleset", "phase", "hand_number", "dealer", "current_seat", "hand", "widow", "discard", "bids", "bidder", "bid", "trump", "tricks", "trick", "tricks_taken", "scores", "hands")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    CURRENT_SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    WIDOW_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    BIDDER_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_TAKEN_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    ruleset: Ruleset
    phase: Phase
    hand_number: int
    dealer: int
    current_seat: int
    hand: _containers.RepeatedCompositeFieldContainer[Tile]
    widow: _containers.RepeatedCompositeFieldContainer[Tile]
    discard: Tile
    bids: _containers.RepeatedCompositeFieldContainer[SeatBid]
    bidder: int
    bid: int
    trump: Trump
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    trick: _containers.RepeatedCompositeFieldContainer[SeatPlay]
    tricks_taken: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    hands: _containers.RepeatedCompositeFieldContainer[HandResult]
    def __init__(self, seat: _Optional[int] = ..., ruleset: _Optional[_Union[Ruleset, _Mapping]] = ..., phase: _Optional[_Union[Phase, str]] = ..., hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., current_seat: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., widow: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., discard: _Optional[_Union[Tile, _Mapping]] = ..., bids: _Optional[_Iterable[_Union[SeatBid, _Mapping]]] = ..., bidder: _Optional[int] = ..., bid: _Optional[int] = ..., trump: _Optional[_Union[Trump, _Mapping]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., trick: _Optional[_Iterable[_Union[SeatPlay, _Mapping]]] = ..., tricks_taken: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., hands: _Optional[_Iterable[_Union[HandResult, _Mapping]]] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("seat", "reason", "detail", "forfeit")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    reason: FaultReason
    detail: str
    forfeit: bool
    def __init__(self, seat: _Optional[int] = ..., reason: _Optional[_Union[FaultReason, str]] = ..., detail: _Optional[str] = ..., forfeit: _Optional[bool] = ...) -> None: ...

class GameResult(_message.Message):
    __slots__ = ("termination", "winner", "scores", "places", "forfeit", "hands_played")
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_FIELD_NUMBER: _ClassVar[int]
    HANDS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    termination: Termination
    winner: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    forfeit: Fault
    hands_played: int
    def __init__(self, termination: _Optional[_Union[Termination, str]] = ..., winner: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., forfeit: _Optional[_Union[Fault, _Mapping]] = ..., hands_played: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("sequence", "hand_started", "bid", "widow_taken", "discarded", "trump_named", "played", "trick_won", "hand_ended", "game_ended", "fault")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    HAND_STARTED_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    WIDOW_TAKEN_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_FIELD_NUMBER: _ClassVar[int]
    TRUMP_NAMED_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    hand_started: HandStarted
    bid: SeatBid
    widow_taken: SeatOnly
    discarded: SeatOnly
    trump_named: TrumpNamed
    played: SeatPlay
    trick_won: TrickWon
    hand_ended: HandResult
    game_ended: GameResult
    fault: Fault
    def __init__(self, sequence: _Optional[int] = ..., hand_started: _Optional[_Union[HandStarted, _Mapping]] = ..., bid: _Optional[_Union[SeatBid, _Mapping]] = ..., widow_taken: _Optional[_Union[SeatOnly, _Mapping]] = ..., discarded: _Optional[_Union[SeatOnly, _Mapping]] = ..., trump_named: _Optional[_Union[TrumpNamed, _Mapping]] = ..., played: _Optional[_Union[SeatPlay, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., hand_ended: _Optional[_Union[HandResult, _Mapping]] = ..., game_ended: _Optional[_Union[GameResult, _Mapping]] = ..., fault: _Optional[_Union[Fault, _Mapping]] = ...) -> None: ...

class HandStarted(_message.Message):
    __slots__ = ("hand_number", "dealer")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    dealer: int
    def __init__(self, hand_number: _Optional[int] = ..., dealer: _Optional[int] = ...) -> None: ...

class SeatOnly(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class TrumpNamed(_message.Message):
    __slots__ = ("seat", "trump")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    seat: int
    trump: Trump
    def __init__(self, seat: _Optional[int] = ..., trump: _Optional[_Union[Trump, _Mapping]] = ...) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("seat", "trick_number", "trick")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TRICK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    seat: int
    trick_number: int
    trick: Trick
    def __init__(self, seat: _Optional[int] = ..., trick_number: _Optional[int] = ..., trick: _Optional[_Union[Trick, _Mapping]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("startup_ms", "decision_ms", "bank_ms", "reconnect_ms", "illegal_retries", "max_hands")
    STARTUP_MS_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_MS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_RETRIES_FIELD_NUMBER: _ClassVar[int]
    MAX_HANDS_FIELD_NUMBER: _ClassVar[int]
    startup_ms: int
    decision_ms: int
    bank_ms: int
    reconnect_ms: int
    illegal_retries: int
    max_hands: int
    def __init__(self, startup_ms: _Optional[int] = ..., decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., reconnect_ms: _Optional[int] = ..., illegal_retries: _Optional[int] = ..., max_hands: _Optional[int] = ...) -> None: ...
