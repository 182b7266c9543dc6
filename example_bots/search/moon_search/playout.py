"""A fast perfect-information playout of the rest of a hand, on bitmasks.

The search plays thousands of these a decision, so it does not go through ``GameState``
(whose ``apply`` validates and records every action): a hand here is ``hands`` (one mask a
seat), the trick in progress as ``(plays so far, suit led, winning seat, winning tile)``,
and the tricks taken. The rules come from the engine's own tables (``FOLLOW_MASK``,
``LED_SUIT``, ``RANK``, ``TRUMP_MASK``); ``tests/bots_search`` checks the playout against
``GameState`` move for move.

The rules engine's compiled core (``moon_engine``, through ``moon_sdk.rules.fast``) carries
the same playout and quick count, move for move and bit for bit; when it is installed,
:func:`playout` and :func:`strength` are those (about ten times faster), and the Python
functions here, :func:`python_playout` and :func:`python_strength`, are their
specification and the fallback (``MOON_ENGINE=pure`` forces them).

The playout policy sees every hand (the deal is a determinization): lead a tile nobody can
beat (the bidding side pulls trumps with its top trump first), else the cheapest tile;
follow with the cheapest tile that wins the trick against everyone still to play, else the
cheapest legal tile; leave a partner's sure trick alone.
"""

from __future__ import annotations

from moon_sdk.rules import (
    DOUBLES,
    FOLLOW_MASK,
    LED_SUIT,
    MOON_BID,
    NO_TRUMP,
    RANK,
    TRUMP_MASK,
    Ruleset,
    fast,
    is_double,
    tile_pips,
)

TRUMPS = range(9)
TILES = range(28)

TM = TRUMP_MASK
FOL = FOLLOW_MASK
LED = LED_SUIT


def _beats(tr: int, led: int, t: int) -> int:
    r = RANK[tr][led][t]
    m = 0
    for u in TILES:
        if RANK[tr][led][u] > r:
            m |= 1 << u
    return m


BEATS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(_beats(tr, led, t) for t in TILES) for led in range(8)) for tr in TRUMPS
)
"""``BEATS[trump][led][t]``: the tiles that beat ``t`` in a trick of suit ``led``."""

ASC: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(sorted((t for t in TILES if RANK[tr][led][t] >= 0),
                       key=lambda t, tr=tr, led=led: RANK[tr][led][t]))
          for led in range(8))
    for tr in TRUMPS
)
"""``ASC[trump][led]``: the tiles that can win a trick of suit ``led``, weakest first."""


def _lead_rank(tr: int, t: int) -> int:
    return RANK[tr][LED[tr][t]][t]


LEAD_DESC: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(TILES, key=lambda t, tr=tr: (-_lead_rank(tr, t), t))) for tr in TRUMPS
)
"""``LEAD_DESC[trump]``: every tile, strongest lead first (trumps, then by rank in the suit
it leads)."""

TRUMP_DESC: tuple[tuple[int, ...], ...] = tuple(tuple(reversed(ASC[tr][7])) for tr in TRUMPS)
"""``TRUMP_DESC[trump]``: the trumps, highest first."""


def _cost(tr: int, t: int) -> tuple[int, int, int, int]:
    h, lo = tile_pips(t)
    trump = (TM[tr] >> t) & 1
    return (trump, RANK[tr][7][t] if trump else 0,
            int(is_double(t) and tr != DOUBLES), h + lo)


CHEAP: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(TILES, key=lambda t, tr=tr: _cost(tr, t))) for tr in TRUMPS
)
"""``CHEAP[trump]``: every tile, the one to throw away first first (non-trumps before
trumps, non-doubles before doubles, few pips before many)."""


def _seat_tables(n: int) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...],
                                  tuple[tuple[tuple[int, ...], ...], ...]]:
    side = tuple(s if n == 3 else s % 2 for s in range(n))
    opps = tuple(tuple(o for o in range(n) if side[o] != side[s]) for s in range(n))
    later = tuple(
        tuple(tuple((s + i) % n for i in range(1, n - k) if side[(s + i) % n] != side[s])
              for k in range(n))
        for s in range(n))
    return side, opps, later


