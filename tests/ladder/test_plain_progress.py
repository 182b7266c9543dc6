"""`moon ladder run` with its output not a terminal (`make demo | tee`, a CI log), where the
progress bar cannot redraw itself: plain progress lines while the games are played."""

from __future__ import annotations

import importlib
import re

from click.testing import CliRunner

from arena.cli import main

ladder_cli = importlib.import_module("arena.cli.ladder")  # the module: `ladder` is its group


def test_a_ladder_prints_progress_lines_when_not_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ladder_cli, "PLAIN_EVERY_S", 0.0)  # a line after every game
    out = CliRunner().invoke(main, ["ladder", "run", "--bot", "random", "--bot", "weak",
                                    "--bot", "heuristic", "--boards", "1", "--no-check",
                                    "--results", str(tmp_path / "r.sqlite")])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    # 3 bots, one triple, each board in all 6 seatings: 6 games
    assert lines[0] == "playing 6 game(s); a progress line every 0 s"
    done = [int(m.group(1)) for x in lines if (m := re.match(r"games (\d)/6 \(\d+%\), ", x))]
    assert done == [1, 2, 3, 4, 5, 6]
    assert re.search(r"^games 6/6 \(100%\), [\d.]+/min, 0:\d\d elapsed, about 0:00 left$",
                     out.stdout, re.MULTILINE)

    # the plain lines are the whole view: no bar, no live table printed once as it stops
    # (the leaderboard replaces it), and no note about a live view nobody saw
    assert not re.search(r"^games ━", out.stdout, re.MULTILINE)  # the bar
    assert "live ratings" not in out.stdout
    assert "The live view during the run" not in out.stdout
    assert "rating: strength on the Elo scale" in out.stdout  # the leaderboard is there
