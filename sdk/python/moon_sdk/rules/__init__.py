"""The Moon rules engine: pure, standard library only, importing nothing else of ours.

docs/rules.md is the spec. Tiles are ints 0..27 and tile sets are bitmasks (:mod:`.tiles`);
every variation is an option of one immutable :class:`Ruleset` (:mod:`.ruleset`); actions
are ints with a text form (:mod:`.actions`); :class:`GameState` runs a whole game
(:mod:`.state`); :func:`observe` gives one seat's view (:mod:`.observation`).
"""

from .actions import (
    MOON,
    MOON_BID,
    PASS,
    Action,
    ActionKind,
    ActionParseError,
    action_kind,
    action_name,
    action_tile,
    action_trump,
    bid,
    bid_value,
    discard,
    name_trump,
    parse_action,
    play,
)
from .observation import HandSummary, Observation, observe, summarize, unseen_tiles
from .ruleset import PRESETS, Ruleset, RulesetError
from .state import (
    DEAL_VERSION,
    GameState,
    HandRecord,
    IllegalActionError,
    Outcome,
    Phase,
    Termination,
    Trick,
    deal,
    first_dealer,
)
from .tiles import (
    DOUBLES,
    FOLLOW_MASK,
    LED_SUIT,
    NO_TRUMP,
    RANK,
    SUIT_NAMES,
    TILE_NAMES,
    TRUMP_MASK,
    Tile,
    TileParseError,
    TileSet,
    Trump,
    format_tiles,
    is_double,
    iter_tiles,
    legal_follow,
    mask_of,
    parse_tile,
    parse_trump,
    tile,
    tile_name,
    tile_pips,
    tiles_of,
    trick_winner_index,
    trump_name,
)

__all__ = [
    "MOON", "MOON_BID", "PASS", "Action", "ActionKind", "ActionParseError", "action_kind",
    "action_name", "action_tile", "action_trump", "bid", "bid_value", "discard", "name_trump",
    "parse_action", "play", "HandSummary", "Observation", "observe", "summarize",
    "unseen_tiles", "PRESETS", "Ruleset", "RulesetError", "GameState", "HandRecord",
    "DEAL_VERSION", "IllegalActionError", "Outcome", "Phase", "Termination", "Trick", "deal",
    "first_dealer",
    "DOUBLES", "FOLLOW_MASK", "LED_SUIT", "NO_TRUMP", "RANK", "SUIT_NAMES", "TILE_NAMES",
    "TRUMP_MASK", "Tile", "TileParseError", "TileSet", "Trump", "format_tiles", "is_double",
    "iter_tiles", "legal_follow", "mask_of", "parse_tile", "parse_trump", "tile", "tile_name",
    "tile_pips", "tiles_of", "trick_winner_index", "trump_name",
]
