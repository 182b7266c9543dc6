"""Tokens and invite codes: made random, stored only as their sha256."""

from __future__ import annotations

import hashlib
import secrets

TOKEN_PREFIX = "moon_"


def new_token() -> str:
    """A fresh API token (``moon_`` and 32 random URL-safe characters, 192 bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def new_invite() -> str:
    """A fresh invite code (16 random URL-safe characters)."""
    return secrets.token_urlsafe(12)


def digest(secret: str) -> str:
    """The sha256 (hex) under which a token or invite code is stored. The secrets are
    long and random, so a plain hash is enough: there is nothing to guess. Any text has one:
    a lone surrogate (``"\\ud800"``, which JSON may carry) is hashed as it is, so it is only
    an unknown secret (it was a 500)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()
