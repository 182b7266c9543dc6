"""arena.core.text: control characters from bots and records never reach a terminal as such, and
nothing is lost (each one is shown as a visible escape)."""

from __future__ import annotations

import unicodedata

import pytest

from arena.core.text import clean, clean_line, is_clean_line

HOSTILE = [
    "\x1b[2J\x1b[H",                     # clear the screen, cursor home
    "\x1b]0;owned\x07",                  # window title
    "\x1b]52;c;SGVsbG8=\x07",            # clipboard write (OSC 52)
    "\x1b[8mhidden\x1b[0m",              # invisible text
    "innocent\rEVIL",                    # carriage return overwrites the line
    "abc\u202edcba",                     # right-to-left override
    "\u2066isolate\u2069",               # bidi isolates
    "\x9b31m",                           # C1 CSI (one character)
    "\x08\x08\x7f\x00\x0b\x0c",          # backspace, DEL, NUL, VT, FF
    "\ufeffbom",                         # zero-width no-break space
]


def dangerous(text: str) -> list[str]:
    """Characters a terminal acts on, found independently of arena.core.text: Unicode's control
    category (C0, C1, DEL) but newline and tab, and the bidi formatting characters."""
    return [c for c in text
            if (unicodedata.category(c) == "Cc" and c not in "\n\t")
            or unicodedata.bidirectional(c) in ("LRE", "RLE", "PDF", "LRO", "RLO", "LRI",
                                                "RLI", "FSI", "PDI")
            or c == "\ufeff"]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_clean_leaves_nothing_a_terminal_acts_on(hostile):
    assert dangerous(hostile)  # the example is hostile
    out = clean(f"before {hostile} after")
    assert dangerous(out) == []
    assert out.startswith("before ") and out.endswith(" after")
    assert not is_clean_line(hostile)
    assert is_clean_line(clean_line(hostile))


def test_each_character_is_shown_as_its_escape():
    assert clean("a\x1b[31mb") == "a\\x1b[31mb"
    assert clean("x\ry") == "x\\ry"
    assert clean("\u202e") == "\\u202e"
    assert clean("\x9b") == "\\x9b"
    assert clean("\x00") == "\\x00"


def test_ordinary_text_is_unchanged():
    text = "a bot's log:\n\tline 2 — 5-5 ♠ ünïcode, 漢字, emoji 🎲\nend"
    assert clean(text) == text
    assert clean("windows\r\nline ends\r\n") == "windows\nline ends\n"


def test_clean_line_also_escapes_newline_and_tab():
    assert clean_line("a\nb\tc") == "a\\nb\\tc"
    assert clean_line(5) == "5"