SEATS = {n: _seat_tables(n) for n in (3, 4)}
"""``SEATS[n] = (side, opponents, later_opponents)``: ``side[s]`` is the scoring side of
seat ``s``; ``opponents[s]`` the seats of the other sides; ``later_opponents[s][k]`` the
opponents who play after ``s`` when ``s`` is the ``k``-th (0-based) to play to a trick."""


def playout(hands: list[int], trump: int, bidder: int, cur: int, k: int, led: int,
            win_seat: int, win_tile: int, taken: list[int], first: int = -1,
            trace: list[tuple[int, int]] | None = None) -> list[int]:
    """Play the hand to its end with the policy; returns ``taken`` (updated in place, as is
    ``hands``).

    Args:
        hands: every seat's tiles (a determinization).
        trump: the contract (0..8).
        bidder: the seat that won the auction.
        cur: the seat to play.
        k: plays already in the current trick (0: ``cur`` leads).
        led, win_seat, win_tile: the current trick's suit and winner so far (ignored if
            ``k`` is 0).
        taken: tricks taken by each seat so far.
        first: if a tile, ``cur`` plays it instead of the policy's choice (it must be legal).
        trace: if a list, every ``(seat, tile)`` played is appended to it.
    """
    n = len(hands)
    side, opps_of, later_of = SEATS[n]
    tm = TM[trump]
    fol = FOL[trump]
    rank = RANK[trump]
    ledt = LED[trump]
    beats = BEATS[trump]
    asc = ASC[trump]
    cheap = CHEAP[trump]
    lead_desc = LEAD_DESC[trump]
    bside = side[bidder]
    while True:
        hand = hands[cur]
        if k == 0:
            if not hand:
                return taken
            if first >= 0:
                t = first
                first = -1
            else:
                t = -1
                opps = opps_of[cur]
                if side[cur] == bside and hand & tm:
                    opp_trumps = 0
                    for o in opps:
                        opp_trumps |= hands[o]
                    if opp_trumps & tm:
                        for u in TRUMP_DESC[trump]:
                            if (hand >> u) & 1:
                                bt = beats[7][u]
                                if not (opp_trumps & bt):
                                    t = u
                                break
                if t < 0:
                    for u in lead_desc:
                        if (hand >> u) & 1:
                            lu = ledt[u]
                            fu = fol[lu]
                            bt = beats[lu][u]
                            for o in opps:
                                h = hands[o]
                                lo = h & fu
                                if (lo or h) & bt:
                                    break
                            else:
                                t = u
                                break
                if t < 0:
                    for u in cheap:
                        if (hand >> u) & 1:
                            t = u
                            break
            led = ledt[t]
            win_seat = cur
            win_tile = t
        else:
            f = hand & fol[led]
            legal = f or hand
            if first >= 0:
                t = first
                first = -1
            else:
                t = -1
                later = later_of[cur][k]
                fl = fol[led]
                if side[win_seat] == side[cur]:  # a partner is winning
                    bt = beats[led][win_tile]
                    for o in later:
                        h = hands[o]
                        if (h & fl or h) & bt:
                            break
                    else:
                        for u in cheap:
                            if (legal >> u) & 1:
                                t = u
                                break
                if t < 0:
                    beaters = legal & beats[led][win_tile]
                    if beaters:
                        for u in asc[led]:
                            if (beaters >> u) & 1:
                                bt = beats[led][u]
                                for o in later:
                                    h = hands[o]
                                    if (h & fl or h) & bt:
                                        break
                                else:
                                    t = u
                                    break
                    if t < 0:
                        for u in cheap:
                            if (legal >> u) & 1:
                                t = u
                                break
            if rank[led][t] > rank[led][win_tile]:
                win_seat = cur
                win_tile = t
        hands[cur] = hand ^ (1 << t)
        if trace is not None:
            trace.append((cur, t))
        k += 1
        if k == n:
            taken[win_seat] += 1
            cur = win_seat
            k = 0
        else:
            cur = (cur + 1) % n


MOON_WIN = 14.0
"""What a made 21 is worth to the search when it wins the game at once, in points (the
default of :class:`Scorer`'s ``moon_value``). Less than 21: a bot stronger than its
opponents wins most games anyway, and a failed 21 (-21) all but loses one, so a 21 is
worth trying only when it is very likely made (at 14, about 70% against a safe contract
worth a couple of points)."""


