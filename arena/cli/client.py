"""A small client of a competition host's API for the CLI (`moon submit`, `moon host
status|register`), and where a participant's token comes from: ``--token``, the
``MOON_TOKEN`` environment variable, or the moon config file
(``$XDG_CONFIG_HOME/moon/config.toml``, else ``~/.config/moon/config.toml``)::

    [servers."http://127.0.0.1:8000"]
    default = "bob"             # whose token is used without --as: the last registered
    token = "moon_..."          # the default's token (what older versions of moon read)

    [servers."http://127.0.0.1:8000".tokens]
    alice = "moon_..."          # one token per participant registered from here
    bob = "moon_..."
"""

from __future__ import annotations

import json
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


def _read_config() -> dict[str, Any]:
    """The config file's contents; empty if there is no file.

    Raises:
        ClientError: the file exists but cannot be read, or is not UTF-8 TOML (it is never
            rewritten then: the tokens it keeps would be lost).
    """
    path = config_path()
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else \
            "not UTF-8" if isinstance(e, UnicodeDecodeError) else str(e)
        raise ClientError(f"the moon config file {path} cannot be read ({why}): fix it or "
                          "move it aside (it keeps your saved tokens)") from None


def check_config() -> None:
    """Nothing if the config file can be read (or there is none).

    Raises:
        ClientError: it exists but cannot be read, or is not UTF-8 TOML.
    """
    _read_config()


def _entry(data: dict[str, Any], url: str) -> dict[str, Any]:
    servers = data.get("servers", {})
    entry = servers.get(_key(url), {}) if isinstance(servers, dict) else {}
    return entry if isinstance(entry, dict) else {}


def _tokens(entry: dict[str, Any]) -> dict[str, str]:
    """A server entry's tokens by participant name (a file of an older moon has only the
    entry's ``token``, under no name)."""
    tokens = entry.get("tokens", {})
    if not isinstance(tokens, dict):
        return {}
    return {k: v for k, v in tokens.items() if isinstance(v, str)}


def saved_names(url: str) -> list[str]:
    """The participants whose tokens the config file keeps for the server at ``url``,
    sorted."""
    return sorted(_tokens(_entry(_read_config(), url)))


def find_token(url: str, given: str | None = None, as_: str | None = None) -> str | None:
    """The token for the server at ``url``: ``given``; else, with ``as_``, that
    participant's token in the config file; else MOON_TOKEN; else the config file's default
    for that server (the participant registered last); None if none.

    Raises:
        ClientError: ``url`` is not an http(s) URL, the config file keeps no token of
            ``as_`` for that server (the message names those it keeps), or it cannot be
            read.
    """
    _key(url)  # an address that is no URL is said first, whatever the token
    if given:
        return given
    if not as_ and os.environ.get("MOON_TOKEN"):
        return os.environ["MOON_TOKEN"]
    try:
        data = _read_config()
    except ClientError as e:
        raise ClientError(f"{e}, or pass --token") from None
    if as_:
        tokens = _tokens(_entry(data, url))
        if as_ not in tokens:
            have = ", ".join(sorted(tokens)) or "none"
            raise ClientError(f"no token of {as_!r} for {_key(url)} in {config_path()} "
                              f"(saved there: {have}): register {as_} with `moon host "
                              f"register {_key(url)} {as_}`, or pass --token")
        return tokens[as_]
    token = _entry(data, url).get("token")
    return token if isinstance(token, str) else None


def _quote(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL, which JSON leaves as it is,
    must be escaped in TOML).

    Raises:
        ClientError: ``text`` holds a lone surrogate (no TOML string can).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ClientError("text that is not UTF-8 (a lone surrogate) cannot be kept in "
                          "the moon config file") from None
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def save_token(url: str, token: str, name: str | None = None, default: bool = True) -> Path:
    """Keep ``token`` for ``url`` in the config file (mode 0600), as participant ``name``'s
    (other participants' tokens for that server are kept) and, with ``default``, as the
    server's default (used without ``--as``); returns the file's path. Without ``name``
    only the default is replaced. The file is replaced whole (a new file of mode 0600
    renamed over it), so a failed save leaves it as it was.

    Raises:
        ClientError: the config file cannot be read (it is left alone), or ``url``,
            ``name`` or ``token`` cannot be written in it.
    """
    path = config_path()
    data = _read_config()
    servers = data.get("servers", {})
    if not isinstance(servers, dict):
        servers = {}
    entry = _entry(data, url)
    tokens = _tokens(entry)
    if name:
        tokens[name] = token
    if default or not name:
        servers[_key(url)] = {"default": name or "", "token": token, "tokens": tokens}
    else:
        servers[_key(url)] = {**entry, "tokens": tokens}
    lines = []
    for server, e in sorted(servers.items()):
        if not isinstance(e, dict):
            continue
        lines.append(f"[servers.{_quote(server)}]")
        if e.get("default"):
            lines.append(f"default = {_quote(str(e['default']))}")
        lines += [f"token = {_quote(str(e.get('token', '')))}", ""]
        named = _tokens(e)
        if named:
            lines.append(f"[servers.{_quote(server)}.tokens]")
            lines += [f"{_quote(k)} = {_quote(v)}" for k, v in sorted(named.items())] + [""]
    text = "\n".join(lines)
    tomllib.loads(text)  # what is written reads back (each string went through _quote)
    real = path.resolve()  # a config file that is a link (to dotfiles): its target replaced
    tmp = real.with_name(f".{real.name}.{os.getpid()}.tmp")
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)  # one a killed save left: made anew, mode 0600
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise ClientError(f"cannot write the moon config file {path}: "
                          f"{e.strerror or e}") from None
    return path


def unnamed_token(url: str) -> bool:
    """True if the config file keeps a token for ``url`` under no participant's name (a
    file written by an older moon)."""
    entry = _entry(_read_config(), url)
    return isinstance(entry.get("token"), str) and not _tokens(entry)


def default_name(url: str) -> str | None:
    """Whose token the config file uses for ``url`` without ``--as``, or None."""
    name = _entry(_read_config(), url).get("default")
    return name if isinstance(name, str) and name else None


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
