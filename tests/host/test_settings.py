"""competition.toml: what `moon host init` writes, and bad settings named clearly."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.errors import ConfigError
from arena.host.settings import load_settings


def init(tmp_path: Path, *flags: str) -> Path:
    folder = tmp_path / "comp"
    r = CliRunner().invoke(main, ["host", "init", str(folder), *flags])
    assert r.exit_code == 0, r.output
    return folder


def test_init_writes_a_safe_default(tmp_path: Path) -> None:
    folder = init(tmp_path)
    s = load_settings(folder)
    assert s.runner.kind == "docker" and not s.runner.trust_local
    assert s.competition.registration == "invite"
    # open registration's limits, written out: 5 an hour from one address, no cap
    assert (s.competition.registrations_per_hour, s.competition.max_participants) == (5, 0)
    assert s.ruleset().players == 3 and s.tc().decision_ms == 2000
    token = (folder / "admin.token").read_text().strip()
    assert token.startswith("moon_") and len(token) > 30
    assert stat.S_IMODE((folder / "admin.token").stat().st_mode) == 0o600
    assert (folder / "reference" / "random" / "bot.toml").is_file()
    again = CliRunner().invoke(main, ["host", "init", str(folder)])
    assert again.exit_code != 0 and "exists already" in again.output


def test_the_fork_server_is_on_unless_the_runner_says_false(tmp_path: Path) -> None:
    folder = init(tmp_path)
    assert load_settings(folder).runner.fork_server is None  # as MOON_FORK_SERVER says: on
    path = folder / "competition.toml"
    path.write_text(path.read_text().replace("# fork_server = false", "fork_server = false"))
    assert load_settings(folder).runner.fork_server is False


@pytest.mark.parametrize(("edit", "message"), [
    (('kind = "docker"', 'kind = "local"'), "trust_local = true"),
    (("concurrency = 2", "concurrency = 0"), "matchmaking.concurrency"),
    (("\n[rules]", "\n[rules]\ntarget_score = 0"), "target_score"),
    (("decision_ms = 2000", "decision_ms = 2000\nthink_ms = 5"), "think_ms"),
    (("\n[limits]", "\n[limits]\nmax_size = 3"), "limits.max_size"),
    (('preset = "moon3"', 'preset = "moon9"'), "moon9"),
    (('registration = "invite"', 'registration = "maybe"'), "registration"),
    (("max_participants = 0", "max_participants = -1"), "competition.max_participants"),
    (("registrations_per_hour = 5", "registrations_per_hour = 1.5"),
     "competition.registrations_per_hour"),
    (("# fork_server = false", 'fork_server = "maybe"'), "runner.fork_server"),
])
def test_bad_settings_are_named(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    folder = init(tmp_path)
    path = folder / "competition.toml"
    text = path.read_text()
    assert edit[0] in text
    path.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(ConfigError, match=message) as e:
        load_settings(folder)
    assert "\n" not in str(e.value)
    r = CliRunner().invoke(main, ["host", "run", str(folder)])
    assert r.exit_code == 1 and message in r.output and "Traceback" not in r.output


def test_a_validators_message_is_shown_without_pydantics_prefix(tmp_path: Path) -> None:
    # the runner's own check (kind = 'local' needs trust_local = true), word for word, after
    # the file and the table; pydantic's "Value error, " is not the organiser's business
    folder = init(tmp_path)
    path = folder / "competition.toml"
    path.write_text(path.read_text().replace('kind = "docker"', 'kind = "local"', 1))
    want = (f"{path}: runner: kind = 'local' runs every submission as your own user, "
            "unsandboxed: set trust_local = true if you trust them all, or use kind = "
            "'docker'")
    with pytest.raises(ConfigError) as e:
        load_settings(folder)
    assert str(e.value) == want
    r = CliRunner().invoke(main, ["host", "run", str(folder)], terminal_width=400)
    assert r.exit_code == 1 and "Value error" not in r.output
    assert want in r.output.replace("\n", ""), r.output


def test_pydantic_prefixes_are_stripped() -> None:
    from arena.host.settings import plain_message

    assert plain_message("Assertion failed, memory_mb must be at least 64") == \
        "memory_mb must be at least 64"
    assert plain_message("Value error, a, b") == "a, b"
    assert plain_message("Field required") == "Field required"


def test_init_writes_a_master_seed_too_long_to_find(tmp_path: Path) -> None:
    """Every record holds its board's seed, a keyed hash of the master seed: a master seed
    of 31 bits is found from one published record by trying them all (under an hour on one
    core), and then every board to come is known. `init` writes 63 bits, a new one each
    time, and the host warns of a short one."""
    from arena.host.settings import short_seed_warning
    from arena.ladder.schedule import board_seed

    seeds = [load_settings(init(tmp_path / str(i))).matchmaking.seed for i in range(2)]
    assert all(s.bit_length() == 63 for s in seeds) and seeds[0] != seeds[1]
    assert short_seed_warning(seeds[0]) is None
    why = short_seed_warning(920312219)
    assert why and "seed = 920312219 is short (30 bits)" in why
    # the attack on a short seed, in small: a record's seed and its set's number give the
    # master seed back by trying every value (here 2**16 of them)
    master = 40_000
    published = board_seed(master, 17)
    assert [m for m in range(1 << 16) if board_seed(m, 17) == published] == [master]
