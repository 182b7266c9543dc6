"""Statistics of Moon Arena: pure functions over results, no I/O.

- :mod:`.intervals`: the one interval form every report shows (:class:`Estimate`), the
  small-sample correction (a t quantile with boards − 1 degrees of freedom) and the bounds
  used when the data cannot give a two-sided interval.
- :mod:`.bradley_terry`: the batch rating fit with a bootstrap over whole boards, for the
  ladder, ``moon match`` and the competition host alike.
- :mod:`.places`: the places of a whole table, Holm's step-down over the neighbour claims.
- :mod:`.head_to_head`: the observed share beside a rating gap, and whether the gap says
  more than the games measured.
- :mod:`.match`: an A/B match between two bots scored by duplicate sets: Elo difference,
  LOS and the sequential probability ratio test (GSPRT).

docs/ladder.md ("Ratings") and docs/match.md say what the figures mean.
"""
