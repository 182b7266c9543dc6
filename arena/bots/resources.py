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

from ..errors import ConfigError

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


def find_bot_folder(value: str, base: Path) -> Path:
    """The bot folder that ``value`` names: a folder (or its ``bot.toml``) relative to
    ``base`` (a ladder file's folder, the current one) or absolute, when it exists; else,
    for a bare name (no ``/``), the example bot of that name (``heuristic``, ``random``:
    :func:`example_bot_names`), so that a ladder file, ``moon play`` and ``moon match`` name
    them the same in a clone and in a pip install. A folder that exists wins over an
    example bot of the same name.

    Raises:
        ConfigError: neither; the message lists the example bots.
    """
    path = Path(value).expanduser()
    folder = path if path.is_absolute() else base / path
    if folder.name == "bot.toml" and folder.is_file():
        folder = folder.parent
    if folder.exists():
        return folder
    known = example_bot_names()
    bare = bool(value) and not any(c in value for c in "/\\")
    if bare and value in known:
        return resource_dir("example_bots") / value
    if not bare:
        hint = (f"; an example bot is named by its name alone: {path.name!r}"
                if path.name in known and path.parent.name == "example_bots" else "")
        raise ConfigError(f"bot '{folder.resolve()}': no such folder{hint}")
    raise ConfigError(f"no bot {value!r}: not a folder (relative to {base}) nor an example "
                      f"bot ({', '.join(known) or 'this installation has none'})")
