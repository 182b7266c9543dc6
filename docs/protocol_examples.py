"""The JSON examples of docs/protocol.md, made from real messages with json_format.

    python docs/protocol_examples.py           # print every example as Markdown
    python docs/protocol_examples.py --write   # rewrite the examples in docs/protocol.md

In protocol.md each example is the fenced block right after a line ``<!-- example: NAME -->``;
its info string names the message type (```` ```json moon.v1.PlayRequest ````).
tests/test_proto.py fails when a block differs from what this script makes, when a block does
not parse into its type, and when a message type of moon.v1 appears in no example. The
messages follow one 3-player hand (preset moon3): seat 1 bids 4, seat 2 bids 5, the dealer
(seat 0) passes; seat 2 takes the widow, discards and names sixes.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.message import Message
from moon_sdk.v1 import bot_pb2, game_pb2, match_pb2

DOC = Path(__file__).with_name("protocol.md")
BLOCK = re.compile(
    r"(<!-- example: (?P<name>[\w-]+) -->\n```json )(?P<type>\S+)\n(?P<json>.*?)\n```", re.DOTALL
)

WIDTH = 88  # longest line of an example block
MATCH_ID = "m-20250614-0042"
SEED = 8731042291


def tile(text: str) -> game_pb2.Tile:
    """``"6-4"`` -> Tile(high=6, low=4)."""
    high, low = (int(end) for end in text.split("-"))
    return game_pb2.Tile(high=high, low=low)


def tiles(text: str) -> list[game_pb2.Tile]:
    """``"6-4 5-5"`` -> [Tile, Tile]."""
    return [tile(word) for word in text.split()]


def plays(*pairs: tuple[int, str]) -> list[game_pb2.SeatPlay]:
    """(seat, tile) pairs -> [SeatPlay]."""
    return [game_pb2.SeatPlay(seat=seat, tile=tile(text)) for seat, text in pairs]


def moon3() -> game_pb2.Ruleset:
    """The moon3 preset as the referee sends it: every option set."""
    return game_pb2.Ruleset(
        preset="moon3",
        players=3,
        remove_double_blank=False,
        min_bid=4,
        all_pass=game_pb2.ALL_PASS_REDEAL,
        trump_before_widow=False,
        allow_doubles_trump=True,
        allow_no_trump=True,
        moon_wins_game=True,
        scoring=game_pb2.SCORING_POINTS,
        target_score=21,
        target_marks=7,
        team_made_scores=game_pb2.TEAM_MADE_SCORES_TRICKS,
    )


def time_control() -> game_pb2.TimeControl:
    """The referee's defaults."""
    return game_pb2.TimeControl(
        startup_ms=10000, decision_ms=2000, bank_ms=30000, reconnect_ms=5000, illegal_retries=2,
        max_hands=200,
    )


SIXES = game_pb2.Trump(kind=game_pb2.TRUMP_KIND_NUMBER, number=6)
BIDS = [
    game_pb2.SeatBid(seat=1, value=4),
    game_pb2.SeatBid(seat=2, value=5),
    game_pb2.SeatBid(seat=0, value=0),
]
SEAT_NAMES = ["greedy", "first-legal", "montecarlo"]


def event(sequence: int, **kind: Message) -> bot_pb2.PlayResponse:
    """A public event as a bot receives it."""
    return bot_pb2.PlayResponse(event=game_pb2.Event(sequence=sequence, **kind))


def reply(request_id: int, **action: Message) -> bot_pb2.PlayRequest:
    """A bot's answer to a turn."""
    return bot_pb2.PlayRequest(
        action=bot_pb2.ActionReply(request_id=request_id, action=game_pb2.Action(**action))
    )


def hand_result() -> game_pb2.HandResult:
    """Seat 2 bid 5 and took 5 tricks: made."""
    return game_pb2.HandResult(
        hand_number=0,
        dealer=0,
        bids=BIDS,
        bidder=2,
        bid=5,
        trump=SIXES,
        tricks_taken=[1, 1, 5],
        made=True,
        score_deltas=[1, 1, 5],
        scores=[1, 1, 5],
    )


def game_result() -> game_pb2.GameResult:
    """Seat 2 reached 21 first."""
    return game_pb2.GameResult(
        termination=game_pb2.TERMINATION_TARGET,
        winner=2,
        scores=[14, 9, 23],
        places=[2, 3, 1],
        hands_played=6,
    )


