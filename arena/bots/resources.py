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

import os
import shutil
import tempfile
from pathlib import Path

PACKAGE_DATA = Path(__file__).resolve().parents[1] / "_data"
"""Where an installed wheel keeps the folders (absent in a checkout)."""
CHECKOUT = Path(__file__).resolve().parents[2]
"""The repository's root when the arena runs from a checkout (editable install, tests)."""
BUNDLED = ("example_bots", "proto")
"""The top-level folders a wheel carries (``setup.py`` copies these; it runs this file on
its own, so the arena's modules are imported inside the functions that use them)."""


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
    example bot of the same name. An installed example bot with a build is its copy in the
    user's cache (:func:`buildable`).

    Raises:
        ConfigError: neither; the message lists the example bots.
    """
    from ..errors import ConfigError

    path = Path(value).expanduser()
    folder = path if path.is_absolute() else base / path
    if folder.name == "bot.toml" and folder.is_file():
        folder = folder.parent
    if folder.exists():
        return folder
    known = example_bot_names()
    bare = bool(value) and not any(c in value for c in "/\\")
    if bare and value in known:
        return buildable(resource_dir("example_bots") / value)
    if not bare:
        hint = (f"; an example bot is named by its name alone: {path.name!r}"
                if path.name in known and path.parent.name == "example_bots" else "")
        raise ConfigError(f"bot '{folder.resolve()}': no such folder{hint}")
    raise ConfigError(f"no bot {value!r}: not a folder (relative to {base}) nor an example "
                      f"bot ({', '.join(known) or 'this installation has none'})")


def cache_dir() -> Path:
    """The user's cache folder of the arena: ``$XDG_CACHE_HOME/moon-arena``, else
    ``~/.cache/moon-arena`` (it may not exist yet)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "moon-arena"


def buildable(folder: Path) -> Path:
    """Where the example bot in ``folder`` is built: ``folder`` itself in a checkout or for
    a bot with nothing to build; for an installed wheel's bot with a ``build`` command, its
    copy under :func:`cache_dir` (``<version>/example_bots/NAME``, beside a copy of
    ``proto/``, the layout the bots' relative paths expect), so that a build never writes
    into site-packages. The copy is made, or made again when the wheel's bot differs from
    it (its content hash, build outputs aside); the outputs of an earlier build are kept
    while it is the same.

    Raises:
        OSError: the cache folder cannot be written.
    """
    import tomllib

    from .. import __version__
    from .versions import bot_version

    if PACKAGE_DATA not in folder.parents:
        return folder
    try:
        build = tomllib.loads((folder / "bot.toml").read_text()).get("build")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return folder  # load_bot says what is wrong with it
    if not build:
        return folder
    root = cache_dir() / __version__
    copy = root / folder.relative_to(PACKAGE_DATA)
    if copy.is_dir() and bot_version(copy) == bot_version(folder):
        return copy
    root.mkdir(parents=True, exist_ok=True)
    proto = PACKAGE_DATA / "proto"
    if proto.is_dir() and not (root / "proto").is_dir():
        _copy_into(proto, root / "proto")
    _copy_into(folder, copy)
    return copy


def _copy_into(source: Path, target: Path) -> None:
    """``source`` copied to ``target``, replacing what was there, through a temporary
    folder beside it and a rename (two commands copying at once each get a whole copy)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    shutil.copytree(source, temp / "x", symlinks=True)
    shutil.rmtree(target, ignore_errors=True)
    try:
        (temp / "x").rename(target)
    except OSError:  # another command put its copy there first: keep that one
        pass
    shutil.rmtree(temp, ignore_errors=True)
