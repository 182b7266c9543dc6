"""What the local runner keeps of a bot and says about it, over real processes and the real
CLI: a bot's stdout is kept with its stderr (print() shows in `moon replay show --logs`),
control characters from bots and records never reach the terminal, a bot that dies before
joining without a word is recorded as such, `bot.toml` may raise the address-space limit
(up to the arena's maximum), and shell syntax in `run` is refused with the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
import uuid
from pathlib import Path

import pytest
from e2e_support import ROOT, TEST_BOTS

from arena.bots.manifest import DEFAULT_MEMORY_MB, MAX_MEMORY_MB
from arena.records.record import load_record

MOON = [sys.executable, "-m", "arena.cli"]
HOSTILE = ("\x1b[2J\x1b[H\x1b]0;owned\x07\x1b]52;c;SGVsbG8=\x07innocent\rEVIL"
           "\u202eabc\x9b31m\x1b[8mhidden")


def moon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MOON, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "200"})


def acted_on(text: str) -> list[str]:
    """Characters a terminal acts on (worked out with unicodedata, not arena.core.text): control
    characters but newline and tab, and the bidi overrides."""
    return [c for c in text if (unicodedata.category(c) == "Cc" and c not in "\n\t")
            or unicodedata.bidirectional(c) in ("LRO", "RLO", "LRE", "RLE", "PDF")]


def bot_folder(tmp_path: Path, name: str, toml: str, script: str = "") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.toml").write_text(toml)
    if script:
        (folder / "bot.py").write_text(script)
    return folder


def record_in(folder: Path) -> Path:
    [path] = folder.glob("*.json")
    return path


def test_hostile_output_is_shown_inert_by_play_and_replay(tmp_path):
    # a bot that writes escape sequences on stdout and stderr, then exits before joining
    bot = bot_folder(tmp_path, "hostile", 'name = "hostile"\nrun = "{python} bot.py"\n',
                     "import sys\n"
                     f"sys.stdout.write({HOSTILE!r} + ' on stdout\\n')\n"
                     f"sys.stderr.write({HOSTILE!r} + ' on stderr\\n')\n"
                     "sys.exit(1)\n")
    out = moon("play", "--seed", "1", "--records", str(tmp_path / "r"), str(bot), "random",
               "random")
    assert out.returncode == 3, out.stderr
    assert "seat 0 (hostile) forfeited: crash" in out.stderr
    assert acted_on(out.stdout + out.stderr) == []
    # shown, not lost: every character as its escape, both streams
    assert "\\x1b]52;c;SGVsbG8=\\x07innocent\\rEVIL\\u202eabc\\x9b31m" in out.stderr
    assert "on stdout" in out.stderr and "on stderr" in out.stderr
    path = record_in(tmp_path / "r")
    shown = moon("replay", "show", "--logs", str(path))
    assert shown.returncode == 0, shown.stderr
    assert acted_on(shown.stdout + shown.stderr) == []
    assert "\\x1b[2J\\x1b[H\\x1b]0;owned\\x07" in shown.stdout


def test_a_forged_record_is_shown_inert(tmp_path):
    out = moon("play", "--seed", "2", "--records", str(tmp_path / "r"), "random", "random",
               "random")
    assert out.returncode == 0, out.stderr
    path = record_in(tmp_path / "r")
    record = json.loads(path.read_text())
    record["seats"][1]["name"] = HOSTILE
    record["match_id"] = HOSTILE
    record["faults"] = [{"seat": 2, "reason": HOSTILE, "detail": HOSTILE, "forfeit": False}]
    record["logs"] = {"0": HOSTILE, HOSTILE: HOSTILE}
    path.write_text(json.dumps(record))
    shown = moon("replay", "show", "--logs", str(path))
    assert shown.returncode == 0, shown.stderr
    assert acted_on(shown.stdout + shown.stderr) == []
    assert "\\x1b]52;c;SGVsbG8=" in shown.stdout


def test_print_in_a_python_bot_is_kept_in_the_record(tmp_path):
    marker = uuid.uuid4().hex
    bot = bot_folder(tmp_path, "printer",
                     f'name = "printer"\nrun = "{{python}} {TEST_BOTS / "runnerbot.py"} '
                     f'{marker} print"\n')
    out = moon("play", "--seed", "3", "--records", str(tmp_path / "r"), str(bot), "random",
               "random")
    assert out.returncode == 0, out.stderr
    path = record_in(tmp_path / "r")
    shown = moon("replay", "show", "--logs", str(path))
    assert shown.returncode == 0, shown.stderr
    log = shown.stdout.split("--- seat 0 output (the end) ---", 1)[1]
    # before joining and at the game's end: both print()s, on stdout, in order
    first, last = log.index(f"PRINTED {marker} 1"), log.index(f"PRINTED {marker} 2")
    assert first < last


def test_a_bot_that_exits_silently_before_joining_is_recorded_as_such(tmp_path):
    bot = bot_folder(tmp_path, "silent", 'name = "silent"\nrun = "{python} bot.py"\n',
                     "import os\nos._exit(1)\n")
    out = moon("play", "--seed", "4", "--records", str(tmp_path / "r"), str(bot), "random",
               "random")
    assert out.returncode == 3, out.stderr
    [fault] = load_record(record_in(tmp_path / "r"))["faults"]
    assert fault["seat"] == 0 and fault["reason"] == "crash"
    assert "exited (code 1) before joining" in fault["detail"]
    assert fault["detail"].endswith("no output on stderr or stdout")


def test_a_bot_that_needs_more_address_space_sets_it_in_bot_toml(tmp_path):
    # like a JVM: it maps 3 GiB of address space (read-only, nothing touched) before joining
    mapped = DEFAULT_MEMORY_MB + 1024
    assert mapped < MAX_MEMORY_MB
    run = f'run = "{{python}} {TEST_BOTS / "runnerbot.py"} {uuid.uuid4().hex} mmap {mapped}"\n'
    roomy = bot_folder(tmp_path, "roomy",
                       f'name = "roomy"\n{run}\n[limits]\nmemory_mb = {mapped + 1024}\n')
    out = moon("play", "--seed", "5", "--records", str(tmp_path / "ok"), str(roomy), "random",
               "random")
    assert out.returncode == 0, out.stderr
    record = load_record(record_in(tmp_path / "ok"))
    assert record["faults"] == [] and "MAPPED" in record["logs"]["0"]
    # the same bot under the default limit fails, and says where the limit is set
    tight = bot_folder(tmp_path, "tight", f'name = "tight"\n{run}')
    out = moon("play", "--seed", "5", "--records", str(tmp_path / "no"), str(tight), "random",
               "random")
    assert out.returncode == 3, out.stderr
    [fault] = load_record(record_in(tmp_path / "no"))["faults"]
    assert "before joining" in fault["detail"]
    assert f"address space is limited to {DEFAULT_MEMORY_MB} MiB" in fault["detail"]
    assert "[limits] memory_mb" in fault["detail"]


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on this machine")
def test_a_jvm_under_the_default_limit_says_why_and_starts_with_more(tmp_path):
    # a JVM reserves 1 GiB of class space and a heap of a quarter of RAM: not under 2 GiB
    run = 'run = "java -XX:+UseSerialGC -version"\n'
    tight = bot_folder(tmp_path, "jvm", f'name = "jvm"\n{run}')
    out = moon("play", "--seed", "7", "--records", str(tmp_path / "no"), str(tight),
               "random", "random")
    assert out.returncode == 3, out.stderr
    record = load_record(record_in(tmp_path / "no"))
    [fault] = record["faults"]
    assert f"address space is limited to {DEFAULT_MEMORY_MB} MiB" in fault["detail"]
    assert "Error occurred during initialization of VM" in record["logs"]["0"]  # its stdout
    roomy = bot_folder(tmp_path, "jvm4g", f'name = "jvm4g"\n{run}\n[limits]\nmemory_mb = 4096\n')
    out = moon("play", "--seed", "7", "--records", str(tmp_path / "ok"), str(roomy),
               "random", "random")
    record = load_record(record_in(tmp_path / "ok"))
    [fault] = record["faults"]  # it started, printed its version and exited: no game
    assert "exited (code 0) before joining" in fault["detail"]
    assert "address space" not in fault["detail"]
    assert "Error occurred" not in record["logs"]["0"] and "version" in record["logs"]["0"]


@pytest.mark.parametrize("limits, words", [
    (f"memory_mb = {MAX_MEMORY_MB + 1}", f"above the arena's maximum of {MAX_MEMORY_MB} MiB"),
    ('memory_mb = "4G"', "must be a whole number of MiB"),
    ("cpu = 5", "unknown key 'cpu' in [limits]"),
])
def test_limits_beyond_the_maximum_are_refused_at_their_line(tmp_path, limits, words):
    bot = bot_folder(tmp_path, "greedy",
                     f'name = "greedy"\nrun = "{{python}} bot.py"\n\n[limits]\n{limits}\n')
    out = moon("play", str(bot), "random", "random")
    assert out.returncode == 2
    assert f"{bot / 'bot.toml'}:5: " in out.stderr and words in out.stderr
    assert "Traceback" not in out.stderr


def test_shell_syntax_in_run_is_refused_with_the_fix_and_the_fix_plays(tmp_path):
    script = (f"echo \"X is $X\" >&2\nexec {sys.executable} "
              f"{ROOT / 'example_bots' / 'random' / 'bot.py'}\n")
    bad = bot_folder(tmp_path, "piped", 'name = "piped"\nrun = "X=1 bash bot.sh | cat"\n')
    (bad / "bot.sh").write_text(script)
    out = moon("play", str(bad), "random", "random")
    assert out.returncode == 2
    assert f"{bad / 'bot.toml'}:2: " in out.stderr
    assert "run is not passed to a shell" in out.stderr
    assert "write run = \"sh -c 'X=1 bash bot.sh | cat'\"" in out.stderr
    assert "Traceback" not in out.stderr
    # what the docs say to write instead: the shell by name
    good = bot_folder(tmp_path, "shelled",
                      'name = "shelled"\nrun = "sh -c \'X=1 bash bot.sh | cat\'"\n')
    (good / "bot.sh").write_text(script)
    out = moon("play", "--seed", "6", "--records", str(tmp_path / "r"), str(good), "random",
               "random")
    assert out.returncode == 0, out.stderr
    assert "X is 1" in load_record(record_in(tmp_path / "r"))["logs"]["0"]


def test_a_variable_before_the_command_gets_env_as_the_fix(tmp_path):
    bad = bot_folder(tmp_path, "var", 'name = "var"\nrun = "X=1 ./bot"\n')
    out = moon("play", str(bad), "random", "random")
    assert out.returncode == 2
    assert (f"{bad / 'bot.toml'}:2: run = 'X=1 ./bot' starts with the variable 'X=1': write "
            'run = "env X=1 ./bot"') in out.stderr


@pytest.mark.parametrize("name", ["a/b", "..", ".hidden", "two words", "tab\there",
                                  "[bold]x[/bold]", "<b>x</b>", "esc\x1b[31m", "-flag",
                                  "x" * 65])
def test_bad_bot_names_are_refused_at_their_line(tmp_path, name):
    bot = bot_folder(tmp_path, "named", f'# a bot\nname = {json.dumps(name)}\n'
                     'run = "{python} bot.py"\n')
    out = moon("play", str(bot), "random", "random")
    assert out.returncode == 2
    assert f"{bot / 'bot.toml'}:2: name " in out.stderr
    assert "is not a valid name" in out.stderr and "Traceback" not in out.stderr
    assert acted_on(out.stderr) == []


def test_a_name_that_is_not_a_string_is_refused_at_its_line(tmp_path):
    bot = bot_folder(tmp_path, "numbered", 'run = "{python} bot.py"\nname = 5\n')
    out = moon("play", str(bot), "random", "random")
    assert out.returncode == 2
    assert f"{bot / 'bot.toml'}:2: name must be a string" in out.stderr
    assert "Traceback" not in out.stderr
