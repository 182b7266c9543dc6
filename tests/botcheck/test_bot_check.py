"""`moon bot check` over real processes: every planted fault of a bot gives its own line
(the fault's kind, the detail worked out from the rules and the clock, and the fix), exit
code 1, and a bot that cannot finish its hand against itself has the checks after it
skipped (its output shown once); good bots (Python and stdio examples, a fresh stdio
starter, the Go and Node examples where their toolchains are present) pass with exit 0; a
bot that does not rejoin after its stream is dropped fails with its own line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVE = ROOT / "tests" / "bots" / "misbehave.py"
MOON = [sys.executable, "-m", "arena.cli"]


def moon(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MOON, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


def bot_folder(where: Path, toml: str) -> Path:
    folder = where / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text(toml)
    return folder


def misbehaving(where: Path, mode: str) -> Path:
    return bot_folder(where, f'name = "{mode}"\nversion = "1"\nlanguage = "python"\n'
                             f'run = "{{python}} {MISBEHAVE} {mode}"\n')


def check(folder: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return moon("bot", "check", str(folder), "--players", "3", "--records",
                str(tmp_path / "check"), *extra, cwd=tmp_path)


def lines(out: subprocess.CompletedProcess[str], mark: str) -> list[str]:
    """The checklist's items with ``mark`` ("ok", "FAIL", "warn"), each with the line under
    it (the problem)."""
    text = out.stdout.splitlines()
    return [f"{x} || {text[i + 1].strip() if i + 1 < len(text) else ''}"
            for i, x in enumerate(text) if x.startswith(mark)]


def test_a_bad_manifest_is_one_line_and_nothing_is_played(tmp_path):
    folder = bot_folder(tmp_path, 'name = "my bot!"\nrun = "{python} bot.py"\n')
    out = check(folder, tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    [fail] = lines(out, "FAIL")
    assert fail.startswith("FAIL bot.toml ||") and "bot.toml:1" in fail and "name" in fail
    assert lines(out, "ok") == [] and "Traceback" not in out.stderr
    assert not (tmp_path / "check" / "records").exists()


def test_a_failing_build_says_so_with_its_log(tmp_path):
    folder = bot_folder(tmp_path, 'name = "b"\nrun = "./bot"\n'
                                  'build = "echo the compiler says no >&2; exit 2"\n')
    out = check(folder, tmp_path)
    assert out.returncode == 1
    [fail] = lines(out, "FAIL")
    assert fail.startswith("FAIL build ||") and "build failed" in fail
    log = next((tmp_path / "check").glob("build-*.log")).read_text()
    assert "the compiler says no" in log


def test_a_run_command_that_cannot_start_fails_the_build_step(tmp_path):
    folder = bot_folder(tmp_path, 'name = "b"\nrun = "./no-such-program"\n')
    out = check(folder, tmp_path)
    assert out.returncode == 1
    [fail] = lines(out, "FAIL")
    assert fail.startswith("FAIL build ||") and "no-such-program" in fail and "fix" in fail


@pytest.mark.parametrize("mode, kind, detail, fix", [
    # the first play of a hand: a tile the seat does not hold ("cannot play"), docs/rules.md
    # "Play"; two retries, then the third forfeits
    ("illegal_play", "illegal_action", "cannot play", "docs/rules.md, 'Play'"),
    # a play while it must bid: what may be sent when, "Actions"
    ("illegal", "illegal_action", "must bid now", "docs/rules.md, 'Actions'"),
    # the decision limit given below, no bank: the time it had, in ms
    ("hang", "timeout", "no answer within the 300 ms decision time (no bank)",
     "flush stdout"),
    ("wrong_id", "protocol_error", "request", "request_id"),
    # refused on purpose, then silent: a timeout after the refusal
    ("deaf", "timeout after a refused answer", "no answer within the 300 ms decision time",
     "new request_id"),
])
def test_each_fault_fails_the_hand_against_itself_with_its_line(tmp_path, mode, kind, detail,
                                                                 fix):
    out = check(misbehaving(tmp_path, mode), tmp_path, "--decision-ms", "300", "--bank-ms",
                "0")
    assert out.returncode == 1, out.stdout
    fails = lines(out, "FAIL")
    assert fails[0].startswith("FAIL 3 players: one hand against itself"), fails
    problem = fails[0].split(" || ")[1]
    assert f" {kind}: " in problem and detail in problem and "fix: " in problem, problem
    assert fix in problem.split("fix: ")[1], problem
    assert "FAILED: 3 players" in out.stderr


def test_a_crash_shows_the_end_of_the_bots_output(tmp_path):
    out = check(misbehaving(tmp_path, "loud_crash"), tmp_path)
    assert out.returncode == 1
    fails = lines(out, "FAIL")
    problem = fails[0].split(" || ")[1]
    assert " crash: " in problem and "code 7" in problem
    # it crashes in every hand it plays: its output once, the checks after it skipped
    assert out.stdout.count("     | kaboom: the last words") == 1, out.stdout
    assert len(fails) == 1 and len(lines(out, "skip")) == 5, out.stdout


def test_a_bot_that_does_not_rejoin_fails_with_its_line(tmp_path):
    # "plain" plays every turn right but exits when its stream breaks
    out = check(misbehaving(tmp_path, "plain"), tmp_path)
    assert out.returncode == 1, out.stdout
    [fail] = lines(out, "FAIL")
    # its process ended (misbehave.py returns 1 on the broken stream): the line says so,
    # with the fix, and the end of its output shows the status it got
    assert fail.startswith("FAIL a dropped stream"), fail
    assert fail.split(" || ")[1].startswith(
        "seat 0 crash: the bot process exited (code 1) after the referee dropped its stream, "
        "without joining again (forfeit); fix: reconnect with Join{token}"), fail
    assert "docs/protocol.md, 'Reconnecting'" in fail
    assert "     | stream ended: UNAVAILABLE: conformance check: the stream is dropped on " \
        "purpose" in out.stdout, out.stdout
    # everything else passed: the one failure is the rejoin
    assert len(lines(out, "ok")) == 7 and "plain: FAILED: a dropped stream" in out.stderr


@pytest.mark.parametrize("bot", ["random", "heuristic"])
def test_the_example_bots_pass_with_3_and_4_players(tmp_path, bot):
    out = moon("bot", "check", str(ROOT / "example_bots" / bot), "--records",
               str(tmp_path / "check"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    oks = lines(out, "ok")
    assert any("3 players" in x for x in oks) and any("4 players" in x for x in oks)
    assert any("dropped stream" in x for x in oks) and any("whole game" in x for x in oks)
    assert any(x.startswith("ok   no trumps") for x in oks)
    assert any(x.startswith("ok   doubles as trumps") for x in oks)
    assert any(x.startswith("ok   its own bid") for x in oks)
    assert len(oks) == 9 and out.stdout.rstrip().endswith(f"{bot}: passed")
    # the planted refusal happened (and is the only fault of the hand against itself)
    from arena.records.record import load_record

    record = load_record(tmp_path / "check" / "records" / "check-0-self.json")
    assert [(f["seat"], f["reason"], f["forfeit"]) for f in record["faults"]] == \
        [(0, "illegal_action", False)]
    # every phase of a hand came up, all played by the bot: bids, the widow taken and a
    # tile discarded, trumps named, 7 tricks of 3 plays (docs/rules.md, "Widow, discard,
    # trumps", "Play")
    [hand] = record["hands"]
    assert hand["bids"] and hand["bid"] and hand["discard"] and hand["trump"]
    assert len(hand["plays"]) == 21 and hand["finished"]
    assert_trump_situations_happened(tmp_path, bot)


def test_a_fresh_stdio_starter_passes(tmp_path):
    made = moon("new-bot", "sb", "--lang", "stdio", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    out = moon("bot", "check", "./sb", "--players", "4", "--records", str(tmp_path / "c"),
               cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    # the bridge owns the stream and rejoins for the bot, which never notices
    oks = lines(out, "ok")
    assert any(x.startswith("ok   a dropped stream") for x in oks) and len(oks) == 8, oks


def only_record(tmp_path: Path, what: str) -> dict:
    from arena.records.record import load_record

    [path] = (tmp_path / "check" / "records").glob(f"check-*-{what}.json")
    return load_record(path)


def assert_trump_situations_happened(tmp_path: Path, bot: str) -> None:
    """The records of the check's trump situations (with 3 players, the first) show them
    as scripted."""
    # moon3: the scripted declarer bids first, bids 21 (the auction ends at once) and names
    # the contract; the bot's two seats then play the hand out under it, 7 tricks of 3 plays
    # (docs/rules.md, "Bidding", "Widow, discard, trumps", "Play")
    for what, trump in (("trump-none", "none"), ("trump-doubles", "doubles")):
        record = only_record(tmp_path, what)
        names = [s["reported_name"] for s in record["seats"]]
        declarer = names.index("check-declarer")
        assert names.count(bot) == 2 and record["faults"] == []
        [hand] = record["hands"]
        assert (hand["bidder"], hand["bid"], hand["trump"]) == (declarer, 21, trump), hand
        assert len(hand["plays"]) == 21 and hand["finished"]
        for seat in set(range(3)) - {declarer}:
            assert sum(p["seat"] == seat for p in hand["plays"]) == 7
    # the bot's own bid: two scripted passers, the bot (the dealer) wins the bid, takes the
    # widow, discards and names a trump (moon3 has a widow)
    record = only_record(tmp_path, "declare")
    names = [s["reported_name"] for s in record["seats"]]
    assert names.count("check-passer") == 2 and record["faults"] == []
    [hand] = record["hands"]
    assert names[hand["bidder"]] == bot and hand["bid"] and hand["discard"] and hand["trump"]


def test_a_bot_that_does_not_follow_suit_under_no_trumps_or_doubles_fails_there(tmp_path):
    # "offsuit" plays a legal action (so it names a number as trumps itself), but under no
    # trumps or doubles as trumps it plays a tile it holds that does not follow suit
    out = check(misbehaving(tmp_path, "offsuit"), tmp_path)
    assert out.returncode == 1, out.stdout
    fails = lines(out, "FAIL")
    assert fails[0].startswith("FAIL no trumps: a scripted seat"), fails
    assert fails[1].startswith("FAIL doubles as trumps: a scripted seat"), fails
    for fail in fails[:2]:
        problem = fail.split(" || ")[1]
        assert " illegal_action: must follow " in problem, problem
        assert problem.endswith("(docs/rules.md, 'Play')"), problem
    # the hands it names trumps in itself pass
    oks = lines(out, "ok")
    assert any(x.startswith("ok   3 players: one hand against itself") for x in oks)
    assert any(x.startswith("ok   its own bid") for x in oks)
    assert "offsuit: FAILED: no trumps" in out.stderr


@pytest.mark.parametrize("bot", ["go-heuristic", "node-heuristic"])
def test_the_go_and_node_examples_pass_and_rejoin(tmp_path, bot):
    from arena.bots.manifest import load_bot
    from arena.records.record import read_record
    from arena.sandbox.build import missing_tool

    why = missing_tool(load_bot(ROOT / "example_bots" / bot))
    if why:
        pytest.skip(f"cannot build {bot}: {why}")
    out = check(ROOT / "example_bots" / bot, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert lines(out, "FAIL") == [] and len(lines(out, "ok")) == 8
    # the drop really happened, and the bot joined again by itself
    [path] = (tmp_path / "check" / "records").glob("check-*-reconnect.json")
    log = read_record(path).logs["0"]
    assert "dropped on purpose" in log and "joining again with the same token" in log, log


def crashing_at_start(where: Path) -> Path:
    """A bot whose program dies on its first line with a traceback (before it joins)."""
    folder = bot_folder(where, 'name = "brittle"\nversion = "1"\nlanguage = "python"\n'
                               'run = "{python} bot.py"\n')
    (folder / "bot.py").write_text(
        "def load():\n    raise RuntimeError('brittle: cannot load its tables')\n\n\nload()\n")
    return folder


def test_a_bot_that_crashes_at_start_shows_its_output_once_and_skips_the_rest(tmp_path):
    out = check(crashing_at_start(tmp_path), tmp_path)
    assert out.returncode == 1, out.stdout
    # with 3 players: the hand against itself, no trumps, doubles as trumps, its own bid,
    # the dropped stream, the whole game; the first fails (a crash before joining), the
    # five after it cannot mean anything once the bot cannot finish a hand: skipped
    [fail] = lines(out, "FAIL")
    assert fail.startswith("FAIL 3 players: one hand against itself"), fail
    problem = fail.split(" || ")[1]
    assert " crash: " in problem and "before joining" in problem, problem
    skips = lines(out, "skip")
    assert len(skips) == 5, out.stdout
    assert [s.split(" || ")[0].split(":")[0] for s in skips] == [
        "skip no trumps", "skip doubles as trumps", "skip its own bid",
        "skip a dropped stream", "skip a whole game against random, heuristic"]
    for s in skips:
        assert s.split(" || ")[1].startswith("skipped: the bot did not finish"), s
    # its own output once, and no check blames a reconnect for the crash
    assert out.stdout.count("RuntimeError: brittle: cannot load its tables") == 1, out.stdout
    assert "rejoin" not in out.stdout and "Reconnecting" not in out.stdout
    assert "brittle: FAILED: 3 players" in out.stderr


def test_a_crash_before_joining_in_the_dropped_stream_game_is_a_crash_not_a_rejoin(tmp_path):
    # the host's gate plays every check and judges each (arena.host): the dropped-stream
    # game of a bot that dies before it joins says it crashed; the drop never happened
    import asyncio

    from moon_sdk.rules import Ruleset

    from arena.bots.manifest import load_bot
    from arena.check.conformance import check_games, judge
    from arena.core.timecontrol import TimeControl
    from arena.executor.local import LocalExecutor

    spec = load_bot(crashing_at_start(tmp_path))
    [game] = [g for g in check_games(spec, [load_bot(ROOT / "example_bots" / "random")],
                                     [("moon3", Ruleset.preset("moon3"))], TimeControl())
              if g.request.probe == "drop"]

    async def play():
        async with LocalExecutor(tmp_path / "records") as ex:
            return await ex.play(game.request)

    item = judge(game, asyncio.run(play()))
    assert item.status == "fail"
    assert item.problem.startswith("seat 0 crash: ") and "before joining" in item.problem
    assert "rejoin" not in item.problem, item.problem
    assert any("RuntimeError: brittle" in line for line in item.tail), item.tail


def bot_that_dies_in_its_turn(where: Path, how: str) -> Path:
    """A Python SDK bot (which rejoins after a dropped stream by itself) whose ``act``
    runs ``how``: it dies at its first turn, after it joined (and, in the dropped-stream
    game, after it joined again)."""
    folder = bot_folder(where, 'name = "fragile"\nversion = "1"\nlanguage = "python"\n'
                               'run = "{python} bot.py"\n')
    (folder / "bot.py").write_text(
        "import os, signal, sys\nfrom moon_sdk import Bot, run\n\n\n"
        "class Fragile(Bot):\n    name = 'fragile'\n    version = '1'\n\n"
        f"    def act(self, obs):\n        {how}\n\n\nrun(Fragile())\n")
    return folder


def dropped_stream_item(spec, tmp_path: Path):
    """The dropped-stream game of ``spec``'s check, played alone (as a host's gate may
    play it) and judged."""
    import asyncio

    from moon_sdk.rules import Ruleset

    from arena.bots.manifest import load_bot
    from arena.check.conformance import check_games, judge
    from arena.core.timecontrol import TimeControl
    from arena.executor.local import LocalExecutor

    [game] = [g for g in check_games(spec, [load_bot(ROOT / "example_bots" / "random")],
                                     [("moon3", Ruleset.preset("moon3"))], TimeControl())
              if g.request.probe == "drop"]

    async def play():
        async with LocalExecutor(tmp_path / "records") as ex:
            return await ex.play(game.request)

    return judge(game, asyncio.run(play()))


@pytest.mark.parametrize("how, exit_said", [
    # an uncaught exception: Python exits with code 1 (docs/protocol.md, "The bot process")
    ("raise RuntimeError('fragile: no idea what to play')", "exited (code 1)"),
    # killed by a signal: the code is minus the signal's number, and the signal is named
    ("os.kill(os.getpid(), signal.SIGKILL)", "exited (code -9)"),
])
def test_a_crash_after_rejoining_in_the_dropped_stream_game_is_a_crash_not_a_rejoin(
        tmp_path, how, exit_said):
    # the SDK rejoins after the planted drop and gets the turn sent again, then the bot
    # dies in it: the line says the crash (its exit), not "did not rejoin"
    from arena.bots.manifest import load_bot

    item = dropped_stream_item(load_bot(bot_that_dies_in_its_turn(tmp_path, how)), tmp_path)
    assert item.status == "fail"
    assert item.problem.startswith(f"seat 0 crash: the bot process {exit_said} during the "
                                   "game, after it joined again"), item.problem
    assert "rejoin" not in item.problem and "Reconnecting" not in item.problem, item.problem
    if "SIGKILL" in how:
        assert ": killed by SIGKILL" in item.problem, item.problem
    else:
        assert any("RuntimeError: fragile: no idea" in line for line in item.tail), item.tail


def test_an_unknown_language_is_a_warning_and_the_check_writes_nothing_here(tmp_path):
    # a good bot (the random example's program) whose bot.toml misspells its language:
    # the check passes, with one warning line naming the known languages; run without
    # --records from an empty folder, it leaves nothing there, and nothing in the temp
    # folder once it passed
    import shutil

    folder = tmp_path / "typo"
    shutil.copytree(ROOT / "example_bots" / "random", folder,
                    ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(toml.replace('language = "python"', 'language = "pyton"'))
    here, tmp = tmp_path / "here", tmp_path / "tmp"
    here.mkdir()
    tmp.mkdir()
    out = subprocess.run([*MOON, "bot", "check", str(folder), "--players", "3"], cwd=here,
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": "200", "TMPDIR": str(tmp)})
    assert out.returncode == 0, out.stdout + out.stderr
    [warn] = lines(out, "warn")
    assert warn.startswith("warn bot.toml: random 1.0"), warn
    problem = warn.split(" || ")[1]
    line = 1 + toml.splitlines().index('language = "python"')
    assert problem.startswith(f"bot.toml:{line}: language 'pyton' is unknown (did you mean "
                              "'python'?); it is informative only, except 'stdio'"), problem
    for lang in ("python", "go", "node", "typescript", "java", "cpp", "stdio"):
        assert f" {lang}," in problem or problem.endswith(f" {lang}"), (lang, problem)
    assert out.stdout.rstrip().endswith("random: passed")
    assert list(here.iterdir()) == [] and list(tmp.glob("moon-check-*")) == []


def test_a_failed_check_keeps_its_records_in_a_temp_folder_and_says_where(tmp_path):
    here, tmp = tmp_path / "here", tmp_path / "tmp"
    here.mkdir()
    tmp.mkdir()
    out = subprocess.run([*MOON, "bot", "check", str(crashing_at_start(tmp_path)),
                          "--players", "3"], cwd=here, capture_output=True, text=True,
                         timeout=300,
                         env={**os.environ, "COLUMNS": "200", "TMPDIR": str(tmp)})
    assert out.returncode == 1, out.stdout
    assert list(here.iterdir()) == []
    [kept] = tmp.glob("moon-check-*")
    said = [x for x in out.stdout.splitlines() if x.startswith("records and logs: ")]
    assert said == [f"records and logs: {kept} (a temporary folder, kept because the check "
                    "failed: remove it when done; --records DIR puts them where you say)"]
    # the failed hand's record (with the bot's output) and the build log are there
    from arena.records.record import read_record

    record = read_record(kept / "records" / "check-0-self.json")
    assert "RuntimeError: brittle" in "".join(record.logs.values())
    assert [p.name for p in kept.glob("build-*.log")] == ["build-brittle.log"]


def test_every_starter_and_example_language_is_known():
    # no warning for what `moon new-bot --lang` makes or an example bot says
    from arena.bots.manifest import LANGUAGES, language_warning, load_bot
    from arena.bots.starters import LANGUAGES as STARTERS

    for folder in sorted((ROOT / "example_bots").iterdir()):
        if (folder / "bot.toml").is_file():
            assert language_warning(load_bot(folder)) is None, folder
    for lang in STARTERS:
        toml = (ROOT / "arena" / "bots" / "templates" / lang / "bot.toml").read_text()
        [said] = [x for x in toml.splitlines() if x.startswith("language = ")]
        assert lang in LANGUAGES and said.split('"')[1] in LANGUAGES, (lang, said)
