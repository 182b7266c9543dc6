"""`moon host`: a long-running competition server (submissions, a build and validation
gate, continuous matchmaking, ratings, a JSON API). See docs/host.md.

- :func:`init_competition` writes a competition folder;
- :func:`open_host` reads one, brings its database up to date and recovers after a stop;
- :func:`serve` runs the API and the games until stopped.

A running competition is a :class:`arena.host.service.Host`, a small façade over its parts:
the build queue and validation gate (:mod:`.builds`), the matchmaker that picks and plays
rated games (:mod:`.matchmaker`, with its picks in :mod:`.matchmaking`), the recorder, the
one writer of game results (:mod:`.recorder`), the ratings' batch fits (:mod:`.ratings`)
and the retention of records and logs (:mod:`.retention`); they share the one writer
thread (:mod:`.writer`) and the executor's slots (:mod:`.executor`). The API is
:mod:`.app` and :mod:`.routes`, the database :mod:`.models` and :mod:`.db`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError
from .settings import ADMIN_TOKEN_FILE, SETTINGS_FILE, TEMPLATE, load_settings, new_master_seed

REFERENCE = "reference-random"


def init_competition(folder: Path, *, name: str = "Moon competition", open_registration:
                     bool = False, trust_local: bool = False, seed: int | None = None) -> str:
    """Write a new competition folder: a commented ``competition.toml``, the organiser's
    ``admin.token`` (mode 0600) and a reference bot (``reference/random``, random legal
    plays) for validation games. Returns the admin token.

    Raises:
        ConfigError: the folder already holds a competition.
    """
    from ..bots.starters import scaffold
    from .security import new_token

    if (folder / SETTINGS_FILE).exists():
        raise ConfigError(f"{folder / SETTINGS_FILE} exists already: this folder holds a "
                          "competition (`moon host run` serves it)")
    folder.mkdir(parents=True, exist_ok=True)
    text = TEMPLATE.format(folder=folder, name=name.replace('"', "'"),
                           registration="open" if open_registration else "invite",
                           runner="local" if trust_local else "docker",
                           trust_local="true" if trust_local else "false",
                           seed=new_master_seed() if seed is None else seed)
    (folder / SETTINGS_FILE).write_text(text)
    token = new_token()
    path = folder / ADMIN_TOKEN_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    ref = folder / "reference"
    ref.mkdir(exist_ok=True)
    made = scaffold(REFERENCE, "python", ref)
    made.rename(ref / "random")
    return token


__all__ = ["init_competition", "load_settings", "ConfigError"]