def match_info(status: match_pb2.MatchStatus.ValueType) -> match_pb2.MatchInfo:
    """The match of these examples, as MatchService reports it."""
    connected = status == match_pb2.MATCH_STATUS_RUNNING
    return match_pb2.MatchInfo(
        match_id=MATCH_ID,
        status=status,
        ruleset=moon3(),
        seed=SEED if status == match_pb2.MATCH_STATUS_FINISHED else 0,  # hidden till the end
        seats=[
            match_pb2.SeatInfo(seat=seat, name=name, version="1.0", connected=connected)
            for seat, name in enumerate(SEAT_NAMES)
        ],
        time_control=time_control(),
        scores=[0, 0, 0],
        hands_played=0,
    )


def examples() -> dict[str, Message]:
    """Every example of docs/protocol.md, by name, in the order of a game."""
    turn_bid = bot_pb2.Turn(
        request_id=1,
        observation=game_pb2.Observation(
            seat=1,
            ruleset=moon3(),
            phase=game_pb2.PHASE_BIDDING,
            hand_number=0,
            dealer=0,
            current_seat=1,
            hand=tiles("6-3 5-5 5-1 4-4 4-3 3-1 0-0"),
            tricks_taken=[0, 0, 0],
            scores=[0, 0, 0],
        ),
        legal_actions=[game_pb2.Action(bid=game_pb2.Bid(value=v)) for v in (0, 4, 5, 6, 7, 21)],
        decision_ms=2000,
        bank_ms=30000,
    )
    turn_play = bot_pb2.Turn(
        request_id=13,
        observation=game_pb2.Observation(
            seat=1,
            ruleset=moon3(),
            phase=game_pb2.PHASE_PLAY,
            hand_number=0,
            dealer=0,
            current_seat=1,
            hand=tiles("5-5 5-1 4-4 4-3 3-1"),
            bids=BIDS,
            bidder=2,
            bid=5,
            trump=SIXES,
            tricks=[
                game_pb2.Trick(plays=plays((2, "6-6"), (0, "6-1"), (1, "6-3")), winner=2),
                game_pb2.Trick(plays=plays((2, "6-4"), (0, "6-5"), (1, "0-0")), winner=0),
            ],
            trick=plays((0, "5-3")),
            tricks_taken=[1, 0, 1],
            scores=[0, 0, 0],
        ),
        legal_actions=[game_pb2.Action(play=t) for t in tiles("5-5 5-1")],
        decision_ms=2000,
        bank_ms=29310,
    )
    passed_out = game_pb2.HandResult(
        hand_number=1,
        dealer=1,
        bids=[game_pb2.SeatBid(seat=s) for s in (2, 0, 1)],
        tricks_taken=[0, 0, 0],
        score_deltas=[0, 0, 0],
        scores=[1, 1, 5],
    )
    started = match_info(match_pb2.MATCH_STATUS_RUNNING)
    started.scores[:] = [1, 1, 5]
    started.hands_played = 1
    cancelled = match_info(match_pb2.MATCH_STATUS_FINISHED)
    cancelled.result.CopyFrom(
        game_pb2.GameResult(
            termination=game_pb2.TERMINATION_CANCELLED, scores=[1, 1, 5], hands_played=1
        )
    )
    cancelled.scores[:] = [1, 1, 5]
    cancelled.hands_played = 1
    return {
        # BotService.Play, in the order of a game (seat 1's stream).
        "join": bot_pb2.PlayRequest(
            join=bot_pb2.Join(
                token="tok-7Qx2b9LmV4",
                protocol_version=1,
                bot_name="first-legal",
                bot_version="1.0",
            )
        ),
        # the stdio protocol's hello: a stdio bot's first line, read by the bridge
        "stdio-hello": bot_pb2.PlayRequest(join=bot_pb2.Join(quiet=True)),
        "welcome": bot_pb2.PlayResponse(
            welcome=bot_pb2.Welcome(
                match_id=MATCH_ID,
                seat=1,
                ruleset=moon3(),
                time_control=time_control(),
                protocol_version=1,
                seat_names=SEAT_NAMES,
            )
        ),
        "hand-started": event(1, hand_started=game_pb2.HandStarted(hand_number=0, dealer=0)),
        "turn-bid": bot_pb2.PlayResponse(turn=turn_bid),
        "reply-bid": reply(1, bid=game_pb2.Bid(value=4)),
        "reply-pass": reply(3, bid=game_pb2.Bid(value=0)),
        "event-bid": event(2, bid=game_pb2.SeatBid(seat=1, value=4)),
        "widow-taken": event(5, widow_taken=game_pb2.SeatOnly(seat=2)),
        "reply-discard": reply(4, discard=tile("3-2")),
        "discarded": event(6, discarded=game_pb2.SeatOnly(seat=2)),
        "reply-trump": reply(5, trump=SIXES),
        "trump-named": event(7, trump_named=game_pb2.TrumpNamed(seat=2, trump=SIXES)),
        "turn-play": bot_pb2.PlayResponse(turn=turn_play),
        "reply-play": reply(13, play=tile("5-1")),
        "rejected": bot_pb2.PlayResponse(
            rejected=bot_pb2.Rejected(
                request_id=13, reason="4-4 does not follow the suit led (5)", retries_left=1
            )
        ),
        "fault-illegal": event(
            17,
            fault=game_pb2.Fault(
                seat=1,
                reason=game_pb2.FAULT_REASON_ILLEGAL_ACTION,
                detail="4-4 does not follow the suit led (5)",
            ),
        ),
        "played": event(17, played=game_pb2.SeatPlay(seat=1, tile=tile("5-1"))),
        "trick-won": event(
            19,
            trick_won=game_pb2.TrickWon(
                seat=2,
                trick_number=2,
                trick=game_pb2.Trick(plays=plays((0, "5-3"), (1, "5-1"), (2, "5-4")), winner=2),
            ),
        ),
        "hand-ended": event(36, hand_ended=hand_result()),
        "hand-ended-redeal": event(41, hand_ended=passed_out),
        "fault-timeout": event(
            212,
            fault=game_pb2.Fault(
                seat=0,
                reason=game_pb2.FAULT_REASON_TIMEOUT,
                detail="no answer within the 2000 ms decision time plus only 139 ms of "
                "bank left (of 2000 ms at the start)",
                forfeit=True,
            ),
        ),
        "game-ended": event(240, game_ended=game_result()),
        # MatchService.
        "create-match-request": match_pb2.CreateMatchRequest(
            ruleset=game_pb2.Ruleset(preset="moon3"),
            seed=SEED,
            seats=[match_pb2.SeatConfig(name=name, version="1.0") for name in SEAT_NAMES],
            match_id=MATCH_ID,
        ),
        "create-match-response": match_pb2.CreateMatchResponse(
            match=match_info(match_pb2.MATCH_STATUS_WAITING),
            tokens=[
                match_pb2.SeatToken(seat=0, token="tok-Hc81pR0aZe"),
                match_pb2.SeatToken(seat=1, token="tok-7Qx2b9LmV4"),
                match_pb2.SeatToken(seat=2, token="tok-Ws5nJ3kYd6"),
            ],
        ),
        "get-match-request": match_pb2.GetMatchRequest(match_id=MATCH_ID),
        "get-match-response": match_pb2.GetMatchResponse(match=started),
        "list-matches-request": match_pb2.ListMatchesRequest(),
        "list-matches-response": match_pb2.ListMatchesResponse(matches=[started]),
        "watch-match-request": match_pb2.WatchMatchRequest(match_id=MATCH_ID),
        "watch-match-response": match_pb2.WatchMatchResponse(
            event=game_pb2.Event(sequence=7, trump_named=game_pb2.TrumpNamed(seat=2, trump=SIXES))
        ),
        "cancel-match-request": match_pb2.CancelMatchRequest(
            match_id=MATCH_ID, reason="operator: room closing"
        ),
        "cancel-match-response": match_pb2.CancelMatchResponse(match=cancelled),
    }


