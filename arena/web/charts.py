"""Pictures drawn on the server as SVG markup (no script, no canvas, no font): a bot's
batch rating after each fit, per version (:func:`rating_chart`), and a rating's 95%
interval as a bar on a shared scale (:func:`interval_bar`). Every number is formatted by
us; no text from users goes in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from markupsafe import Markup


def _f(x: float) -> str:
    return f"{x:.1f}"


class FitPoint(NamedTuple):
    """A version's batch rating after one batch fit (Elo scale, the anchor's mean 1500)."""

    games: int
    """The competition's rated games the fit read (the chart's x)."""
    rating: float
    low: float | None
    high: float | None
    """The 95% interval's ends; None on a side the data cannot bound."""
    open: bool = False
    """The fit left the rating open: its bound is the figure, not ``rating``."""

    @property
    def shown(self) -> float | None:
        """The figure the chart draws: the rating, or an open rating's bound (as the
        leaderboard quotes it: ``≤ 1320``); None when the fit measured no interval (n/a:
        one board only, say, where a bot that always lost still gets a figure the prior
        alone holds, far above what its bound will be once there are two)."""
        if self.low is None and self.high is None:
            return None
        if not self.open:
            return self.rating
        return self.high if self.high is not None else self.low


class VersionLine(NamedTuple):
    """One version's points, in order of ``games``."""

    number: int
    """The version's number (1, 2, ... per bot): its marker's label ``#n``."""
    points: Sequence[FitPoint]


COLOURS = ("#24507a", "#9a5b13", "#3f7d4e", "#7a3b69")
"""A version line's colour, by its number (cycled)."""


