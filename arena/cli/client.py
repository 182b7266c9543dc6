"""A small client of a competition host's API for the CLI (`moon submit`, `moon host
status|register`), and where a participant's token comes from: ``--token``, the
``MOON_TOKEN`` environment variable, or the moon config file
(``$XDG_CONFIG_HOME/moon/config.toml``, else ``~/.config/moon/config.toml``)::

    [servers."http://127.0.0.1:8000"]
    token = "moon_..."
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from ..errors import ArenaError


class ClientError(ArenaError):
    """A request that failed, or a server address that is no URL; the message is one line
    for the user."""


def config_path() -> Path:
    """The moon config file."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "moon" / "config.toml"


def _key(url: str) -> str:
    """``url`` without a trailing slash (the config file's key for a server).

    Raises:
        ClientError: ``url`` is not an http(s) URL (``127.0.0.1:8000`` for
            ``http://127.0.0.1:8000``).
    """
    if not url.startswith(("http://", "https://")):
        raise ClientError(f"{url!r} is not a host's address: write it as a URL, e.g. "
                          f"http://{url.removeprefix('//')}")
    return url.rstrip("/")


def find_token(url: str, given: str | None = None) -> str | None:
    """The token for the server at ``url``: ``given``, else MOON_TOKEN, else the config
    file's entry for that server; None if none.

    Raises:
        ClientError: ``url`` is not an http(s) URL.
    """
    _key(url)  # an address that is no URL is said first, whatever the token
    if given:
        return given
    if os.environ.get("MOON_TOKEN"):
        return os.environ["MOON_TOKEN"]
    path = config_path()
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    entry = data.get("servers", {}).get(_key(url), {})
    token = entry.get("token") if isinstance(entry, dict) else None
    return token if isinstance(token, str) else None


def save_token(url: str, token: str) -> Path:
    """Keep ``token`` for ``url`` in the config file (mode 0600); returns its path."""
    path = config_path()
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        data = {}
    data.setdefault("servers", {})[_key(url)] = {"token": token}
    lines = []
    for server, entry in sorted(data["servers"].items()):
        lines += [f'[servers."{server}"]', f'token = "{entry.get("token", "")}"', ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines))
    return path


def api(method: str, url: str, path: str, token: str | None = None, *,
        timeout: float = 60.0, text: bool = False, **kw: Any) -> Any:
    """Call the host's API; the JSON answer (or text with ``text``).

    Raises:
        ClientError: the host cannot be reached, or answered with an error (its
            ``detail`` is the message).
    """
    import httpx  # here, not at the top: `moon` loads without it (see arena/cli/__init__.py)

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        r = httpx.request(method, _key(url) + path, headers=headers, timeout=timeout, **kw)
    except httpx.HTTPError as e:
        raise ClientError(f"cannot reach {url}: {e}") from None
    if r.status_code >= 400:
        try:
            detail = r.json().get("detail")
        except ValueError:
            detail = r.text.strip()[:200]
        if not isinstance(detail, str):
            detail = str(detail)
        raise ClientError(f"{url}: {detail} (HTTP {r.status_code})")
    return r.text if text else r.json()
