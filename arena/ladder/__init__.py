"""The ladder: duplicate boards, balanced schedules, resumable SQLite results, ratings.

- :mod:`.config`: the ladder file (TOML) and its validation.
- :mod:`.schedule`: boards, duplicate sets and balanced seatings.
- :mod:`.store`: the SQLite results file (WAL, one transaction per game, resumable).
- :mod:`.ratings`: batch fit with intervals from a bootstrap over whole boards
  (:mod:`arena.stats`), OpenSkill live view.
- :mod:`.runner`: plays the schedule through a game executor (:mod:`arena.executor.local`).
- :mod:`.report`: leaderboard, cross-table, per-bot statistics, exports.
"""