def to_json(message: Message) -> str:
    """The proto3 JSON mapping as json_format writes it, laid out to read well.

    Only whitespace differs from ``json_format.MessageToJson``: a value that fits in the line
    stays on one line.
    """
    return _layout(json.loads(json_format.MessageToJson(message)), 0, 0)


def _layout(value: object, indent: int, column: int) -> str:
    """JSON text of ``value``, starting at ``column`` on a line indented by ``indent``."""
    flat = json.dumps(value, separators=(", ", ": "))
    if column + len(flat) < WIDTH or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(key)}: "
            + _layout(item, indent + 2, indent + 2 + len(json.dumps(key)) + 2)
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + _layout(item, indent + 2, indent + 2) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def rewrite(text: str) -> str:
    """``text`` (protocol.md) with every example block replaced by the generated one."""
    made = examples()

    def fill(match: re.Match[str]) -> str:
        message = made[match["name"]]
        return f"{match[1]}{message.DESCRIPTOR.full_name}\n{to_json(message)}\n```"

    return BLOCK.sub(fill, text)


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        DOC.write_text(rewrite(DOC.read_text()))
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for name, message in examples().items():
        print(f"<!-- example: {name} -->\n```json {message.DESCRIPTOR.full_name}")
        print(f"{to_json(message)}\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
