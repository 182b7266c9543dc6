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
from collections.abc import Callable

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


_WHERE = re.compile(r"\S+(:\d+:\d+|:\d+:|:\[\d+,\d+\]|\(\d+,\d+\))")
"""A compiler's ``file:line:col`` (gcc, go, rustc's ``-->``), ``file:[line,col]`` (javac
through Maven), ``file(line,col)`` (tsc)."""
_ERROR = re.compile(r"\berr(or)?\b", re.IGNORECASE)
"""The word error (npm's ``ERR!`` too)."""


def build_error(log: str) -> str:
    """The line of a failed build's log that says what went wrong, for a one-line report
    ("" for an empty log): the first line with both a source location and the word "error"
    (``main.cpp:3:5: error: ...``, ``[ERROR] Main.java:[5,9] cannot find symbol``), else
    the first that starts with "error" (cargo's ``error[E0425]: ...``, with its ``-->``
    location line after it when that follows), else the first with a location (go's
    ``./main.go:5:2: undefined: x``), else the first with "error", else the last line.
    Stripped, at most 300 characters.

    >>> build_error("# bot\\n./main.go:5:2: undefined: x\\nexit status 1\\n")
    './main.go:5:2: undefined: x'
    >>> build_error("Compiling bot\\nerror[E0425]: no `x`\\n --> src/main.rs:3:5\\n")
    'error[E0425]: no `x` --> src/main.rs:3:5'
    """
    lines = [x.strip() for x in log.splitlines() if x.strip()]
    if not lines:
        return ""
    rules: tuple[Callable[[str], bool], ...] = (
        lambda x: bool(_WHERE.search(x) and _ERROR.search(x)),
        lambda x: x.lower().startswith("error"),
        lambda x: bool(_WHERE.search(x)),
        lambda x: bool(_ERROR.search(x)))
    for n, rule in enumerate(rules):
        i = next((i for i, x in enumerate(lines) if rule(x)), None)
        if i is not None:
            found = lines[i]
            if n == 1 and i + 1 < len(lines) and lines[i + 1].startswith("-->"):
                found += " " + lines[i + 1]
            return found[:300]
    return lines[-1][:300]
