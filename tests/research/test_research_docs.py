"""docs/research.md works as written: its ``python`` blocks run in order (in an empty
folder), its blocks marked ``file=NAME`` are written there, the bot they make plays a
real `moon play` game, and its ladder file loads."""

from __future__ import annotations

import os
import re
import subprocess

from research_support import MOON, ROOT

from arena.ladder.config import load_ladder
from arena.records.record import load_record, verify_record

DOC = ROOT / "docs" / "research.md"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def test_the_research_page_runs(tmp_path, monkeypatch, capsys):
    blocks = BLOCK.findall(DOC.read_text())
    code = [body for lang, info, body in blocks if lang == "python" and not info.strip()]
    files = {info.split("file=")[1].strip(): body for _, info, body in blocks
             if "file=" in info}
    assert len(code) >= 5 and {"linear/bot.py", "linear/bot.toml"} <= set(files)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "example_bots").symlink_to(ROOT / "example_bots")
    namespace: dict[str, object] = {"__name__": "research_doc"}
    for body in code:
        exec(compile(body, str(DOC), "exec"), namespace)  # noqa: S102 - our own docs
    for name, body in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    printed = capsys.readouterr().out
    assert "need 2: won" in printed and "termination" in printed
    assert verify_record(load_record(tmp_path / "runs/local/doubles-7.json")) == []
    assert (tmp_path / "linear" / "weights.npy").is_file()
    # the trained bot enters the arena as the page says
    done = subprocess.run([MOON, "play", "./linear", "heuristic", "random", "--seed", "5",
                           "--records", "records"], capture_output=True, text=True,
                          timeout=300, env={**os.environ})
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = (tmp_path / "records").glob("*.json")
    record = load_record(path)
    assert verify_record(record) == [] and record["faults"] == []
    assert record["seats"][0]["reported_name"] == "linear"
    ladder = load_ladder(tmp_path / "ladders" / "research.toml")
    assert [b.name for b in ladder.bots] == ["linear", "heuristic", "openspiel-ismcts"]
