"""Options shared by several commands, defined once as decorators (pip-tools style)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

import click
from moon_sdk.rules import PRESETS, Ruleset, RulesetError

from ..core.timecontrol import TimeControl
from ..errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


def ruleset_options(f: F) -> F:
    """``--preset`` and repeatable ``--option NAME=VALUE``."""
    f = click.option("--option", "-o", "options", multiple=True, metavar="NAME=VALUE",
                     help="Override a ruleset option, e.g. -o min_bid=3 "
                          "-o all_pass=force_dealer (see docs/rules.md).")(f)
    f = click.option("--preset", default="moon3", show_default=True,
                     type=click.Choice(list(PRESETS)), help="Ruleset preset.")(f)
    return f


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return int(text)
    except ValueError:
        return text


def parse_options(options: tuple[str, ...]) -> dict[str, Any]:
    """``--option NAME=VALUE``s as a dict (values as bools, ints or text).

    Raises:
        click.BadParameter: an option that is not NAME=VALUE.
    """
    overrides = {}
    for o in options:
        name, sep, value = o.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{o!r}: write NAME=VALUE", param_hint="--option")
        overrides[name.strip()] = _value(value.strip())
    return overrides


def make_ruleset(preset: str, options: tuple[str, ...]) -> Ruleset:
    """The ruleset from ``--preset`` and ``--option``s.

    Raises:
        click.BadParameter: malformed option or invalid ruleset.
    """
    overrides = parse_options(options)
    try:
        return Ruleset.from_dict({"preset": preset, **overrides})
    except (RulesetError, TypeError) as e:
        raise click.BadParameter(str(e), param_hint="--option") from None


TIME_HELP = {
    "startup_ms": "Milliseconds for every bot to start and join, from the game's creation; "
                  "a bot not there by then forfeits (a start-up stall).",
    "decision_ms": "Milliseconds a bot has for each decision before its bank is drawn on.",
    "bank_ms": "Extra milliseconds for the whole game: a decision that runs over takes "
               "from it; a bot out of both forfeits (a timeout).",
    "reconnect_ms": "Milliseconds a dropped stream has to come back with its token (the "
                    "turn's clock keeps running meanwhile); later, the bot forfeits.",
    "illegal_retries": "Illegal actions a bot may take back in a game (each answered with "
                       "the reason); one more forfeits.",
    "max_hands": "Deals (redeals included) after which a game that has not ended is "
                 "adjudicated on the scores, so bots that always pass cannot hang it.",
}
"""The help of each time control flag (one per :class:`TimeControl` field)."""


def time_options(f: F) -> F:
    """``--startup-ms``, ``--decision-ms``, ``--bank-ms``, ``--reconnect-ms``,
    ``--illegal-retries``, ``--max-hands``: one flag per :class:`TimeControl` field, with
    its :data:`TIME_HELP` and default."""
    for fld in reversed(dataclasses.fields(TimeControl)):
        flag = "--" + fld.name.replace("_", "-")
        f = click.option(flag, fld.name, type=int, default=None, metavar="N",
                         help=f"{TIME_HELP[fld.name]} [default: {fld.default}]")(f)
    return f


def make_time_control(**kw: int | None) -> TimeControl:
    """A :class:`TimeControl` from the ``time_options`` values.

    Raises:
        click.BadParameter: an invalid value.
    """
    given = {k: v for k, v in kw.items() if v is not None}
    try:
        return TimeControl(**given)
    except ConfigError as e:
        raise click.BadParameter(str(e)) from None


TIME_FIELDS = tuple(f.name for f in dataclasses.fields(TimeControl))
