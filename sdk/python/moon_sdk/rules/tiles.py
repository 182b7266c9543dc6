"""Tiles, suits, trump contracts and the precomputed follow/rank tables.

docs/rules.md, "Tiles, suits and rank" and "Trumps". A tile is a small int 0..27 and a set of
tiles (a hand, the widow, a tile set) is a 28-bit mask, in the manner of python-chess
squares and bitboards::

    >>> t = parse_tile("6-4")
    >>> tile_name(t), tile_pips(t), is_double(t)
    ('6-4', (6, 4), False)
    >>> [tile_name(x) for x in tiles_of(mask_of([parse_tile("3-3"), parse_tile("2-1")]))]
    ['2-1', '3-3']

Tile index: ``high * (high + 1) // 2 + low`` for ``high >= low``, so ``0-0`` is 0 and
``6-6`` is 27. A trump contract is an int: 0..6 for a number, :data:`DOUBLES` (7) or
:data:`NO_TRUMP` (8).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Tile = int
"""A tile, 0..27 (see the module docstring for the numbering)."""
TileSet = int
"""A set of tiles as a 28-bit mask: bit ``t`` set means tile ``t`` is in the set."""
Trump = int
"""A trump contract: 0..6 (that number is trump), DOUBLES (7) or NO_TRUMP (8)."""

NUM_TILES = 28
DOUBLES: Trump = 7
NO_TRUMP: Trump = 8
ALL_TRUMPS: tuple[Trump, ...] = tuple(range(9))
LED_TRUMPS = 7
"""The 'suit led' index meaning a trump was led (number suits are 0..6)."""

SUIT_NAMES = ("blanks", "ones", "twos", "threes", "fours", "fives", "sixes")
"""Plural names of the number suits, for messages ("must follow sixes")."""


class TileParseError(ValueError):
    """Text that does not name a tile (or a trump), e.g. ``"7-1"`` or ``"six-four"``."""


def tile(high: int, low: int) -> Tile:
    """The tile with these two ends (in either order), each 0..6.

    Raises:
        TileParseError: an end outside 0..6.
    """
    if not (0 <= high <= 6 and 0 <= low <= 6):
        raise TileParseError(f"tile ends must be 0..6, got {high}-{low}")
    if low > high:
        high, low = low, high
    return high * (high + 1) // 2 + low


_PIPS: tuple[tuple[int, int], ...] = tuple((h, lo) for h in range(7) for lo in range(h + 1))
TILE_NAMES: tuple[str, ...] = tuple(f"{h}-{lo}" for h, lo in _PIPS)
"""Canonical name of each tile, high end first: ``TILE_NAMES[27] == "6-6"``."""
_BY_NAME = {name: i for i, name in enumerate(TILE_NAMES)}


def tile_pips(t: Tile) -> tuple[int, int]:
    """The ends of tile ``t`` as ``(high, low)``."""
    return _PIPS[t]


def tile_name(t: Tile) -> str:
    """Canonical text of tile ``t``, high end first, e.g. ``"6-4"``."""
    return TILE_NAMES[t]


def parse_tile(text: str) -> Tile:
    """Parse ``"6-4"`` (or ``"4-6"``, ``"6:4"``, ``"64"``) into a tile.

    Raises:
        TileParseError: the text is not two pip numbers 0..6.
    """
    s = text.strip().replace(":", "-").replace("|", "-")
    if len(s) == 2 and s.isdigit():
        s = f"{s[0]}-{s[1]}"
    parts = s.split("-")
    if len(parts) != 2 or not all(p.isdigit() and len(p) == 1 for p in parts):
        raise TileParseError(f"not a tile: {text!r} (write it as two ends 0..6, e.g. '6-4')")
    return tile(int(parts[0]), int(parts[1]))


def is_double(t: Tile) -> bool:
    """True if both ends of ``t`` are equal."""
    h, lo = _PIPS[t]
    return h == lo


_CHUNKS: tuple[tuple[list[Tile], ...], ...] = tuple(
    tuple([10 * c + i for i in range(10) if m >> i & 1] for m in range(1024)) for c in range(3)
)
"""``_CHUNKS[c][m]``: the tiles of bits ``10c..10c+9`` of a mask whose 10 bits there are
``m`` (three lookups list a hand: faster than scanning its bits)."""
_C0, _C1, _C2 = _CHUNKS


def tiles_of(mask: TileSet) -> list[Tile]:
    """The tiles of ``mask``, ascending (a new list)."""
    return _C0[mask & 1023] + _C1[mask >> 10 & 1023] + _C2[mask >> 20]


def iter_tiles(mask: TileSet) -> Iterator[Tile]:
    """Iterate over the tiles of ``mask``, ascending."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_of(tiles: Iterable[Tile]) -> TileSet:
    """The mask of a collection of tiles."""
    m = 0
    for t in tiles:
        m |= 1 << t
    return m


def count(mask: TileSet) -> int:
    """Number of tiles in ``mask``."""
    return mask.bit_count()


def format_tiles(mask: TileSet) -> str:
    """Tiles of ``mask`` as text, highest first: ``"6-6 6-4 2-1"``."""
    return " ".join(TILE_NAMES[t] for t in reversed(tiles_of(mask)))