def rating_chart(lines: Sequence[VersionLine], width: int = 640, height: int = 220
                 ) -> Markup:
    """A bot's batch rating after each batch fit, one line per version, on the
    leaderboard's scale: x is the competition's rated games at the fit, y the rating
    (Elo, whole numbers on the axis), a band its 95% interval (to the chart's edge on a
    side the data leave unbounded), a dashed marker ``#n`` where version n first appears.
    An open rating is drawn at its bound, as a hollow point; a fit without an interval
    (n/a) is not drawn. An empty chart says so.
    Returns SVG markup with a ``viewBox`` (it scales to its box)."""
    drawn = [VersionLine(ln.number, [p for p in ln.points if p.shown is not None])
             for ln in lines]
    drawn = [ln for ln in drawn if ln.points]
    if not drawn:
        return Markup('<p class="muted chart-empty">No batch fit with an interval for its '
                      'games yet.</p>')
    pad_l, pad_r, pad_t, pad_b = 44, 30, 18, 26
    points = [p for ln in drawn for p in ln.points]
    xs = [p.games for p in points]
    ys = [y for p in points for y in (p.shown, p.low, p.high) if y is not None]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if y1 - y0 < 10:  # a flat line: a band of ±5 Elo around it
        mid = (y0 + y1) / 2
        y0, y1 = mid - 5, mid + 5
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1

    def sx(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * (width - pad_l - pad_r)

    def sy(y: float) -> float:
        return pad_t + (y1 - y) / (y1 - y0) * (height - pad_t - pad_b)

    grey = 'font-size="11" fill="#5f6670"'
    bottom = height - pad_b
    parts = [
        f'<svg class="chart rating-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="batch rating after each fit, {len(drawn)} versions" '
        f'data-versions="{len(drawn)}">',
        f'<line class="axis" x1="{pad_l}" y1="{bottom}" x2="{width - pad_r}" '
        f'y2="{bottom}" stroke="#b9b1a2"/>',
        f'<line class="axis" x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{bottom}" '
        'stroke="#b9b1a2"/>',
        f'<text x="{pad_l - 4}" y="{_f(sy(y1) + 4)}" text-anchor="end" {grey}>'
        f'{round(y1)}</text>',
        f'<text x="{pad_l - 4}" y="{_f(sy(y0) + 4)}" text-anchor="end" {grey}>'
        f'{round(y0)}</text>',
        f'<text x="{pad_l}" y="{height - 8}" {grey}>{x0} games</text>',
        f'<text x="{width - pad_r}" y="{height - 8}" text-anchor="end" {grey}>'
        f'{x1} games</text>',
    ]
    if y0 < 1500 < y1:  # the scale's anchor
        parts.append(f'<line class="anchor" x1="{pad_l}" y1="{_f(sy(1500))}" '
                     f'x2="{width - pad_r}" y2="{_f(sy(1500))}" stroke="#e2dccf" '
                     'stroke-dasharray="2 3"/>'
                     f'<text x="{width - pad_r + 2}" y="{_f(sy(1500) + 4)}" '
                     'font-size="10" fill="#8a8f96">1500</text>')
    for ln in drawn:
        colour = COLOURS[(ln.number - 1) % len(COLOURS)]
        pts = ln.points
        upper = [sy(p.high if p.high is not None else y1) for p in pts]
        lower = [sy(p.low if p.low is not None else y0) for p in pts]
        banded = [p.low is not None or p.high is not None for p in pts]
        parts.append(f'<g class="version-line" data-version="{ln.number}" '
                     f'data-points="{len(pts)}">')
        if any(banded):
            if len(pts) == 1:  # a band one fit wide: a bar
                parts.append(f'<rect class="band" x="{_f(sx(pts[0].games) - 3)}" '
                             f'y="{_f(upper[0])}" width="6" '
                             f'height="{_f(lower[0] - upper[0])}" fill="{colour}" '
                             'fill-opacity="0.18"/>')
            else:
                ring = [(sx(p.games), u) for p, u in zip(pts, upper, strict=True)] + \
                    [(sx(p.games), lo) for p, lo in zip(reversed(pts), reversed(lower),
                                                         strict=True)]
                parts.append('<path class="band" d="' + " ".join(
                    f"{'M' if i == 0 else 'L'}{_f(x)},{_f(y)}"
                    for i, (x, y) in enumerate(ring)) + f'Z" fill="{colour}" '
                    'fill-opacity="0.18" stroke="none"/>')
        first = sx(pts[0].games)
        parts.append(f'<line class="version-marker" x1="{_f(first)}" y1="{pad_t}" '
                     f'x2="{_f(first)}" y2="{bottom}" stroke="{colour}" '
                     'stroke-dasharray="4 3" stroke-opacity="0.7"/>'
                     f'<text x="{_f(first + 3)}" y="{pad_t - 5}" font-size="11" '
                     f'fill="{colour}">#{ln.number}</text>')
        path = " ".join(f"{'M' if i == 0 else 'L'}{_f(sx(p.games))},{_f(sy(p.shown or 0))}"
                        for i, p in enumerate(pts))
        parts.append(f'<path class="line" d="{path}" fill="none" stroke="{colour}" '
                     'stroke-width="2" stroke-linejoin="round"/>')
        for p in pts:
            if p.open:  # an open rating's bound: hollow
                parts.append(f'<circle class="bound" cx="{_f(sx(p.games))}" '
                             f'cy="{_f(sy(p.shown or 0))}" r="3" fill="#fff" '
                             f'stroke="{colour}" stroke-width="1.5"/>')
        last = pts[-1]
        parts.append(f'<circle class="last" cx="{_f(sx(last.games))}" '
                     f'cy="{_f(sy(last.shown or 0))}" r="3.5" fill="#e0a526"/></g>')
    parts.append("</svg>")
    return Markup("".join(parts))


def interval_bar(low: float | None, mid: float | None, high: float | None, lo: float,
                 hi: float, width: int = 160, height: int = 18) -> Markup:
    """A rating's 95% interval ``[low, high]`` as a bar and its estimate ``mid`` as a tick,
    on the scale ``lo..hi`` shared by every row of the leaderboard; an end that is None
    (unbounded: the bootstrap found no limit on that side) runs to the scale's edge. Empty
    markup when the rating is not fitted yet or has no interval at all."""
    if mid is None or (low is None and high is None):
        return Markup("")
    low = lo if low is None else low
    high = hi if high is None else high
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1

    def sx(x: float) -> float:
        return 2 + (min(max(x, lo), hi) - lo) / (hi - lo) * (width - 4)

    return Markup(
        f'<svg class="chart interval" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" '
        f'aria-label="95% interval {round(low)} to {round(high)}">'
        f'<line x1="2" y1="{height / 2}" x2="{width - 2}" y2="{height / 2}" '
        'stroke="#e2dccf"/>'
        f'<rect x="{_f(sx(low))}" y="4" width="{_f(max(sx(high) - sx(low), 1.5))}" '
        f'height="{height - 8}" rx="3" fill="#9fb8d0"/>'
        f'<rect x="{_f(sx(mid) - 1.5)}" y="2" width="3" height="{height - 4}" '
        'fill="#17324d"/></svg>')


__all__ = ["COLOURS", "FitPoint", "VersionLine", "interval_bar", "rating_chart"]
