"""Labels of bots in tables: distinct, and cut to a width without two rows looking alike.

Tables (the leaderboard, the cross-table, the per-bot figures, the live view) show each
bot by a label. Two rules hold for every list of labels made here:

- Two different entries never share a label. Entries whose text is the same (the same bot
  twice, or two names that print alike once made safe, :mod:`arena.core.text`) get ``#1``,
  ``#2``, ... in their order.
- A label wider than the column is cut *in the middle* (``search-mc…-v2``), keeping both
  ends, and where that would make two labels alike, the cut moves to keep the part that
  tells them apart (``…rollouts-a`` and ``…rollouts-b``). Only when no such cut exists at
  that width (names that differ in the middle and agree on long ends) does a label show its
  place in the list instead (``searc…#3``), still distinct.

Widths are in terminal cells (:func:`rich.cells.cell_len`). CSV and JSON exports use the
names themselves, never labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.cells import cell_len

from .text import clean_line

ELLIPSIS = "…"
MIN_WIDTH = 5
"""The narrowest label width :func:`unique_labels` cuts to (narrower is raised to this)."""

__all__ = ["ELLIPSIS", "MIN_WIDTH", "distinct", "fit_width", "unique_labels"]


def distinct(names: Sequence[object]) -> list[str]:
    """Each entry's printable text (:func:`~arena.core.text.clean_line`), entries whose text
    repeats numbered ``#1``, ``#2``... in order (``["a", "b", "a"]`` → ``["a #1", "b",
    "a #2"]``). Raises nothing."""
    texts = [clean_line(n) for n in names]
    count = Counter(texts)
    seen: Counter[str] = Counter()
    out = []
    for t in texts:
        if count[t] > 1:
            seen[t] += 1
            k = seen[t]
            t = f"{t} #{k}"
            while t in count:  # a name that already reads "x #2"
                t += "'"
        out.append(t)
    return out


def _cells_head(text: str, width: int) -> str:
    """The longest start of ``text`` that fits ``width`` cells."""
    out = ""
    for c in text:
        if cell_len(out + c) > width:
            break
        out += c
    return out


def _cells_tail(text: str, width: int) -> str:
    """The longest end of ``text`` that fits ``width`` cells."""
    out = ""
    for c in reversed(text):
        if cell_len(c + out) > width:
            break
        out = c + out
    return out


def _cut(text: str, head: int, width: int) -> str:
    """``text`` in ``width`` cells: ``head`` cells of its start, ``…``, then its end."""
    tail = width - 1 - head
    return (_cells_head(text, head) + ELLIPSIS + (_cells_tail(text, tail) if tail else ""))


def _window(text: str, start: int, width: int) -> str:
    """``text`` in ``width`` cells around position ``start``: ``…`` + the part from a little
    before ``start`` + ``…`` + its last character(s)."""
    tail = max(1, (width - 2) // 4)
    middle = width - 2 - tail
    begin = max(0, min(start - middle // 2, len(text) - tail - middle))
    return ELLIPSIS + _cells_head(text[begin:], middle) + ELLIPSIS + _cells_tail(text, tail)


def _first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def unique_labels(names: Sequence[object], width: int | None = None) -> list[str]:
    """One label per entry of ``names``, all different (see the module doc), each at most
    ``width`` cells (None: never cut; below :data:`MIN_WIDTH`: that).

    >>> unique_labels(["search-mcts-rollouts-1000-a", "search-mcts-rollouts-1000-b"], 12)
    ['search…000-a', 'search…000-b']

    Raises nothing.
    """
    labels = distinct(names)
    if width is None:
        return labels
    w = max(MIN_WIDTH, width)
    long = [i for i, t in enumerate(labels) if cell_len(t) > w]
    if not long:
        return labels
    balanced = (w - 1 + 1) // 2
    out = list(labels)
    for i in long:
        out[i] = _cut(labels[i], balanced, w)
    # settle collisions: a clash is a group of long labels cut alike (or cut like a short one)
    for _ in range(len(labels)):
        count = Counter(out)
        clash = [i for i in long if count[out[i]] > 1]
        if not clash:
            return out
        group = [i for i in clash if out[i] == out[clash[0]]]
        others = Counter(out[j] for j in range(len(out)) if j not in group)
        heads = sorted(range(w), key=lambda h: (abs(h - balanced), -h))
        for h in heads:
            tried = [_cut(labels[i], h, w) for i in group]
            if len(set(tried)) == len(tried) and not any(others[t] for t in tried):
                break
        else:
            # differ in the middle: show each around where it differs from the others
            tried = []
            for i in group:
                start = min(_first_difference(labels[i], labels[j]) for j in group if j != i)
                tried.append(_window(labels[i], start, w))
            if len(set(tried)) != len(tried) or any(others[t] for t in tried):
                tried = [_cells_head(labels[i], w - 1 - len(f"#{i + 1}")) + ELLIPSIS
                         + f"#{i + 1}" for i in group]
        for i, t in zip(group, tried, strict=True):
            out[i] = t
    return out


def fit_width(total: int, used: int, columns: int, longest: int) -> int:
    """The width of a table's name column: what is left of ``total`` cells once the other
    columns take ``used`` cells (their widest cell each) and a rich table's borders and
    padding take 3 cells a column plus 1, for ``columns`` columns in all; never more than
    ``longest`` (the widest label) nor less than :data:`MIN_WIDTH`."""
    left = total - used - 3 * columns - 1
    return max(MIN_WIDTH, min(longest, left))