FULL_SET: TileSet = (1 << NUM_TILES) - 1
"""The double-six set, 28 tiles (4-player Moon)."""
DOUBLES_MASK: TileSet = mask_of(tile(p, p) for p in range(7))
SUIT_MASK: tuple[TileSet, ...] = tuple(
    mask_of(t for t in range(NUM_TILES) if s in _PIPS[t]) for s in range(7)
)
"""``SUIT_MASK[s]``: every tile with an ``s`` end (before trumps are taken out)."""
SET_22: TileSet = (FULL_SET & ~SUIT_MASK[0]) | (1 << tile(0, 0))
"""The 3-player set: both ends 1..6, plus 0-0 (22 tiles)."""
SET_21: TileSet = FULL_SET & ~SUIT_MASK[0]
"""The 3-player set with ``remove_double_blank`` (21 tiles)."""


def trump_name(trump: Trump) -> str:
    """Text of a trump contract: ``"0"``..``"6"``, ``"doubles"`` or ``"none"``."""
    if trump == DOUBLES:
        return "doubles"
    if trump == NO_TRUMP:
        return "none"
    if 0 <= trump <= 6:
        return str(trump)
    raise ValueError(f"not a trump contract: {trump}")


_TRUMP_WORDS = {
    "doubles": DOUBLES, "double": DOUBLES, "d": DOUBLES,
    "none": NO_TRUMP, "no-trump": NO_TRUMP, "notrump": NO_TRUMP, "nt": NO_TRUMP,
    "no-trumps": NO_TRUMP, "follow-me": NO_TRUMP,
}
_TRUMP_WORDS.update({name: i for i, name in enumerate(SUIT_NAMES)})


def parse_trump(text: str) -> Trump:
    """Parse ``"5"``, ``"fives"``, ``"doubles"`` or ``"none"`` into a trump contract.

    Raises:
        TileParseError: not a trump contract.
    """
    s = text.strip().lower().replace(" ", "-").replace("_", "-")
    if len(s) == 1 and s.isdigit() and int(s) <= 6:
        return int(s)
    if s in _TRUMP_WORDS:
        return _TRUMP_WORDS[s]
    raise TileParseError(f"not a trump contract: {text!r} (use 0..6, 'doubles' or 'none')")


# ---------------------------------------------------------------------------------------
# Precomputed tables, indexed by trump contract (0..8) and suit led (0..6, 7 = trumps).

def _is_trump(trump: Trump, t: Tile) -> bool:
    h, lo = _PIPS[t]
    if trump == DOUBLES:
        return h == lo
    if trump == NO_TRUMP:
        return False
    return trump in (h, lo)


TRUMP_MASK: tuple[TileSet, ...] = tuple(
    mask_of(t for t in range(NUM_TILES) if _is_trump(tr, t)) for tr in ALL_TRUMPS
)
"""``TRUMP_MASK[trump]``: the tiles that are trumps under that contract."""

FOLLOW_MASK: tuple[tuple[TileSet, ...], ...] = tuple(
    tuple(SUIT_MASK[s] & ~TRUMP_MASK[tr] for s in range(7)) + (TRUMP_MASK[tr],)
    for tr in ALL_TRUMPS
)
"""``FOLLOW_MASK[trump][led]``: tiles that follow the suit led (led 7 = trumps).

A tile follows number suit ``s`` if it has an ``s`` end and is not a trump; a trump lead
is followed only by trumps (docs/rules.md, "Play")."""


def _led(trump: Trump, t: Tile) -> int:
    if _is_trump(trump, t):
        return LED_TRUMPS
    return _PIPS[t][0]


LED_SUIT: tuple[tuple[int, ...], ...] = tuple(
    tuple(_led(tr, t) for t in range(NUM_TILES)) for tr in ALL_TRUMPS
)
"""``LED_SUIT[trump][tile]``: the suit a lead of ``tile`` calls for (7 = trumps, else the
higher end; a non-trump double leads its own number)."""


def _rank(trump: Trump, led: int, t: Tile) -> int:
    h, lo = _PIPS[t]
    if _is_trump(trump, t):
        if trump == DOUBLES:
            return 100 + h
        return 100 + (7 if h == lo else (lo if h == trump else h))
    if led < 7 and (FOLLOW_MASK[trump][led] >> t) & 1:
        return 7 if h == lo else (lo if h == led else h)
    return -1


RANK: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(_rank(tr, led, t) for t in range(NUM_TILES)) for led in range(8))
    for tr in ALL_TRUMPS
)
"""``RANK[trump][led][tile]``: strength in a trick; the highest wins. Trumps rank 100+,
tiles of the suit led 0..7 (the double 7, others by their other end), anything else -1:
a tile that neither follows nor trumps never wins."""


def trick_winner_index(trump: Trump, tiles: Iterable[Tile]) -> int:
    """Index (0-based, in play order) of the winning tile of a trick; the first is the lead.

    docs/rules.md, "Play". Worked example 4: trump 4, ``6-5, 6-4, 5-4`` → 1 (``6-4``).
    """
    it = list(tiles)
    ranks = RANK[trump][LED_SUIT[trump][it[0]]]
    best = 0
    for i in range(1, len(it)):
        if ranks[it[i]] > ranks[it[best]]:
            best = i
    return best


def legal_follow(trump: Trump, led_tile: Tile, hand: TileSet) -> TileSet:
    """Tiles of ``hand`` that may be played to a trick led by ``led_tile`` (docs/rules.md,
    "Play"): the tiles that follow the suit led if any, else the whole hand."""
    f = hand & FOLLOW_MASK[trump][LED_SUIT[trump][led_tile]]
    return f if f else hand
