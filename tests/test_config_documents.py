"""The config documents (a ladder file, a bot.toml, a time control, Docker limits): every
rule refuses in one line naming the file, the key and its line; a file the TOML parser
cannot read at all (bad syntax, not UTF-8, nested too deeply) is one line too; a good file
gives the values its keys say."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.bots.manifest import load_bot
from arena.core.timecontrol import TimeControl
from arena.errors import ConfigError
from arena.ladder.config import load_ladder
from arena.sandbox.docker import DockerLimits

NAME_RULE = "use 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit, " \
    "without '..'"


def bot(folder: Path, manifest: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(manifest)
    (folder / "bot.py").write_text("print('hi')\n")
    return folder


def refusal(fn, *args) -> str:
    with pytest.raises(ConfigError) as e:
        fn(*args)
    message = str(e.value)
    assert "\n" not in message
    return message


# -- bot.toml -------------------------------------------------------------------------------

RUN = 'name = "b"\nrun = "./bot"\n'


@pytest.mark.parametrize("text, line, says", [
    ('run = "./bot"\n', None, "the field 'name' is required (a string)"),
    ('name = "b"\n', None, "the field 'run' is required (a string)"),
    ('name = 5\nrun = "./bot"\n', 1, "name must be a string (in quotes), not 5"),
    ('name = "a b"\nrun = "./bot"\n', 1, f"name 'a b' is not a valid name: {NAME_RULE}"),
    ('name = ""\nrun = "./bot"\n', 1, f"name '' is not a valid name: {NAME_RULE}"),
    ('name = "b"\nrun = " "\n', 2, "the field 'run' must be a non-empty string"),
    ('name = "b"\nrun = 7\n', 2, "the field 'run' must be a non-empty string"),
    (RUN + "build = 1\n", 3, "the field 'build' must be a string (in quotes), not 1"),
    (RUN + "language = true\n", 3,
     "the field 'language' must be a string (in quotes), not True"),
    (RUN + "runner = []\n", 3, "the field 'runner' must be a string (in quotes), not []"),
    (RUN + "version = true\n", 3,
     "the field 'version' must be a string such as \"1.0\", not True"),
    (RUN + "version = [1]\n", 3,
     "the field 'version' must be a string such as \"1.0\", not [1]"),
    (RUN + 'runner = "podman"\n', 3, "runner 'podman' must be 'local' or 'docker'"),
    ('name = "b"\nrun = "./bot > log"\n', 2,
     "run = './bot > log' has the shell syntax '>': run is not passed to a shell; write "
     "run = \"sh -c './bot > log'\", or put the command in a script"),
    ('name = "b"\nrun = "X=1 ./bot"\n', 2,
     "run = 'X=1 ./bot' starts with the variable 'X=1': write run = \"env X=1 ./bot\" "
     "(run is not passed to a shell)"),
    ('name = "b"\nrun = "./bot $HOME"\n', 2,
     "run = './bot $HOME' uses a shell variable: run is not passed to a shell; write "
     "run = \"sh -c './bot $HOME'\", or put the command in a script"),
    ('name = "b"\nrun = "./bot \'x"\n', 2,
     "run = \"./bot 'x\": cannot be split into words (No closing quotation)"),
    (RUN + "nme = 1\n", 3,
     "unknown key 'nme' (did you mean 'name'?); a bot.toml has name, version, language, "
     "run, build, outputs, runner, limits, and for Docker image, dockerfile, host_runtime"),
    (RUN + "zzzzz = 1\n", 3,
     "unknown key 'zzzzz'; a bot.toml has name, version, language, run, build, outputs, "
     "runner, limits, and for Docker image, dockerfile, host_runtime"),
    (RUN + "limits = 5\n", 3, "limits must be a table, e.g. [limits] then memory_mb = 4096"),
    (RUN + "[limits]\ncpu = 2\n", 4, "unknown key 'cpu' in [limits]; known: memory_mb"),
    (RUN + "[limits]\nmemory_mb = 63\n", 4,
     "memory_mb = 63: must be a whole number of MiB from 64 to 16384"),
    (RUN + "[limits]\nmemory_mb = 100.0\n", 4,
     "memory_mb = 100.0: must be a whole number of MiB from 64 to 16384"),
    (RUN + "[limits]\nmemory_mb = true\n", 4,
     "memory_mb = True: must be a whole number of MiB from 64 to 16384"),
    (RUN + "[limits]\nmemory_mb = 16385\n", 4,
     "memory_mb = 16385 is above the arena's maximum of 16384 MiB of address space; ask for "
     "less (a JVM needs far less with -Xmx, see docs/sandbox.md)"),
    (RUN + 'outputs = "bot"\nbuild = "make"\n', 3,
     "outputs must be a list of paths in quotes, e.g. outputs = [\"bot\"] or outputs = "
     "[\"build/\"], not 'bot'"),
    (RUN + 'outputs = ["bot"]\n', 3,
     "outputs lists what the 'build' command writes, and this bot.toml has no build: "
     "remove outputs, or add the build"),
    *[(RUN + f'build = "make"\noutputs = ["{bad}"]\n', 4,
       f"outputs entry '{bad}' must be a path inside the bot's folder, relative to it "
       "(e.g. outputs = [\"bot\"] or outputs = [\"build/\"])")
      for bad in ("../x", "/abs", "a/../b", "./a", "a//b", " ")],
    (RUN + 'build = "make"\noutputs = ["bot.toml"]\n', 4,
     "outputs cannot hold bot.toml (the build must not write the manifest)"),
])
def test_each_bot_toml_rule_refuses_in_one_line(tmp_path, text, line, says):
    folder = bot(tmp_path / "b", text)
    manifest = folder / "bot.toml"
    where = f"{manifest}:{line}" if line else f"{manifest}"
    assert refusal(load_bot, folder) == f"{where}: {says}"


def test_the_first_of_two_problems_is_an_unknown_key(tmp_path):
    folder = bot(tmp_path / "b", 'name = 5\nrun = "./bot"\nimgae = "x"\n')
    assert refusal(load_bot, folder).startswith(f"{folder / 'bot.toml'}:3: unknown key 'imgae'")


def test_a_good_bot_toml_gives_its_values(tmp_path):
    folder = bot(tmp_path / "b", 'name = "deep.thought-2"\nversion = 1.5\n'
                 'language = " Python "\nrun = "{python} bot.py --fast"\nbuild = "make all"\n'
                 'outputs = ["out/", " bin/bot "]\nrunner = "docker"\nimage = "python:3.12"\n'
                 "host_runtime = false\n[limits]\nmemory_mb = 4096\n")
    spec = load_bot(folder / "bot.toml")
    assert spec.name == "deep.thought-2"
    assert spec.folder == folder.resolve()
    assert spec.run == "{python} bot.py --fast"
    assert spec.version == "1.5"
    assert spec.language == "python"
    assert spec.build == "make all"
    assert spec.outputs == ("out", "bin/bot")
    assert spec.runner == "docker"
    assert spec.extra == {"image": "python:3.12", "host_runtime": False}
    assert spec.memory_mb == 4096


def test_a_bot_toml_of_few_keys_gets_the_defaults(tmp_path):
    spec = load_bot(bot(tmp_path / "b", 'name = "b"\nrun = "./bot"\nversion = 3\n'))
    assert (spec.version, spec.language, spec.build, spec.outputs, spec.runner, spec.extra,
            spec.memory_mb) == ("3", "", "", (), "local", {}, None)


def test_an_unknown_language_is_warned_of_not_refused(tmp_path):
    from arena.bots.manifest import language_warning

    spec = load_bot(bot(tmp_path / "b", RUN + 'language = "pyton"\n'))
    assert spec.language == "pyton"
    assert language_warning(spec).startswith(
        "bot.toml:3: language 'pyton' is unknown (did you mean 'python'?); it is "
        "informative only")


NESTED = "x = " + "[" * 5000 + "]" * 5000 + "\n"
NESTED_TABLES = "x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n"


@pytest.mark.parametrize("body", [NESTED, NESTED_TABLES])
def test_a_bot_toml_nested_too_deeply_is_one_line(tmp_path, body):
    folder = bot(tmp_path / "b", RUN + body)
    manifest = folder / "bot.toml"
    assert manifest.stat().st_size < 60_000
    assert refusal(load_bot, folder) == (f"{manifest}: not valid TOML: its arrays or inline "
                                         "tables are nested too deeply")


def test_an_unclosed_nesting_of_5000_arrays(tmp_path):
    """5,000 ``[`` and nothing else (5 KB): the parser recurses before it finds no end."""
    folder = bot(tmp_path / "b", "")
    (folder / "bot.toml").write_bytes(b"x=" + b"[" * 5000)
    assert refusal(load_bot, folder) == (f"{folder / 'bot.toml'}: not valid TOML: its arrays "
                                         "or inline tables are nested too deeply")


def test_a_bot_toml_not_utf8_is_one_line(tmp_path):
    folder = bot(tmp_path / "b", "")
    (folder / "bot.toml").write_bytes(b'name = "b\xff"\nrun = "./bot"\n')
    assert refusal(load_bot, folder) == (f"{folder / 'bot.toml'}: not valid TOML: not UTF-8 "
                                         "(byte 0xff at offset 9)")


def test_a_bot_toml_of_bad_syntax_names_its_line(tmp_path):
    folder = bot(tmp_path / "b", 'name = "b"\nrun = = "x"\n')
    assert refusal(load_bot, folder) == (f"{folder / 'bot.toml'}: not valid TOML: Invalid "
                                         "value (at line 2, column 7)")


# -- time control and Docker limits ---------------------------------------------------------

@pytest.mark.parametrize("data, says", [
    ({"bank_ms": -1}, "time control bank_ms=-1: must be a whole number 0..86400000 ms"),
    ({"decision_ms": 86_400_001},
     "time control decision_ms=86400001: must be a whole number 0..86400000 ms"),
    ({"reconnect_ms": 1.0}, "time control reconnect_ms=1.0: must be a whole number 0..86400000 ms"),
    ({"startup_ms": True}, "time control startup_ms=True: must be a whole number 0..86400000 ms"),
    ({"max_hands": 1_000_001}, "time control max_hands=1000001: must be a whole number 0..1000000"),
    ({"illegal_retries": "2"},
     "time control illegal_retries='2': must be a whole number 0..1000000"),
    ({"startup_ms": 0}, "time control startup_ms=0: must be more than 0"),
    ({"decision_ms": 0}, "time control decision_ms=0: must be more than 0"),
    ({"max_hands": 0}, "time control max_hands=0: must be more than 0"),
    ({"x": 1, "bank": 2}, "unknown time control option(s): bank, x; known: bank_ms, "
     "decision_ms, illegal_retries, max_hands, reconnect_ms, startup_ms"),
])
def test_each_time_control_rule(data, says):
    assert refusal(TimeControl.from_dict, data) == says


def test_a_time_control_of_zeros_where_allowed():
    tc = TimeControl.from_dict({"bank_ms": 0, "reconnect_ms": 0, "illegal_retries": 0})
    assert (tc.startup_ms, tc.decision_ms, tc.bank_ms, tc.reconnect_ms, tc.illegal_retries,
            tc.max_hands) == (10_000, 2_000, 0, 0, 0, 200)


@pytest.mark.parametrize("data, says", [
    ({"memory_mb": 0}, "docker limit memory_mb=0: must be int above 0"),
    ({"memory_mb": 15}, "docker limit memory_mb=15: at least 16 MiB"),
    ({"cpus": -0.5}, "docker limit cpus=-0.5: must be float above 0"),
    ({"pids": 2.5}, "docker limit pids=2.5: must be int above 0"),
    ({"tmp_mb": True}, "docker limit tmp_mb=True: must be int above 0"),
    ({"build_timeout_s": "60"}, "docker limit build_timeout_s='60': must be float above 0"),
    ({"build_cpu_shares": 0}, "docker limit build_cpu_shares=0: must be int above 0"),
    ({"user": "0:0"}, "docker limit user='0:0': give a non-root 'uid:gid'"),
    ({"user": "nobody"}, "docker limit user='nobody': give a non-root 'uid:gid'"),
    ({"build_network": "host"}, "docker limit build_network='host': none, bridge or default"),
    ({"memry_mb": 1}, "unknown docker limit(s): memry_mb; known: build_cpu_shares, "
     "build_memory_mb, build_network, build_timeout_s, cpus, log_mb, memory_mb, open_files, "
     "pids, pull, tmp_mb, user"),
])
def test_each_docker_limit_rule(data, says):
    assert refusal(DockerLimits.from_dict, data) == says


def test_docker_limits_from_a_table():
    lim = DockerLimits.from_dict({"memory_mb": 300, "cpus": 2, "user": "1000:1000",
                                  "build_network": "bridge", "pull": ["python:3.12-slim"]})
    assert (lim.memory_mb, lim.cpus, lim.pids, lim.tmp_mb, lim.open_files, lim.log_mb,
            lim.user, lim.build_timeout_s, lim.build_network, lim.build_memory_mb,
            lim.build_cpu_shares) == (300, 2, 256, 64, 1024, 1, "1000:1000", 600.0, "bridge",
                                      2048, 256)
    assert lim.pull == frozenset({"python:3.12-slim"})


# -- the ladder file ------------------------------------------------------------------------

@pytest.fixture
def ladder(tmp_path):
    """Write a ladder file beside bots ``a`` and ``b``: ``ladder(text) -> path``."""
    bot(tmp_path / "bots" / "a", 'name = "a"\nrun = "{python} bot.py"\n')
    bot(tmp_path / "bots" / "b", 'name = "b"\nrun = "{python} bot.py"\nrunner = "docker"\n')

    def write(text: str) -> Path:
        p = tmp_path / "lad" / "demo.toml"
        p.parent.mkdir(exist_ok=True)
        p.write_text(text)
        return p
    return write


BOTS = '[[bots]]\npath = "../bots/a"\n\n[[bots]]\npath = "../bots/b"\n'
LADDER_KEYS = ("boards, check, cluster, concurrency, fork_server, gauntlet, max_forfeits, "
               "name, on_change, options, preset, results, seed")


@pytest.mark.parametrize("head, line, says", [
    ("[extra]\nx = 1\n", 1, "unknown table 'extra'; a ladder file has [ladder], "
     "[time_control], [sandbox] and [[bots]]"),
    ("ladder = 5\n", None, "[ladder] must be a table"),
    ("[ladder]\nseeed = 5\n", 2, f"unknown key 'seeed' in [ladder]; known: {LADDER_KEYS}"),
    ("[ladder]\nboards = 0\n", 2, "boards = 0: must be a whole number from 1 to 100000"),
    ("[ladder]\nboards = 100001\n", 2,
     "boards = 100001: must be a whole number from 1 to 100000"),
    ("[ladder]\nboards = true\n", 2, "boards = True: must be a whole number from 1 to 100000"),
    ("[ladder]\nboards = 2.0\n", 2, "boards = 2.0: must be a whole number from 1 to 100000"),
    ("[ladder]\nseed = -1\n", 2,
     "seed = -1: must be a whole number from 0 to 9223372036854775807"),
    ("[ladder]\nconcurrency = 65\n", 2, "concurrency = 65: must be a whole number from 1 to 64"),
    ("[ladder]\nmax_forfeits = -1\n", 2,
     "max_forfeits = -1: must be a whole number from 0 to 1000000"),
    ("[ladder]\ncheck = \"yes\"\n", 2, "check = 'yes': must be true or false"),
    ("[ladder]\nfork_server = 1\n", 2, "fork_server = 1: must be true or false"),
    ("[ladder]\noptions = 5\n", 2,
     "options must be a table of ruleset options, e.g. options = { min_bid = 3 }"),
    ("[ladder]\ngauntlet = 3\n", 2,
     'gauntlet must list the challengers by bot name, e.g. gauntlet = ["mybot"]'),
    ("[ladder]\ngauntlet = [\"a\", 3]\n", 2,
     'gauntlet must list the challengers by bot name, e.g. gauntlet = ["mybot"]'),
    ("[ladder]\non_change = \"keep\"\n", 2,
     "on_change = 'keep': use 'refuse' or 'new-version' or 'replace'"),
    ("[ladder]\ncluster = \"nowhere\"\n", 2, "'nowhere' is not a Dask scheduler's address: "
     "give tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)"),
    ("[ladder]\nname = \"my ladder\"\n", 2,
     f"ladder name 'my ladder' is not a valid name: {NAME_RULE}"),
    ("[ladder]\nname = 5\n", 2, "ladder name must be a string (in quotes), not 5"),
    ("[ladder]\ngauntlet = \"c\"\n", 2,
     "gauntlet challenger 'c' is neither a bot of this ladder (a, b) nor a bot folder nor an "
     "example bot (go-heuristic, heuristic, learned, node-heuristic, openspiel-ismcts, "
     "random, rust-stdio, search, weak)"),
    ("[time_control]\ndecision_ms = 5\nbank_ms = -5\n", 3,
     "time control bank_ms=-5: must be a whole number 0..86400000 ms"),
    ("[time_control]\nbank = 5\n", 1, "unknown time control option(s): bank; known: bank_ms, "
     "decision_ms, illegal_retries, max_hands, reconnect_ms, startup_ms"),
    ("[sandbox]\nmemory_mb = 8\n", 1, "docker limit memory_mb=8: at least 16 MiB"),
    ("[sandbox]\nmemory = 8\n", 1, "unknown docker limit(s): memory; known: build_cpu_shares, "
     "build_memory_mb, build_network, build_timeout_s, cpus, log_mb, memory_mb, open_files, "
     "pids, pull, tmp_mb, user"),
])
def test_each_ladder_rule_refuses_in_one_line(ladder, head, line, says):
    p = ladder(head + "\n" + BOTS)
    where = f"{p}:{line}" if line else f"{p}"
    assert refusal(load_ladder, p) == f"{where}: {says}"


def test_a_bad_preset_names_its_line(ladder):
    p = ladder('[ladder]\npreset = "moon9"\n' + BOTS)
    message = refusal(load_ladder, p)
    assert message.startswith(f"{p}:2: ") and "moon9" in message


@pytest.mark.parametrize("bots, line, says", [
    ('[[bots]]\npath = "../bots/a"\n', 1,
     "a ladder needs at least 2 [[bots]] entries, each with a path to a bot folder"),
    ('bots = 5\n', None,
     "a ladder needs at least 2 [[bots]] entries, each with a path to a bot folder"),
    ('[[bots]]\npath = "../bots/a"\n[[bots]]\nname = "x"\n', 3,
     'bot 2 needs path = "<bot folder>"'),
    ('[[bots]]\npath = "../bots/a"\n[[bots]]\npath = 5\n', 4,
     'bot 2 needs path = "<bot folder>"'),
    (BOTS + "nmae = \"x\"\n", 6, "unknown key 'nmae' for a bot; known: name, path, runner"),
    (BOTS + 'runner = "vm"\n', 6, "runner 'vm': use 'local' or 'docker'"),
    (BOTS + 'name = 5\n', 6, "name must be a string (in quotes), not 5"),
    (BOTS + 'name = "a"\n', 5, "two bots are named 'a'; give one a different name = \"...\""),
    (BOTS + '[[bots]]\npath = "../bots/a"\n', 7,
     "two bots are named 'a'; give one a different name = \"...\""),
])
def test_each_bots_rule_refuses_in_one_line(ladder, bots, line, says):
    p = ladder(bots)
    where = f"{p}:{line}" if line else f"{p}"
    assert refusal(load_ladder, p) == f"{where}: {says}"


def test_no_bots_at_all(ladder):
    p = ladder("[ladder]\nboards = 2\n")
    assert refusal(load_ladder, p) == (f"{p}: a ladder needs at least 2 [[bots]] entries, "
                                       "each with a path to a bot folder")


def test_a_bad_bot_folder_is_named_at_its_entry(ladder, tmp_path):
    p = ladder(BOTS.replace("../bots/b", "../bots/c"))
    c = tmp_path.resolve() / "bots" / "c"
    assert refusal(load_ladder, p) == f"{p}:5: bot '{c}': no such folder"
    bot(tmp_path / "bots" / "c", 'name = "c"\n')
    assert refusal(load_ladder, p) == (f"{p}:5: {c / 'bot.toml'}: the field 'run' is required "
                                       "(a string)")


def test_a_ladder_not_readable_as_toml_is_one_line(ladder):
    p = ladder(BOTS)
    p.write_bytes(b"[ladder]\nname = \"caf\xe9\"\n")
    assert refusal(load_ladder, p) == f"{p}: not valid TOML: not UTF-8 (byte 0xe9 at offset 20)"
    p.write_text("[ladder]\nboards = = 2\n")
    assert refusal(load_ladder, p) == f"{p}: not valid TOML: Invalid value (at line 2, column 10)"
    p.write_text("[ladder]\noptions = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n")
    assert refusal(load_ladder, p) == (f"{p}: not valid TOML: its arrays or inline tables are "
                                       "nested too deeply")
    p.unlink()
    assert refusal(load_ladder, p) == f"cannot read ladder file {p}: No such file or directory"


def test_a_good_ladder_gives_its_values(ladder, tmp_path):
    p = ladder('[ladder]\nname = "cup"\npreset = "moon3"\nboards = 6\nseed = 42\n'
               "concurrency = 3\nmax_forfeits = 2\ncheck = false\nfork_server = false\n"
               'options = { min_bid = 5 }\nresults = "out/cup.jsonl"\ngauntlet = "b"\n'
               'on_change = "new-version"\ncluster = "10.0.0.5:8786"\n'
               "[time_control]\ndecision_ms = 700\nmax_hands = 50\n"
               "[sandbox]\nmemory_mb = 512\npids = 64\n"
               '[[bots]]\npath = "../bots/a"\nname = "alpha"\nrunner = "docker"\n'
               '[[bots]]\npath = "../bots/b"\n')
    cfg = load_ladder(p)
    assert cfg.name == "cup" and cfg.preset == "moon3" and cfg.source == str(p)
    assert cfg.ruleset.min_bid == 5 and cfg.ruleset.players == 3
    assert (cfg.boards, cfg.seed, cfg.concurrency, cfg.max_forfeits) == (6, 42, 3, 2)
    assert cfg.check is False and cfg.fork_server is False
    assert cfg.results == tmp_path / "lad" / "out" / "cup.jsonl"
    assert cfg.gauntlet == ("b",) and cfg.joined == ()
    assert cfg.on_change == "new-version"
    assert cfg.cluster == "tcp://10.0.0.5:8786"
    assert cfg.time_control == TimeControl(decision_ms=700, max_hands=50)
    assert cfg.docker_limits == DockerLimits(memory_mb=512, pids=64)
    assert [(b.name, b.runner, b.folder) for b in cfg.bots] == [
        ("alpha", "docker", (tmp_path / "bots" / "a").resolve()),
        ("b", "docker", (tmp_path / "bots" / "b").resolve())]
    assert sorted(cfg.versions) == ["alpha", "b"]
    assert all(len(v) == 12 for v in cfg.versions.values())


def test_a_ladder_of_bots_only_gets_the_defaults(ladder):
    p = ladder(BOTS)
    cfg = load_ladder(p)
    assert cfg.name == "demo" and cfg.preset == "moon3"
    assert (cfg.boards, cfg.seed, cfg.concurrency, cfg.max_forfeits) == (4, 1, 1, 0)
    assert cfg.check is True and cfg.fork_server is None and cfg.results is None
    assert cfg.gauntlet == () and cfg.on_change == "refuse" and cfg.cluster is None
    assert cfg.time_control == TimeControl() and cfg.docker_limits is None
    assert [(b.name, b.runner) for b in cfg.bots] == [("a", "local"), ("b", "docker")]
