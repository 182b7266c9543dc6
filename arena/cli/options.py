"""Options shared by several commands, defined once as decorators (pip-tools style)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

import click
from moon_sdk.rules import PRESETS, Ruleset, RulesetError

from ..errors import ConfigError
from ..timecontrol import TimeControl

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


def time_options(f: F) -> F:
    """``--decision-ms``, ``--bank-ms``, ``--startup-ms``, ``--reconnect-ms``,
    ``--illegal-retries`` (defaults from :class:`TimeControl`)."""
    for fld in reversed(dataclasses.fields(TimeControl)):
        flag = "--" + fld.name.replace("_", "-").replace("-ms", "-ms")
        f = click.option(flag, fld.name, type=int, default=None,
                         help=f"{(fld.name)} (default {fld.default}).")(f)
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
