"""What the competition's pages and the replay player are drawn with: Jinja2 templates
(``arena/web/templates``) and static files (``arena/web/static``), package data of the
wheel, and the plain code that turns data into what they show. Nothing here imports the
host (its pages are :mod:`arena.host.pages`) or the CLI.

- :mod:`arena.web.replay`: a game record as the replay player's steps, and the
  self-contained page of ``moon replay html``;
- :mod:`arena.web.templating`: the Jinja2 environment and the static files;
- :mod:`arena.web.render`: a page's template as an HTML answer with the pages' security
  headers;
- :mod:`arena.web.views`: the leaderboard's table and win figures, games as list rows,
  the API's endpoints;
- :mod:`arena.web.auth`: the session cookie's value and check, and CSRF for forms;
- :mod:`arena.web.charts`: the rating chart and the leaderboard's interval bars as SVG
  drawn on the server.
"""