class Scorer:
    """The hand's score and the search's utility, for one ruleset (docs/rules.md, "Scoring").

    The utility of a hand to a seat is its side's score change minus the mean of the
    other sides'; with ``game_bonus``, a hand that ends the game (a side reaches the
    target, strictly ahead) is worth that much more to the winner's side and that much
    less (shared out) to the others. :meth:`set_scores` gives the scores before the hand.
    """

    def __init__(self, ruleset: Ruleset, game_bonus: float = 0.0,
                 moon_value: float = MOON_WIN) -> None:
        self.n = ruleset.players
        self.sides = ruleset.num_sides
        self.marks = ruleset.scoring == "marks"
        self.team_bid = ruleset.team_made_scores == "bid"
        self.moon_wins = ruleset.moon_wins_game
        self.target = ruleset.target
        self.game_bonus = game_bonus
        self.moon_value = moon_value
        self.scores: tuple[int, ...] = (0,) * self.sides

    def set_scores(self, scores: tuple[int, ...] | list[int]) -> None:
        """The sides' scores before this hand (for the game bonus)."""
        self.scores = tuple(scores)

    def deltas(self, bidder: int, bid: int, taken: list[int] | tuple[int, ...]
               ) -> list[float]:
        """Each side's score change for a hand with these tricks (a made 21 that wins the
        game counts ``moon_value``)."""
        n = self.n
        if n == 3:
            side_taken = list(taken)
            bside = bidder
        else:
            side_taken = [taken[0] + taken[2], taken[1] + taken[3]]
            bside = bidder % 2
        need = 7 if bid == MOON_BID else bid
        made = side_taken[bside] >= need
        if self.marks:
            return [1 if (s == bside) == made else 0 for s in range(self.sides)]
        d: list[float] = list(side_taken)
        if not made:
            d[bside] = -bid
        elif bid == MOON_BID:
            d[bside] = self.moon_value if self.moon_wins else MOON_BID
        elif n == 3 or self.team_bid:
            d[bside] = bid
        return d

    def utility(self, seat: int, bidder: int, bid: int,
                taken: list[int] | tuple[int, ...]) -> float:
        """``seat``'s side's score change minus the mean of the other sides' (plus the game
        bonus, if the hand ends the game)."""
        d = self.deltas(bidder, bid, taken)
        if self.n == 3:
            u = d[seat] - (d[0] + d[1] + d[2] - d[seat]) / 2
            s = seat
        else:
            s = seat % 2
            u = d[s] - d[1 - s]
        if self.game_bonus:
            winner = -1
            if bid == MOON_BID and self.moon_wins and d[bidder if self.n == 3 else bidder % 2] \
                    == self.moon_value:
                return u  # a made 21: moon_value already says what winning so is worth
            new = [a + b for a, b in zip(self.scores, d, strict=True)]
            top = max(new)
            if top >= self.target and new.count(top) == 1:
                winner = new.index(top)
                u += self.game_bonus if winner == s else -self.game_bonus / (self.sides - 1)
        return u


def strength(hand: int, trump: int) -> float:
    """A rough count of the tricks ``hand`` takes with ``trump`` (for pruning candidates):
    top trumps in an unbroken run, other trumps, off-suit doubles."""
    score = 0.0
    if trump != NO_TRUMP:
        trumps = hand & TM[trump]
        run = 0
        for u in TRUMP_DESC[trump]:
            if (hand >> u) & 1:
                run += 1
            else:
                break
        score = run + 0.6 * (trumps.bit_count() - run)
    else:
        trumps = 0
    for s in range(7):
        d = s * (s + 1) // 2 + s
        if (hand >> d) & 1 and not (trumps >> d) & 1:
            score += 1.0 if trump == NO_TRUMP else 0.9
            if (hand & FOL[trump][s]).bit_count() >= 3:
                score += 0.4  # a long suit under its double
    return score


python_playout = playout
python_strength = strength
COMPILED = fast.core is not None
"""True when :func:`playout` and :func:`strength` are the compiled core's."""
if fast.core is not None:
    playout = fast.core.playout  # noqa: F811 (the same function, compiled)
    strength = fast.core.quick_count  # noqa: F811
