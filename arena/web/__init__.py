"""The competition's web pages and the replay player: Jinja2 templates
(``arena/web/templates``) and static files (``arena/web/static``), package data of the
wheel.

- :mod:`arena.web.replay`: a game record as the replay player's steps, and the
  self-contained page of ``moon replay html``;
- :mod:`arena.web.pages`: the competition host's pages (a FastAPI router);
- :mod:`arena.web.charts`: the rating chart and the leaderboard's interval bars as SVG
  drawn on the server.
"""
