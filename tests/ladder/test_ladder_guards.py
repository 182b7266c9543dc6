"""A ladder's guards: bot names checked like a bot.toml's wherever they come from, a warning
when more bots would think at once than there are cores, the master seed kept out of the
exports until the ladder is finished, and a results file's text shown inert in the tables.
Over a real ladder run (`moon ladder run`, bot processes, gRPC) and the real CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.ladder.config import concurrency_warning, load_ladder
from arena.ladder.schedule import make_schedule

ROOT = Path(__file__).resolve().parents[2]
SEED = 8675309123
HOSTILE = "\x1b]52;c;SGVsbG8=\x07\x1b[2Jevil\rname\u202e"


def ladder_text(extra_bot: str = "", ladder: str = "", concurrency: int = 1) -> str:
    return (f'[ladder]\npreset = "moon3"\nboards = 1\nseed = {SEED}\n'
            f"concurrency = {concurrency}\ncheck = false\n{ladder}\n"
            "[time_control]\nstartup_ms = 30000\n\n"
            f'[[bots]]\npath = "{ROOT}/example_bots/random"\n{extra_bot}\n'
            f'[[bots]]\npath = "{ROOT}/example_bots/weak"\n')


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "l.toml"
    p.write_text(text)
    return p


def moon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200"})


def acted_on(text: str) -> list[str]:
    """Characters a terminal acts on (control characters but newline and tab, the bidi
    overrides), worked out with unicodedata."""
    return [c for c in text if (unicodedata.category(c) == "Cc" and c not in "\n\t")
            or unicodedata.bidirectional(c) in ("LRO", "RLO", "LRE", "RLE", "PDF")]


# -- names --------------------------------------------------------------------------------

def test_a_name_override_that_is_not_a_string_names_its_line(tmp_path):
    p = write(tmp_path, ladder_text("name = 5"))
    with pytest.raises(ConfigError) as e:
        load_ladder(p)
    assert str(e.value) == f"{p}:13: name must be a string (in quotes), not 5"
    out = moon("ladder", "run", str(p), "--results", str(tmp_path / "r.sqlite"))
    assert out.returncode == 1
    assert f"{p}:13: name must be a string" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["a/b", "..", "../etc", "two words", "tab\\there",
                                  "[red]x[/red]", "<i>x</i>", "bell\\u0007", ".dot"])
def test_bad_name_overrides_are_refused_at_their_line(tmp_path, name):
    p = write(tmp_path, ladder_text(f'name = "{name}"'))
    with pytest.raises(ConfigError) as e:
        load_ladder(p)
    assert str(e.value).startswith(f"{p}:13: name ")
    assert "is not a valid name" in str(e.value)


def test_a_good_override_renames_the_bot_and_keeps_its_manifest(tmp_path):
    cfg = load_ladder(write(tmp_path, ladder_text('name = "random-2"')))
    assert [b.name for b in cfg.bots] == ["random-2", "weak"]
    assert cfg.bots[0].run == "{python} bot.py" and cfg.bots[0].version == "1.0"


def test_the_ladders_own_name_is_checked_too(tmp_path):
    p = write(tmp_path, ladder_text(ladder='name = "../../escape"'))
    with pytest.raises(ConfigError) as e:
        load_ladder(p)
    assert str(e.value).startswith(f"{p}:7: ladder name '../../escape' is not a valid name")


# -- concurrency --------------------------------------------------------------------------

def test_concurrency_past_the_cores_is_a_warning(tmp_path):
    cfg = load_ladder(write(tmp_path, ladder_text(concurrency=32)))
    # 32 games: one bot of each thinks at a time (the others wait for their turn), so 32
    # bots think at once; on 2 cores each gets 1/16 of a core, 16x its time alone
    assert concurrency_warning(cfg, cores=2) == (
        "concurrency 32 on 2 core(s): 32 bots think at once (one a game), up to 16x slower "
        "than alone, and may lose on time (2000 ms a decision); use concurrency 2 (-j 2) or "
        "give more time")
    assert "use concurrency 16 (-j 16)" in concurrency_warning(cfg, cores=16)
    assert "up to 2x slower" in concurrency_warning(cfg, cores=16)
    assert concurrency_warning(cfg, cores=32) is None
    cfg1 = load_ladder(write(tmp_path, ladder_text(concurrency=1)))
    assert concurrency_warning(cfg1, cores=3) is None
    # one game at a time: its bots take turns, nothing to advise even on 1 core (or less)
    assert concurrency_warning(cfg1, cores=1) is None
    assert concurrency_warning(cfg1, cores=0.5) is None


def test_the_demo_is_not_warned_on_two_cores():
    # `make demo`: 2 games of 3 bots on 2 cores keep 2 bots thinking, one a core (it was
    # warned as 6 bots at once, at the user's very first command)
    demo = load_ladder(ROOT / "ladders" / "demo.toml")
    assert (demo.concurrency, demo.ruleset.players) == (2, 3)
    assert concurrency_warning(demo, cores=2) is None
    assert "up to 2x slower" in concurrency_warning(demo, cores=1)


# -- a real ladder: the warning, the seed, inert tables ----------------------------------

@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("ladder")
    lf = tmp / "l.toml"
    lf.write_text(ladder_text(concurrency=2))
    results = tmp / "r.sqlite"
    # on one CPU (its affinity): 2 games at once are more thinking bots than cores
    cpu = min(os.sched_getaffinity(0))
    out = subprocess.run([sys.executable, "-m", "arena.cli", "ladder", "run", str(lf),
                          "--results", str(results), "--bootstrap", "10"], capture_output=True,
                         text=True, timeout=600, cwd=ROOT, env={**os.environ, "COLUMNS": "200"},
                         preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    assert out.returncode == 0, out.stderr
    return results, out


def test_the_run_warns_in_one_line_when_thinking_bots_outnumber_the_cores(played):
    _, out = played
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("warning: concurrency")]
    assert lines == ["warning: concurrency 2 on 1 core(s): 2 bots think at once (one a "
                     "game), up to 2x slower than alone, and may lose on time (2000 ms a "
                     "decision); use concurrency 1 (-j 1) or give more time"]


def test_the_seed_is_shown_once_the_ladder_is_finished(played):
    results, _ = played
    games = make_schedule(["random", "weak"], 3, 1, SEED)
    assert sqlite3.connect(results).execute("SELECT COUNT(*) FROM games").fetchone()[0] \
        == len(games)
    out = moon("ladder", "show", str(results), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ladder"]["seed"] == SEED


def test_the_seed_is_withheld_while_the_ladder_is_not_finished(played, tmp_path):
    # the same ladder with one game not played yet (as during a run, or after a kill)
    partial = tmp_path / "partial.sqlite"
    partial.write_bytes(played[0].read_bytes())
    db = sqlite3.connect(partial)
    [(gid,)] = db.execute("SELECT id FROM games ORDER BY id LIMIT 1").fetchall()
    for table, key in (("hands", "game_id"), ("seats", "game_id"), ("faults", "game_id"),
                       ("games", "id")):
        db.execute(f"DELETE FROM {table} WHERE {key} = ?", (gid,))
    db.commit()
    db.close()
    total = len(make_schedule(["random", "weak"], 3, 1, SEED))
    out = moon("ladder", "show", str(partial), "--format", "json")
    assert out.returncode == 0, out.stderr
    meta = json.loads(out.stdout)["ladder"]
    assert meta["seed"] is None
    assert f"not finished ({total - 1} of {total} games)" in meta["seed_withheld"]
    assert str(SEED) not in out.stdout
    for fmt in ("csv", "table"):
        shown = moon("ladder", "show", str(partial), "--format", fmt)
        assert shown.returncode == 0 and str(SEED) not in shown.stdout
    revealed = moon("ladder", "show", str(partial), "--format", "json", "--reveal-seed")
    assert json.loads(revealed.stdout)["ladder"]["seed"] == SEED


def test_a_results_files_text_is_shown_inert(played, tmp_path):
    forged = tmp_path / "forged.sqlite"
    forged.write_bytes(played[0].read_bytes())
    db = sqlite3.connect(forged)
    db.execute("UPDATE seats SET bot = ? WHERE bot = 'weak'", (HOSTILE,))
    meta = json.loads(db.execute("SELECT value FROM meta WHERE key = 'bots'").fetchone()[0])
    meta[1]["name"] = HOSTILE
    db.execute("UPDATE meta SET value = ? WHERE key = 'bots'", (json.dumps(meta),))
    db.execute("INSERT OR REPLACE INTO meta VALUES ('left_out', ?)",
               (json.dumps({HOSTILE: HOSTILE}),))
    db.execute("INSERT OR REPLACE INTO meta VALUES ('name', ?)", (json.dumps(HOSTILE),))
    db.commit()
    db.close()
    out = moon("ladder", "show", str(forged))
    assert out.returncode == 0, out.stderr
    assert acted_on(out.stdout + out.stderr) == []
    assert "\\x1b]52;c;SGVsbG8=" in out.stdout  # shown as an escape, not dropped
