"""Pictures drawn on the server as SVG markup (no script, no canvas, no font): a rating
over time (:func:`rating_chart`) and a rating's 95% interval as a bar on a shared scale
(:func:`interval_bar`). Every number is formatted by us; no text from users goes in."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup


def _f(x: float) -> str:
    return f"{x:.1f}"


def rating_chart(points: Sequence[tuple[int, float]], width: int = 640, height: int = 200,
                 *, games: int | None = None, low: float | None = None,
                 high: float | None = None) -> Markup:
    """A line chart of ``(game number, rating)`` points (the game number counts the bot's
    rated games from 1), with the lowest and highest rating and the last game labelled.
    ``points`` may be some of the games only, the first and the last among them (a bot
    page draws at most a point a unit or so: :meth:`arena.host.pages.bots.RatingReplay.series`);
    then ``games`` is how many there are, and ``low`` and ``high`` the lowest and highest
    rating of all of them (the axis's labels). An empty chart says so. Returns SVG markup
    with a ``viewBox`` (it scales to its box)."""
    if not points:
        return Markup('<p class="muted chart-empty">No rated games yet.</p>')
    pad_l, pad_r, pad_t, pad_b = 44, 12, 12, 26
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    x0, x1 = min(xs), max(xs)
    y0 = min(ys) if low is None else low
    y1 = max(ys) if high is None else high
    games = len(points) if games is None else games
    if y1 - y0 < 1e-9:
        y0, y1 = y0 - 1, y1 + 1
    if x1 == x0:
        x1 = x0 + 1

    def sx(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * (width - pad_l - pad_r)

    def sy(y: float) -> float:
        return pad_t + (y1 - y) / (y1 - y0) * (height - pad_t - pad_b)

    path = " ".join(f"{'M' if i == 0 else 'L'}{_f(sx(x))},{_f(sy(y))}"
                    for i, (x, y) in enumerate(points))
    last_x, last_y = points[-1]
    parts = [
        f'<svg class="chart rating-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="rating over {games} games" data-points="{games}">',
        f'<line class="axis" x1="{pad_l}" y1="{height - pad_b}" x2="{width - pad_r}" '
        f'y2="{height - pad_b}" stroke="#b9b1a2"/>',
        f'<line class="axis" x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{height - pad_b}" '
        'stroke="#b9b1a2"/>',
        f'<text x="{pad_l - 4}" y="{_f(sy(y1) + 4)}" text-anchor="end" font-size="11" '
        f'fill="#5f6670">{_f(y1)}</text>',
        f'<text x="{pad_l - 4}" y="{_f(sy(y0) + 4)}" text-anchor="end" font-size="11" '
        f'fill="#5f6670">{_f(y0)}</text>',
        f'<text x="{pad_l}" y="{height - 8}" font-size="11" fill="#5f6670">game {x0}</text>',
        f'<text x="{width - pad_r}" y="{height - 8}" text-anchor="end" font-size="11" '
        f'fill="#5f6670">game {last_x}</text>',
        f'<path d="{path}" fill="none" stroke="#24507a" stroke-width="2" '
        'stroke-linejoin="round"/>',
        f'<circle cx="{_f(sx(last_x))}" cy="{_f(sy(last_y))}" r="3.5" fill="#e0a526"/>',
        "</svg>",
    ]
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


__all__ = ["interval_bar", "rating_chart"]
