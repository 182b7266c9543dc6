"""Conversions between the rules engine's values and the protocol's messages (moon.v1).

The engine (:mod:`moon_sdk.rules`) knows nothing of protobuf; this module is the one
bridge, used by the referee, the SDK and the tools alike.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence

from moon_sdk.v1 import game_pb2 as pb

from .rules import (
    DOUBLES,
    NO_TRUMP,
    Action,
    ActionKind,
    Observation,
    Outcome,
    Phase,
    Ruleset,
    RulesetError,
    Tile,
    TileSet,
    Trick,
    Trump,
    action_kind,
    action_tile,
    action_trump,
    bid,
    bid_value,
    discard,
    name_trump,
    play,
    tile,
    tile_pips,
    tiles_of,
)
from .rules.observation import HandSummary

_new_object = object.__new__
_set_attribute = object.__setattr__

PROTOCOL_VERSION = 1
"""The protocol version this SDK and referee speak (Join.protocol_version)."""


class ProtocolError(ValueError):
    """A message that does not make sense (e.g. a tile end of 9, an empty action)."""


# -- tiles and trumps ------------------------------------------------------------------
def tile_to_pb(t: Tile) -> pb.Tile:
    """Engine tile → ``Tile{high, low}``."""
    h, lo = tile_pips(t)
    return pb.Tile(high=h, low=lo)


def tile_from_pb(m: pb.Tile) -> Tile:
    """``Tile{high, low}`` (either order) → engine tile.

    Raises:
        ProtocolError: an end outside 0..6.
    """
    if m.high > 6 or m.low > 6:
        raise ProtocolError(f"tile ends must be 0..6, got {m.high}-{m.low}")
    return tile(m.high, m.low)


def tiles_to_pb(mask: TileSet) -> list[pb.Tile]:
    """A tile set as a list of tiles, highest first."""
    return [tile_to_pb(t) for t in reversed(tiles_of(mask))]


_TILE_PB = tuple(tile_to_pb(t) for t in range(28))
"""Every tile's message, built once. Shared: only ever copied into another message (a
repeated or message field copies what it is given), never handed out or changed."""


def _shared_tiles(mask: TileSet) -> list[pb.Tile]:
    return [_TILE_PB[t] for t in reversed(tiles_of(mask))]


def trump_to_pb(trump: Trump) -> pb.Trump:
    """Engine trump contract → ``Trump``."""
    if trump == DOUBLES:
        return pb.Trump(kind=pb.TRUMP_KIND_DOUBLES)
    if trump == NO_TRUMP:
        return pb.Trump(kind=pb.TRUMP_KIND_NO_TRUMP)
    return pb.Trump(kind=pb.TRUMP_KIND_NUMBER, number=trump)


def trump_from_pb(m: pb.Trump) -> Trump:
    """``Trump`` → engine trump contract.

    Raises:
        ProtocolError: kind unset or out of range (saying which kinds are valid), or a
            number above 6.
    """
    if m.kind == pb.TRUMP_KIND_DOUBLES:
        return DOUBLES
    if m.kind == pb.TRUMP_KIND_NO_TRUMP:
        return NO_TRUMP
    if m.kind == pb.TRUMP_KIND_NUMBER:
        if m.number > 6:
            raise ProtocolError(f"trump number must be 0..6, got {m.number}")
        return int(m.number)
    valid = ", ".join(f"{pb.TrumpKind.Value(n)} ({n})" for n in pb.TrumpKind.keys()
                      if pb.TrumpKind.Value(n) != pb.TRUMP_KIND_UNSPECIFIED)
    if m.kind == pb.TRUMP_KIND_UNSPECIFIED:
        raise ProtocolError(f"trump kind is not set (TRUMP_KIND_UNSPECIFIED); valid kinds "
                            f"are {valid}")
    raise ProtocolError(f"trump kind {m.kind} is out of range: valid kinds are {valid}")


# -- actions ---------------------------------------------------------------------------
def action_to_pb(a: Action) -> pb.Action:
    """Engine action → ``Action``."""
    kind = action_kind(a)
    if kind is ActionKind.PLAY:
        return pb.Action(play=tile_to_pb(action_tile(a)))
    if kind is ActionKind.DISCARD:
        return pb.Action(discard=tile_to_pb(action_tile(a)))
    if kind is ActionKind.BID:
        return pb.Action(bid=pb.Bid(value=bid_value(a)))
    return pb.Action(trump=trump_to_pb(action_trump(a)))


def action_from_pb(m: pb.Action) -> Action:
    """``Action`` → engine action (not checked for legality).

    Raises:
        ProtocolError: no field set, or a value that is no action at all (bid 9, tile 8-1).
    """
    which = m.WhichOneof("kind")
    if which == "play":
        return play(tile_from_pb(m.play))
    if which == "discard":
        return discard(tile_from_pb(m.discard))
    if which == "trump":
        return name_trump(trump_from_pb(m.trump))
    if which == "bid":
        try:
            return bid(m.bid.value)
        except ValueError as e:
            raise ProtocolError(str(e)) from None
    raise ProtocolError("the action has none of bid, discard, trump, play set")


# -- ruleset ---------------------------------------------------------------------------
_ALL_PASS = {"redeal": pb.ALL_PASS_REDEAL, "force_dealer": pb.ALL_PASS_FORCE_DEALER}
_SCORING = {"points": pb.SCORING_POINTS, "marks": pb.SCORING_MARKS}
_TEAM = {"tricks": pb.TEAM_MADE_SCORES_TRICKS, "bid": pb.TEAM_MADE_SCORES_BID}
_OPTIONAL = ("players", "remove_double_blank", "min_bid", "trump_before_widow",
             "allow_doubles_trump", "allow_no_trump", "moon_wins_game", "target_score",
             "target_marks")


def ruleset_to_pb(r: Ruleset, preset: str = "") -> pb.Ruleset:
    """A complete ``Ruleset`` message with every field set."""
    m = pb.Ruleset(
        preset=preset, all_pass=_ALL_PASS[r.all_pass], scoring=_SCORING[r.scoring],
        team_made_scores=_TEAM[r.team_made_scores],
    )
    for name in _OPTIONAL:
        setattr(m, name, getattr(r, name))
    return m


CACHE_SIZE = 512
"""Entries of each conversion cache below (finished tricks and hands, which every turn
repeats). They only save work within a game, so a few hundred serve dozens of games at once;
larger caches held tens of MB for nothing in a server that plays games for weeks."""


@functools.lru_cache(maxsize=64)
def _ruleset_pb(r: Ruleset, preset: str) -> pb.Ruleset:
    # Shared: only ever copied into another message, never handed out or changed.
    return ruleset_to_pb(r, preset)


def ruleset_from_pb(m: pb.Ruleset) -> Ruleset:
    """A ``Ruleset`` message (preset + set fields) → engine ruleset.

    Raises:
        RulesetError: unknown preset or an invalid option.
    """
    return _ruleset_from_bytes(m.SerializeToString())


@functools.lru_cache(maxsize=64)
def _ruleset_from_bytes(data: bytes) -> Ruleset:
    # Every turn carries the ruleset: convert (and validate) each distinct one once. Equal
    # bytes are an equal message, and a Ruleset is immutable; errors are not cached.
    return _ruleset_from_pb(pb.Ruleset.FromString(data))


def _ruleset_from_pb(m: pb.Ruleset) -> Ruleset:
    options: dict[str, object] = {"preset": m.preset or "moon3"}
    for name in _OPTIONAL:
        if m.HasField(name):
            v = getattr(m, name)
            options[name] = v if isinstance(v, bool) else int(v)
    for field, table in (("all_pass", _ALL_PASS), ("scoring", _SCORING),
                         ("team_made_scores", _TEAM)):
        v = getattr(m, field)
        if v:
            names = [k for k, code in table.items() if code == v]
            if not names:
                raise RulesetError(f"ruleset option {field} has an unknown value {v}")
            options[field] = names[0]
    return Ruleset.from_dict(options)


# -- observation -----------------------------------------------------------------------
_PHASE = {Phase.BIDDING: pb.PHASE_BIDDING, Phase.DISCARD: pb.PHASE_DISCARD,
          Phase.TRUMP: pb.PHASE_TRUMP, Phase.PLAY: pb.PHASE_PLAY,
          Phase.GAME_OVER: pb.PHASE_GAME_OVER}
PHASE_FROM_PB = {v: k for k, v in _PHASE.items()}


def trick_to_pb(t: Trick) -> pb.Trick:
    """A completed trick."""
    return pb.Trick(plays=[pb.SeatPlay(seat=s, tile=tile_to_pb(x)) for s, x in t.plays],
                    winner=t.winner)


def hand_summary_to_pb(h: HandSummary) -> pb.HandResult:
    """Public result of a hand."""
    m = pb.HandResult(
        hand_number=h.number, dealer=h.dealer, bid=h.bid,
        bids=[pb.SeatBid(seat=s, value=v) for s, v in h.bids],
        tricks_taken=list(h.tricks_taken), score_deltas=list(h.deltas), scores=list(h.scores),
    )
    if h.bidder >= 0:
        m.bidder = h.bidder
        m.trump.CopyFrom(trump_to_pb(h.trump))
    if h.made is not None:
        m.made = h.made
    return m


@functools.lru_cache(maxsize=CACHE_SIZE)
def _trick_pb(t: Trick) -> pb.Trick:
    # Every turn carries the hand's finished tricks: convert each once (shared, as below).
    return pb.Trick(plays=[pb.SeatPlay(seat=s, tile=_TILE_PB[x]) for s, x in t.plays],
                    winner=t.winner)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _hand_summary_pb(h: HandSummary) -> pb.HandResult:
    # Every turn carries all the finished hands of the game: convert each once. Shared: only
    # ever copied into an Observation, never handed out or changed.
    return hand_summary_to_pb(h)


def observation_to_pb(o: Observation, preset: str = "") -> pb.Observation:
    """An engine :class:`Observation` → ``Observation`` (nothing hidden is added)."""
    m = pb.Observation(
        seat=o.seat, ruleset=_ruleset_pb(o.ruleset, preset), phase=_PHASE[o.phase],
        hand_number=o.hand_number, dealer=o.dealer, hand=_shared_tiles(o.hand),
        widow=_shared_tiles(o.widow), bids=[pb.SeatBid(seat=s, value=v) for s, v in o.bids],
        bid=o.bid, tricks=[_trick_pb(t) for t in o.tricks],
        trick=[pb.SeatPlay(seat=s, tile=_TILE_PB[x]) for s, x in o.trick],
        tricks_taken=list(o.tricks_taken), scores=list(o.scores),
        hands=[_hand_summary_pb(h) for h in o.hands],
    )
    if o.current_player >= 0:
        m.current_seat = o.current_player
    if o.discard >= 0:
        m.discard.CopyFrom(_TILE_PB[o.discard])
    if o.bidder >= 0:
        m.bidder = o.bidder
    if o.trump >= 0:
        m.trump.CopyFrom(trump_to_pb(o.trump))
    return m


def outcome_to_pb(o: Outcome, hands_played: int) -> pb.GameResult:
    """An engine :class:`Outcome` → ``GameResult``."""
    term = pb.TERMINATION_MOON if o.termination.value == "moon" else pb.TERMINATION_TARGET
    return pb.GameResult(termination=term, winner=o.winner, scores=list(o.scores),
                         places=list(o.places), hands_played=hands_played)


_TILE_AT = {(h, lo): tile(h, lo) for h in range(7) for lo in range(7)}
"""Each pair of ends (either order) → its tile: :func:`tile_from_pb` without the checks, for
the ends it accepts (others go through it, for its error)."""


def _tiles_from_pb(ms: object) -> TileSet:
    mask = 0
    at = _TILE_AT
    for m in ms:  # type: ignore[attr-defined]
        t = at.get((m.high, m.low))
        mask |= 1 << (tile_from_pb(m) if t is None else t)
    return mask


@functools.lru_cache(maxsize=CACHE_SIZE)
def _action_from_bytes(data: bytes) -> Action:
    # A turn's legal actions are a few of 72 messages: convert each once (errors are not
    # cached: action_from_pb raises them every time).
    return action_from_pb(pb.Action.FromString(data))


def _trick_from_pb(m: pb.Trick) -> Trick:
    plays = tuple((p.seat, tile_from_pb(p.tile)) for p in m.plays)
    return Trick(plays[0][0] if plays else 0, plays, m.winner)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _trick_from_bytes(data: bytes) -> Trick:
    # Every turn carries the hand's finished tricks: convert each once (as hands below).
    return _trick_from_pb(pb.Trick.FromString(data))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _hand_summary_from_bytes(data: bytes) -> HandSummary:
    # Every turn carries all the finished hands of the game: convert each once. Equal bytes
    # are an equal message, and a HandSummary is immutable; errors are not cached.
    h = pb.HandResult.FromString(data)
    return HandSummary(
        h.hand_number, h.dealer, tuple((b.seat, b.value) for b in h.bids),
        h.bidder if h.HasField("bidder") else -1, h.bid,
        trump_from_pb(h.trump) if h.HasField("bidder") else -1,
        tuple(h.tricks_taken), h.made if h.HasField("made") else None,
        tuple(h.score_deltas), tuple(h.scores))


def observation_from_pb(m: pb.Observation, legal: list[pb.Action] | None = None) -> Observation:
    """``Observation`` (+ the turn's legal actions) → engine :class:`Observation`, the typed
    view a bot works with.

    Raises:
        ProtocolError: a value out of range.
        RulesetError: an invalid ruleset.
    """
    return _observation(m, legal, tuple([
        _hand_summary_from_bytes(h.SerializeToString()) for h in m.hands]))


class ObservationReader:
    """:func:`observation_from_pb` for the turns of one game, in order (one stream's, as the
    SDK's bot loop reads them), giving equal observations for less: every turn carries all
    the game's finished hands (docs/protocol.md, "Turns and actions": earlier hands'
    results), a list a game only ever adds to at the end, and the hand's finished tricks,
    likewise within a hand. So the ones already converted are kept and each turn checks
    (one encoding) that the last of them is still the message it was; a list that is not
    the last one extended is converted whole, as :func:`observation_from_pb` does. Not
    thread-safe: one reader per stream."""

    __slots__ = ("_hands", "_last", "_tricks", "_last_trick")

    def __init__(self) -> None:
        self._hands: tuple[HandSummary, ...] = ()
        self._last = b""
        """The encoding of the last finished hand converted (b"": none)."""
        self._tricks: tuple[Trick, ...] = ()
        self._last_trick = b""
        """The encoding of the last finished trick converted (b"": none)."""

    def observation(self, m: pb.Observation, legal: list[pb.Action] | None = None
                    ) -> Observation:
        """As :func:`observation_from_pb` (same result, same errors)."""
        return _observation(m, legal, self._finished_hands(m.hands), self)

    def deferred(self, m: pb.Observation, legal: Sequence[pb.Action] | None = None
                 ) -> Observation:
        """As :meth:`observation` (an equal :class:`Observation`), but only the seat, the
        phase, the numbers (hand number, dealer, seat to act, bidder, bid) and the legal
        actions are converted now; every other field is converted from ``m`` when it is
        first read (then kept), so a bot pays only for the fields it reads: most never read
        the earlier hands or the finished tricks. This is what the SDK's bot loop hands to
        :meth:`moon_sdk.Bot.act`. ``m`` must not be changed afterwards.

        Raises:
            ProtocolError: a legal action out of range; a field read later that holds a
                value out of range raises it when it is read.
        """
        obs = _new_object(_DeferredObservation)
        _set_attribute(obs, "__dict__", {
            "seat": m.seat,
            "phase": PHASE_FROM_PB.get(m.phase, Phase.BIDDING),
            "hand_number": m.hand_number,
            "dealer": m.dealer,
            "current_player": m.current_seat if m.HasField("current_seat") else -1,
            "bidder": m.bidder if m.HasField("bidder") else -1,
            "bid": m.bid,
            "legal_actions": tuple([_action_from_bytes(a.SerializeToString()) for a in legal]
                                   if legal else ()),
            "outcome": None,
            "_message": m,
            "_reader": self,
        })
        return obs

    def _finished_hands(self, ms: object) -> tuple[HandSummary, ...]:
        hands = self._hands
        n, k = len(ms), len(hands)  # type: ignore[arg-type]
        if k and n >= k and ms[k - 1].SerializeToString() == self._last:  # type: ignore[index]
            if n == k:
                return hands
            hands = hands + tuple([_hand_summary_from_bytes(h.SerializeToString())
                                   for h in ms[k:]])  # type: ignore[index]
        else:
            hands = tuple([_hand_summary_from_bytes(h.SerializeToString())
                           for h in ms])  # type: ignore[attr-defined]
        self._hands = hands
        self._last = ms[n - 1].SerializeToString() if n else b""  # type: ignore[index]
        return hands

    def _finished_tricks(self, ms: object) -> tuple[Trick, ...]:
        tricks = self._tricks
        n, k = len(ms), len(tricks)  # type: ignore[arg-type]
        if k and n >= k and ms[k - 1].SerializeToString() == self._last_trick:  # type: ignore[index]
            if n == k:
                return tricks
            tricks = tricks + tuple([_trick_from_bytes(t.SerializeToString())
                                     for t in ms[k:]])  # type: ignore[index]
        elif n:
            tricks = tuple([_trick_from_bytes(t.SerializeToString())
                            for t in ms])  # type: ignore[attr-defined]
        else:
            tricks = ()
        self._tricks = tricks
        self._last_trick = ms[n - 1].SerializeToString() if n else b""  # type: ignore[index]
        return tricks


def _observation(m: pb.Observation, legal: list[pb.Action] | None,
                 hands: tuple[HandSummary, ...],
                 reader: ObservationReader | None = None) -> Observation:
    obs = _new_object(Observation)  # its fields set at once: a frozen dataclass's __init__
    _set_attribute(obs, "__dict__", {  # sets them one by one (object.__setattr__), slower
        "seat": m.seat,
        "ruleset": ruleset_from_pb(m.ruleset),
        "phase": PHASE_FROM_PB.get(m.phase, Phase.BIDDING),
        "hand_number": m.hand_number,
        "dealer": m.dealer,
        "current_player": m.current_seat if m.HasField("current_seat") else -1,
        "hand": _tiles_from_pb(m.hand),
        "widow": _tiles_from_pb(m.widow),
        "discard": tile_from_pb(m.discard) if m.HasField("discard") else -1,
        "bids": tuple((b.seat, b.value) for b in m.bids),
        "bidder": m.bidder if m.HasField("bidder") else -1,
        "bid": m.bid,
        "trump": trump_from_pb(m.trump) if m.HasField("trump") else -1,
        "tricks": reader._finished_tricks(m.tricks) if reader is not None else tuple([
            _trick_from_bytes(t.SerializeToString()) for t in m.tricks]),
        "trick": tuple((p.seat, tile_from_pb(p.tile)) for p in m.trick),
        "tricks_taken": tuple(m.tricks_taken),
        "scores": tuple(m.scores),
        "hands": hands,
        "legal_actions": tuple([_action_from_bytes(a.SerializeToString()) for a in legal]
                               if legal else ()),
        "outcome": None,
    })
    return obs


_DEFERRED: dict[str, Callable[[pb.Observation, ObservationReader], object]] = {
    "ruleset": lambda m, r: ruleset_from_pb(m.ruleset),
    "hand": lambda m, r: _tiles_from_pb(m.hand),
    "widow": lambda m, r: _tiles_from_pb(m.widow),
    "discard": lambda m, r: tile_from_pb(m.discard) if m.HasField("discard") else -1,
    "bids": lambda m, r: tuple((b.seat, b.value) for b in m.bids),
    "trump": lambda m, r: trump_from_pb(m.trump) if m.HasField("trump") else -1,
    "tricks": lambda m, r: r._finished_tricks(m.tricks),
    "trick": lambda m, r: tuple((p.seat, tile_from_pb(p.tile)) for p in m.trick),
    "tricks_taken": lambda m, r: tuple(m.tricks_taken),
    "scores": lambda m, r: tuple(m.scores),
    "hands": lambda m, r: r._finished_hands(m.hands),
}
"""The fields :meth:`ObservationReader.deferred` converts when they are first read, each as
:func:`_observation` does."""

_OBSERVATION_FIELDS = tuple(f.name for f in dataclasses.fields(Observation))


class _DeferredObservation(Observation):
    """An :class:`Observation` some of whose fields are converted from the message when first
    read (:meth:`ObservationReader.deferred`). Equal to, hashed, shown, copied and pickled as
    the plain :class:`Observation` of the same fields."""

    def __getattr__(self, name: str) -> object:  # only for attributes not yet in __dict__
        convert = _DEFERRED.get(name)
        if convert is None:
            raise AttributeError(f"'Observation' object has no attribute {name!r}")
        d = self.__dict__
        value = d[name] = convert(d["_message"], d["_reader"])
        return value

    def plain(self) -> Observation:
        """The same observation as a plain :class:`Observation`, every field converted."""
        obs = _new_object(Observation)
        _set_attribute(obs, "__dict__", {f: getattr(self, f) for f in _OBSERVATION_FIELDS})
        return obs

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Observation):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _OBSERVATION_FIELDS)

    def __hash__(self) -> int:
        return hash(self.plain())

    def __repr__(self) -> str:
        return repr(self.plain())

    def __reduce__(self) -> tuple[object, ...]:
        return _new_observation, (tuple(getattr(self, f) for f in _OBSERVATION_FIELDS),)


def _new_observation(values: tuple[object, ...]) -> Observation:
    return Observation(*values)  # type: ignore[arg-type]
