"""A bot left out by the ladder's admission check: `moon ladder run` shows why in one line,
then the end of its output (the last 20 lines, as `moon play` shows a forfeiting bot's),
made safe for the terminal, and where the rest is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CRASHER = """import sys
for i in range(1, 31):
    print(f"crasher line {i}", file=sys.stderr)
print("evil \\x1b[2J end", file=sys.stderr)
sys.exit(1)
"""


def test_a_bot_left_out_by_its_check_shows_the_end_of_its_output(tmp_path):
    bot = tmp_path / "crasher"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "crasher"\nrun = "{python} bot.py"\n')
    (bot / "bot.py").write_text(CRASHER)
    (tmp_path / "l.toml").write_text(f"""[ladder]
name = "t"
boards = 1
seed = 4

[time_control]
max_hands = 2

[[bots]]
path = "{ROOT}/example_bots/random"
[[bots]]
path = "{ROOT}/example_bots/weak"
[[bots]]
path = "crasher"
""")
    out = subprocess.run([sys.executable, "-m", "arena.cli", "ladder", "run", "l.toml", "-j", "1"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "COLUMNS": "200"})
    text = out.stdout + out.stderr
    lines = text.splitlines()
    [why] = [i for i, line in enumerate(lines) if line.startswith("left out crasher:")]
    assert "failed its admission check" in lines[why] and "crash" in lines[why]
    assert lines[why + 1].startswith("the end of its output")
    assert "moon replay show --logs" in lines[why + 1]
    shown = [line[4:] for line in lines[why + 2:] if line.startswith("  | ")]
    # the last 20 lines it wrote: lines 12..30 and the escaped one, nothing earlier
    assert shown[:19] == [f"crasher line {i}" for i in range(12, 31)]
    assert shown[19] == "evil \\x1b[2J end" and len(shown) == 20
    assert "\x1b[2J" not in text
