"""The examples in docstrings are run: every module of the rules package (the doctests
are part of its documentation, so a stale one fails here), and the arena modules that
carry examples."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import moon_sdk.rules
import pytest

RULES = sorted(f"moon_sdk.rules.{m.name}" for m in pkgutil.iter_modules(moon_sdk.rules.__path__))
ARENA = ["arena.check.conformance", "arena.bots.manifest", "arena.core.clock",
         "arena.core.names", "arena.core.results", "arena.host.pages.live", "arena.cli.ladder",
         "arena.cli.stops", "arena.web.views", "arena.host.ratings"]


@pytest.mark.parametrize("name", ["moon_sdk.rules", *RULES, *ARENA])
def test_doctests_pass(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS,
                             report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} fail"


def test_the_rules_package_has_examples():
    tried = sum(doctest.testmod(importlib.import_module(n), report=False).attempted
                for n in RULES)
    assert tried >= 10
