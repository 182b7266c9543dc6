"""Folders of the repository that the CLI needs at run time, wherever the arena runs from.

``example_bots/`` (``moon play heuristic random`` finds bots there by name; ``moon new-bot``
takes the Go and Node.js bots' protocol code and dependency locks from two of them) and
``proto/`` (the ``.proto`` files a Node.js bot loads) are top-level folders of the
repository. A wheel carries copies of them in ``arena/_data/``, made by the build itself
(``setup.py``, ``build_py``) from the same folders: nothing in the repository is a copy
that could go stale, and the wheel's copies mirror the repository's layout, so relative
paths between them (``example_bots/node-heuristic`` loads ``../../proto``) hold in both.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DATA = Path(__file__).resolve().parents[1] / "_data"
"""Where an installed wheel keeps the folders (absent in a checkout)."""
CHECKOUT = Path(__file__).resolve().parents[2]
"""The repository's root when the arena runs from a checkout (editable install, tests)."""
BUNDLED = ("example_bots", "proto")
"""The top-level folders a wheel carries (``setup.py`` copies these)."""


def resource_dir(name: str) -> Path:
    """The folder ``name`` (one of :data:`BUNDLED`): the wheel's copy when the arena is
    installed from a wheel, else the checkout's own folder. The path may not exist (an
    installation that has neither); callers say what is missing.

    Raises:
        ValueError: ``name`` is not one of :data:`BUNDLED` (a wheel would not carry it).
    """
    if name not in BUNDLED:
        raise ValueError(f"{name!r} is not one of the folders a wheel carries: {BUNDLED}")
    bundled = PACKAGE_DATA / name
    return bundled if bundled.is_dir() else CHECKOUT / name


def example_bot_names() -> list[str]:
    """The names of the example bots (folders of ``example_bots/`` with a ``bot.toml``),
    sorted; empty when there are none. Raises nothing."""
    folder = resource_dir("example_bots")
    if not folder.is_dir():
        return []
    return sorted(d.name for d in folder.iterdir() if (d / "bot.toml").is_file())
