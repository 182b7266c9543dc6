"""Text from bots and records, made safe to print on a terminal.

Everything a bot controls — its output (stdout, stderr), its name, a fault's detail, and
every string of a game record or results file, which are files anyone may have edited —
goes through :func:`clean` (or :func:`clean_line`) before it is printed. A terminal acts on
control characters: ``ESC [2J`` clears the screen, ``ESC ] 0;...`` sets the window title,
``ESC ] 52;...`` writes the clipboard, ``ESC [8m`` hides text, a carriage return lets a
line overwrite what came before it, and the bidirectional overrides (U+202E...) show text in
an order other than the bytes'. :func:`clean` shows each such character as a visible escape
(``\\x1b``, ``\\r``, ``\\u202e``) instead, so nothing is lost and nothing is acted on.

This is for terminals. HTML pages escape markup on their own (:mod:`arena.web`: Jinja2 autoescape),
and rich's markup is escaped with ``rich.markup.escape`` on top of this.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Arabic letter mark, LRM, RLM, the embeddings and overrides (LRE RLE PDF LRO RLO), and the
isolates (LRI RLI FSI PDI): each changes the order in which a terminal shows text."""
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "\u2028\u2029\ufeff]")
"""C0 controls but tab and newline, DEL, C1 controls, the bidi controls, the Unicode line and
paragraph separators, and the zero-width no-break space (a byte-order mark)."""
_UNSAFE_LINE = re.compile(_UNSAFE.pattern[:-1] + "\t\n]")


def _visible(m: re.Match[str]) -> str:
    c = m.group(0)
    if c == "\r":
        return "\\r"
    if c == "\n":
        return "\\n"
    if c == "\t":
        return "\\t"
    code = ord(c)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def clean(text: object) -> str:
    """``str(text)`` safe to print: every control character but newline and tab shown as a
    visible escape (``\\x1b``, ``\\r``, ``\\u202e``). Windows line ends (``\\r\\n``) become
    plain newlines first, so a bot that writes them reads normally.

    >>> clean("red \\x1b[31mtext\\x1b[0m\\r\\nnext")
    'red \\\\x1b[31mtext\\\\x1b[0m\\nnext'

    Raises:
        Nothing.
    """
    return _UNSAFE.sub(_visible, str(text).replace("\r\n", "\n"))


def clean_line(text: object) -> str:
    """Like :func:`clean`, for a value printed on one line (a name, a fault's detail): newline
    and tab are escaped too (``\\n``, ``\\t``)."""
    return _UNSAFE_LINE.sub(_visible, str(text))


def is_clean_line(text: str) -> bool:
    """True if ``text`` has no character that :func:`clean_line` would escape."""
    return _UNSAFE_LINE.search(text) is None
