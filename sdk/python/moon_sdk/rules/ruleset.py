"""The `Ruleset`: every option of docs/rules.md in one immutable value, and named presets."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .tiles import DOUBLES, FULL_SET, NO_TRUMP, SET_21, SET_22, TileSet, Trump


class RulesetError(ValueError):
    """An impossible or unknown ruleset option; the message names the option."""


@dataclass(frozen=True)
class Ruleset:
    """Every variation of docs/rules.md as a named option; the defaults are standard 3-player Moon.

    Raises:
        RulesetError: on construction, for a value out of range or an impossible
            combination (the message names the option and what is allowed).
    """

    players: int = 3
    """3 (each for themself) or 4 (partnerships {0, 2} and {1, 3})."""
    remove_double_blank: bool = False
    """3 players only: also remove 0-0, leaving 21 tiles and no widow."""
    min_bid: int = 4
    """Lowest bid allowed: 3, 4 or 5."""
    all_pass: str = "redeal"
    """When everyone passes: ``"redeal"`` or ``"force_dealer"`` (the dealer must bid)."""
    trump_before_widow: bool = False
    """With a widow: name trumps first, then take the widow and discard."""
    allow_doubles_trump: bool = True
    """Doubles may be named as trumps."""
    allow_no_trump: bool = True
    """No trumps may be named."""
    moon_wins_game: bool = True
    """A made bid of 21 wins the game at once (else it scores 21)."""
    scoring: str = "points"
    """``"points"`` (tricks and bids) or ``"marks"`` (one mark per hand)."""
    target_score: int = 21
    """Points that end the game (``scoring="points"``)."""
    target_marks: int = 7
    """Marks that end the game (``scoring="marks"``)."""
    team_made_scores: str = "tricks"
    """4 players: a made contract scores the team's ``"tricks"`` or the ``"bid"``."""

    def __post_init__(self) -> None:
        def bad(option: str, value: object, allowed: str) -> RulesetError:
            return RulesetError(f"ruleset option {option}={value!r} is invalid: {allowed}")

        if type(self.players) is not int or self.players not in (3, 4):
            raise bad("players", self.players, "must be 3 or 4")
        if self.players == 4 and self.remove_double_blank:
            raise bad("remove_double_blank", True, "only 3-player Moon removes 0-0")
        if type(self.min_bid) is not int or self.min_bid not in (3, 4, 5):
            raise bad("min_bid", self.min_bid, "must be 3, 4 or 5")
        if self.all_pass not in ("redeal", "force_dealer"):
            raise bad("all_pass", self.all_pass, "must be 'redeal' or 'force_dealer'")
        if self.scoring not in ("points", "marks"):
            raise bad("scoring", self.scoring, "must be 'points' or 'marks'")
        if self.team_made_scores not in ("tricks", "bid"):
            raise bad("team_made_scores", self.team_made_scores, "must be 'tricks' or 'bid'")
        if self.players == 3 and self.team_made_scores != "tricks":
            raise bad("team_made_scores", self.team_made_scores, "only 4-player Moon has "
                      "teams (3 players: a made bid always scores the bid)")
        for name in ("remove_double_blank", "trump_before_widow", "allow_doubles_trump",
                     "allow_no_trump", "moon_wins_game"):
            if not isinstance(getattr(self, name), bool):
                raise bad(name, getattr(self, name), "must be true or false")
        for name in ("target_score", "target_marks"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1000:
                raise bad(name, v, "must be a whole number from 1 to 1000")

    # -- derived facts -------------------------------------------------------------------
    @property
    def tile_set(self) -> TileSet:
        """The tiles in play: 22 (3 players), 21 (``remove_double_blank``) or 28."""
        if self.players == 4:
            return FULL_SET
        return SET_21 if self.remove_double_blank else SET_22

    @property
    def num_tiles(self) -> int:
        """Size of the tile set: 21, 22 or 28."""
        return self.tile_set.bit_count()

    @property
    def has_widow(self) -> bool:
        """True when a tile is left over after the deal (3 players, 22 tiles)."""
        return self.num_tiles > 7 * self.players

    @property
    def num_sides(self) -> int:
        """Scoring sides: 3 players, or 2 partnerships."""
        return 3 if self.players == 3 else 2

    @property
    def target(self) -> int:
        """The score that ends the game in this ruleset's unit (points or marks)."""
        return self.target_score if self.scoring == "points" else self.target_marks

    @property
    def allowed_trumps(self) -> tuple[Trump, ...]:
        """Trump contracts the bidder may name (docs/rules.md, "Trumps"): numbers 0..6 (not 0
        in a set without 0-0), then doubles and no trumps if allowed."""
        out = [t for t in range(7) if not (t == 0 and not self.tile_set & 1)]
        if self.allow_doubles_trump:
            out.append(DOUBLES)
        if self.allow_no_trump:
            out.append(NO_TRUMP)
        return tuple(out)

    def side_of(self, seat: int) -> int:
        """Scoring side of a seat: the seat itself (3 players) or its partnership, seat % 2."""
        return seat if self.players == 3 else seat % 2

    # -- (de)serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Every option as a plain dict (JSON/TOML ready)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ruleset:
        """Build from a dict of options, which may hold a ``preset`` key to start from.

        Raises:
            RulesetError: an unknown option or preset, or a bad value.
        """
        data = dict(data)
        base = cls.preset(str(data.pop("preset"))) if "preset" in data else cls()
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesetError(
                f"unknown ruleset option(s): {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            )
        return dataclasses.replace(base, **data)

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Ruleset:
        """A named preset (see :data:`PRESETS`), optionally with options overridden.

        Raises:
            RulesetError: unknown preset name or bad override.
        """
        try:
            base = PRESETS[name]
        except KeyError:
            raise RulesetError(
                f"unknown ruleset preset {name!r}; choose one of: {', '.join(PRESETS)}"
            ) from None
        return dataclasses.replace(base, **overrides) if overrides else base


PRESETS: dict[str, Ruleset] = {
    "moon3": Ruleset(),
    "moon4": Ruleset(players=4),
    "moon3-21": Ruleset(remove_double_blank=True),
    "moon3-marks": Ruleset(scoring="marks"),
    "moon3-pagat": Ruleset(trump_before_widow=True),
    "moon4-force": Ruleset(players=4, all_pass="force_dealer"),
}
"""Named rulesets: ``moon3`` and ``moon4`` are the standard games; the others are the
seeds' variations (21 tiles, marks, pagat's widow order, forced dealer)."""

