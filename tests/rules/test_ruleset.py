"""The Ruleset: defaults are the standard game, presets, (de)serialisation, and validation
errors that name the option."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from moon_sdk.rules import DOUBLES, NO_TRUMP, PRESETS, Ruleset, RulesetError


def test_defaults_are_standard_three_player_moon() -> None:
    r = Ruleset()
    assert r.to_dict() == {
        "players": 3, "remove_double_blank": False, "min_bid": 4, "all_pass": "redeal",
        "trump_before_widow": False, "allow_doubles_trump": True, "allow_no_trump": True,
        "moon_wins_game": True, "scoring": "points", "target_score": 21, "target_marks": 7,
        "team_made_scores": "tricks"}
    assert r.num_tiles == 22 and r.has_widow and r.num_sides == 3 and r.target == 21
    assert r.allowed_trumps == (0, 1, 2, 3, 4, 5, 6, DOUBLES, NO_TRUMP)


def test_derived_facts() -> None:
    r4 = Ruleset(players=4)
    assert r4.num_tiles == 28 and not r4.has_widow and r4.num_sides == 2
    assert [r4.side_of(s) for s in range(4)] == [0, 1, 0, 1]  # partnerships {0,2}, {1,3}
    assert [Ruleset().side_of(s) for s in range(3)] == [0, 1, 2]
    assert Ruleset(scoring="marks").target == 7
    assert Ruleset(scoring="marks", target_marks=5, target_score=30).target == 5
    assert Ruleset(target_score=30).target == 30


def test_presets() -> None:
    assert PRESETS["moon3"] == Ruleset()
    assert PRESETS["moon4"] == Ruleset(players=4)
    assert PRESETS["moon3-21"] == Ruleset(remove_double_blank=True)
    assert PRESETS["moon3-marks"] == Ruleset(scoring="marks")
    assert PRESETS["moon3-pagat"] == Ruleset(trump_before_widow=True)
    assert PRESETS["moon4-force"] == Ruleset(players=4, all_pass="force_dealer")
    assert Ruleset.preset("moon4", min_bid=5) == Ruleset(players=4, min_bid=5)
    assert Ruleset.preset("moon3") is PRESETS["moon3"]


def test_unknown_preset_lists_the_choices() -> None:
    with pytest.raises(RulesetError, match="unknown ruleset preset 'moon5'; choose one of: "
                                           "moon3, moon4, moon3-21"):
        Ruleset.preset("moon5")
    with pytest.raises(RulesetError, match="unknown ruleset preset 'nope'"):
        Ruleset.from_dict({"preset": "nope"})


@pytest.mark.parametrize("name", list(PRESETS))
def test_dict_and_json_round_trip(name: str) -> None:
    r = PRESETS[name]
    assert Ruleset.from_dict(r.to_dict()) == r
    assert Ruleset.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    assert Ruleset.from_dict({"preset": name}) == r


def test_from_dict_with_preset_and_overrides() -> None:
    r = Ruleset.from_dict({"preset": "moon4", "scoring": "marks", "target_marks": 3})
    assert r == Ruleset(players=4, scoring="marks", target_marks=3)


def test_from_dict_names_unknown_options() -> None:
    with pytest.raises(RulesetError,
                       match=r"^unknown ruleset option\(s\): colour, tiles; known: all_pass, "):
        Ruleset.from_dict({"tiles": 22, "colour": "red"})


def test_immutable() -> None:
    r = Ruleset()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.players = 4  # type: ignore[misc]
    assert hash(r) == hash(Ruleset())


@pytest.mark.parametrize("options,option,allowed", [
    ({"players": 2}, "players", "must be 3 or 4"),
    ({"players": 5}, "players", "must be 3 or 4"),
    ({"players": "3"}, "players", "must be 3 or 4"),
    ({"players": True}, "players", "must be 3 or 4"),
    ({"players": 4, "remove_double_blank": True}, "remove_double_blank",
     "only 3-player Moon removes 0-0"),
    ({"min_bid": 2}, "min_bid", "must be 3, 4 or 5"),
    ({"min_bid": 6}, "min_bid", "must be 3, 4 or 5"),
    ({"min_bid": 4.0}, "min_bid", "must be 3, 4 or 5"),
    ({"players": 3.0}, "players", "must be 3 or 4"),
    ({"all_pass": "misdeal"}, "all_pass", "must be 'redeal' or 'force_dealer'"),
    ({"scoring": "games"}, "scoring", "must be 'points' or 'marks'"),
    ({"team_made_scores": "both"}, "team_made_scores", "must be 'tricks' or 'bid'"),
    ({"team_made_scores": "bid"}, "team_made_scores",
     "only 4-player Moon has teams (3 players: a made bid always scores the bid)"),
    ({"remove_double_blank": 1}, "remove_double_blank", "must be true or false"),
    ({"trump_before_widow": "yes"}, "trump_before_widow", "must be true or false"),
    ({"allow_doubles_trump": None}, "allow_doubles_trump", "must be true or false"),
    ({"allow_no_trump": 0}, "allow_no_trump", "must be true or false"),
    ({"moon_wins_game": "false"}, "moon_wins_game", "must be true or false"),
    ({"target_score": 0}, "target_score", "must be a whole number from 1 to 1000"),
    ({"target_score": 1001}, "target_score", "must be a whole number from 1 to 1000"),
    ({"target_score": 21.0}, "target_score", "must be a whole number from 1 to 1000"),
    ({"target_score": True}, "target_score", "must be a whole number from 1 to 1000"),
    ({"target_marks": -7}, "target_marks", "must be a whole number from 1 to 1000"),
])
def test_validation_names_the_option(options: dict[str, Any], option: str,
                                     allowed: str) -> None:
    with pytest.raises(RulesetError) as e:
        Ruleset(**options)
    assert isinstance(e.value, ValueError)
    message = str(e.value)
    assert message.startswith(f"ruleset option {option}=")
    assert message.endswith(allowed)
    with pytest.raises(RulesetError, match=f"^ruleset option {option}="):
        Ruleset.from_dict(options)


@pytest.mark.parametrize("options", [
    {"min_bid": 3}, {"min_bid": 5}, {"all_pass": "force_dealer"}, {"target_score": 1},
    {"target_marks": 1000}, {"players": 4, "team_made_scores": "bid"},
    {"allow_doubles_trump": False, "allow_no_trump": False, "remove_double_blank": True},
])
def test_valid_options_accepted(options: dict[str, Any]) -> None:
    r = Ruleset(**options)
    for k, v in options.items():
        assert getattr(r, k) == v
