"""`moon play`'s usage lines for a person's seat, in process (CliRunner)."""

from __future__ import annotations

from click.testing import CliRunner

from arena.cli import main


def run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["play", *args])
    return r.exit_code, r.output


def test_one_person_a_game():
    code, out = run("human", "human", "random")
    assert code == 2
    assert "one `human` seat per game: the others are bots" in out


def test_web_needs_a_person():
    code, out = run("--web", "random", "random", "random")
    assert code == 2
    assert "--web is for a `human` seat: name one among the BOTS" in out


def test_a_persons_clock_is_checked_like_any():
    code, out = run("--human-decision-ms", "-5", "human", "random", "random")
    assert code == 2
    assert "Invalid value for '--human-decision-ms': -5 is not in the range 0<=x<=86400000" \
        in out
