"""A participant's first steps at the command line: `moon submit` without a token says how
to get one (registering needs the organiser's invite code), and `moon host register`
says where it keeps the token (honouring XDG_CONFIG_HOME)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main


def test_submit_without_a_token_says_to_register_with_an_invite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOON_TOKEN", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty"))  # no config file
    (tmp_path / "bot").mkdir()
    server = "http://127.0.0.1:9"  # never asked: the token is missing first
    r = CliRunner().invoke(main, ["submit", str(tmp_path / "bot"), "--server", server],
                           terminal_width=400)
    assert r.exit_code == 1 and "Traceback" not in r.output
    [line] = [x for x in r.output.splitlines() if x.strip()]
    assert line == (f"Error: no token for {server}: pass --token, set MOON_TOKEN, or register "
                    f"first with `moon host register {server} NAME --invite CODE` (the code "
                    "from the organiser; no --invite if the host's registration is open)")


def test_register_help_says_where_the_token_is_kept() -> None:
    r = CliRunner().invoke(main, ["host", "register", "--help"], terminal_width=100)
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    assert "$XDG_CONFIG_HOME/moon/config.toml, by default ~/.config/moon/config.toml" in text
    assert "--invite is needed unless the host's registration is open" in text


def test_the_token_file_follows_xdg_config_home(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.cli.client import config_path, find_token, save_token

    monkeypatch.delenv("MOON_TOKEN", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert config_path() == tmp_path / "cfg" / "moon" / "config.toml"
    assert save_token("http://h:1/", "moon_abc") == config_path()
    assert (config_path().stat().st_mode & 0o777) == 0o600
    assert find_token("http://h:1") == "moon_abc"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_path() == tmp_path / "home" / ".config" / "moon" / "config.toml"


@pytest.mark.parametrize("argv", [
    ["submit", "BOT", "--server", "127.0.0.1:8000"],
    ["submit", "BOT", "--server", "127.0.0.1:8000", "--token", "moon_x"],
    ["host", "status", "127.0.0.1:8000"],
    ["host", "register", "127.0.0.1:8000", "ann", "--invite", "x"],
])
def test_a_server_address_without_its_scheme_is_said_so(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # not "no token for 127.0.0.1:8000, register first" nor "cannot reach": what is wrong
    monkeypatch.delenv("MOON_TOKEN", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty"))
    (tmp_path / "bot").mkdir()
    argv = [str(tmp_path / "bot") if a == "BOT" else a for a in argv]
    r = CliRunner().invoke(main, argv, terminal_width=400)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    [line] = [x for x in r.output.splitlines() if x.strip()]
    assert line == ("Error: '127.0.0.1:8000' is not a host's address: write it as a URL, "
                    "e.g. http://127.0.0.1:8000")


def test_two_participants_registered_from_one_machine_both_submit(tmp_path: Path) -> None:
    """alice then bob register at one host from one config folder: bob's token does not
    replace alice's. Without --as, `moon submit` submits as bob (the last registered, said in
    register's one line); with --as alice, as alice. A real host, a real `moon` CLI."""
    import io
    import os
    import subprocess
    import tarfile
    import tomllib

    from host_support import EXAMPLES, MOON, ROOT, HostProcess, make_competition, tar_folder

    host = HostProcess(make_competition(tmp_path / "comp"), None).start()
    try:
        env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
        env.pop("MOON_TOKEN", None)

        def moon(*argv: str) -> subprocess.CompletedProcess[str]:
            done = subprocess.run([*MOON, *argv], env=env, cwd=ROOT, capture_output=True,
                                  text=True, timeout=120)
            assert done.returncode == 0, done.stdout + done.stderr
            return done

        config = tmp_path / "cfg" / "moon" / "config.toml"
        invite = host.ok("POST", "/api/invites", host.admin)["code"]
        alice = moon("host", "register", host.url, "alice", "--invite", invite)
        token_a = alice.stdout.strip()
        assert alice.stderr == (f"(saved in {config} as alice's token for {host.url}, its "
                                f"default now: `moon submit FOLDER --server {host.url}` uses "
                                "it)\n")
        invite = host.ok("POST", "/api/invites", host.admin)["code"]
        bob = moon("host", "register", host.url, "bob", "--invite", invite)
        token_b = bob.stdout.strip()
        assert bob.stderr == (f"(saved in {config} as bob's token for {host.url}, its "
                              f"default now: `moon submit FOLDER --server {host.url}` uses "
                              "it; alice's kept: `moon submit ... --as alice`)\n")
        entry = tomllib.loads(config.read_text())["servers"][host.url]
        assert entry == {"default": "bob", "token": token_b,
                         "tokens": {"alice": token_a, "bob": token_b}}
        assert (config.stat().st_mode & 0o777) == 0o600
        for who, name in (("bob", "bobs-bot"), ("alice", "alices-bot")):
            folder = tmp_path / name
            folder.mkdir()
            with tarfile.open(fileobj=io.BytesIO(tar_folder(EXAMPLES / "random",
                                                            rename=name))) as tf:
                tf.extractall(folder, filter="data")
            argv = ["submit", str(folder), "--server", host.url]
            moon(*(argv if who == "bob" else [*argv, "--as", "alice"]))
        assert host.ok("GET", "/api/me", token_a)["bots"] == ["alices-bot"]
        assert host.ok("GET", "/api/me", token_b)["bots"] == ["bobs-bot"]
        # --as a name not saved: one line naming those that are
        done = subprocess.run([*MOON, "submit", str(tmp_path / "bobs-bot"), "--server",
                               host.url, "--as", "carol"], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr.strip().splitlines() == [
            f"Error: no token of 'carol' for {host.url} in {config} (saved there: alice, "
            f"bob): register carol with `moon host register {host.url} carol`, or pass "
            "--token"]
    finally:
        host.stop()


def test_a_config_file_moon_cannot_read_is_never_rewritten(tmp_path: Path) -> None:
    """A saved-token file with a syntax error (a hand edit gone wrong) is said in one line
    and left as it is: `moon host register` stops before the name is taken (it used to
    read the file as empty and rewrite it with the new token alone, losing the others);
    `moon host new-token` prints the new token before saying it could not keep it (the old
    one no longer works). A world-readable file is replaced by one of mode 0600, the tokens
    it kept still there. A real host, a real `moon` CLI."""
    import os
    import subprocess
    import tomllib

    from host_support import MOON, ROOT, HostProcess, make_competition

    host = HostProcess(make_competition(tmp_path / "comp"), None).start()
    try:
        env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
        env.pop("MOON_TOKEN", None)

        def moon(*argv: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*MOON, *argv], env=env, cwd=ROOT, capture_output=True,
                                  text=True, timeout=120)

        config = tmp_path / "cfg" / "moon" / "config.toml"
        config.parent.mkdir(parents=True)
        other = ('[servers."http://other.example:1"]\ndefault = "olga"\ntoken = "moon_o"\n\n'
                 '[servers."http://other.example:1".tokens]\n"olga" = "moon_o"\n')
        broken = (other + "[servers.\n").encode()
        config.write_bytes(broken)
        invite = host.ok("POST", "/api/invites", host.admin)["code"]
        done = moon("host", "register", host.url, "ann", "--invite", invite)
        assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        [line] = done.stderr.strip().splitlines()
        assert line.startswith(f"Error: the moon config file {config} cannot be read (")
        assert line.endswith("): fix it or move it aside (it keeps your saved tokens), or "
                             "register with --no-save")
        assert config.read_bytes() == broken
        # fixed by hand (and world-readable): the same invite and name still register
        config.write_text(other)
        config.chmod(0o644)
        done = moon("host", "register", host.url, "ann", "--invite", invite)
        assert done.returncode == 0, done.stdout + done.stderr
        token = done.stdout.strip()
        assert (config.stat().st_mode & 0o777) == 0o600
        servers = tomllib.loads(config.read_text())["servers"]
        assert servers["http://other.example:1"] == {"default": "olga", "token": "moon_o",
                                                     "tokens": {"olga": "moon_o"}}
        assert servers[host.url] == {"default": "ann", "token": token,
                                     "tokens": {"ann": token}}
        # broken again: new-token prints the new token, says it is not saved
        broken = (config.read_text() + "[servers.\n").encode()
        config.write_bytes(broken)
        done = moon("host", "new-token", host.url, "--token", token)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        new = done.stdout.strip()
        assert new.startswith("moon_") and new != token
        [line] = done.stderr.strip().splitlines()
        assert line.startswith(f"Error: the token above is not saved: the moon config file "
                               f"{config} cannot be read (")
        assert config.read_bytes() == broken
        assert host.ok("GET", "/api/me", new)["name"] == "ann"
    finally:
        host.stop()


def test_saving_a_token_moon_cannot_write_leaves_the_file_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Text no TOML file can hold (a lone surrogate, e.g. in a token a host sent) is refused
    before the file is touched (it used to be truncated, then the write failed: every saved
    token gone); DEL, which JSON leaves unescaped but TOML forbids raw, is escaped, so the
    file reads back; a file that is not UTF-8 is said in one line by `moon submit`."""
    import tomllib

    from arena.cli.client import ClientError, config_path, save_token, saved_names

    monkeypatch.delenv("MOON_TOKEN", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    save_token("http://h:1", "moon_a", "alice")
    before = config_path().read_bytes()
    with pytest.raises(ClientError, match="not UTF-8"):
        save_token("http://h:1", "moon_\ud800", "bob")
    assert config_path().read_bytes() == before
    save_token("http://h:1", "moon_d", "d\x7fe")
    assert saved_names("http://h:1") == ["alice", "d\x7fe"]
    assert tomllib.loads(config_path().read_text())["servers"]["http://h:1"]["tokens"] == {
        "alice": "moon_a", "d\x7fe": "moon_d"}
    # a config file that is a link (kept with dotfiles) stays one: its target is replaced
    target = tmp_path / "dotfiles" / "moon.toml"
    target.parent.mkdir()
    config_path().rename(target)
    config_path().symlink_to(target)
    save_token("http://h:2", "moon_e", "eve")
    assert config_path().is_symlink() and (target.stat().st_mode & 0o777) == 0o600
    assert saved_names("http://h:1") == ["alice", "d\x7fe"] and saved_names("http://h:2") == [
        "eve"]
    config_path().unlink()
    config_path().write_bytes(b"\xff" + before)
    (tmp_path / "bot").mkdir()
    r = CliRunner().invoke(main, ["submit", str(tmp_path / "bot"), "--server", "http://h:1"],
                           terminal_width=400)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    [line] = [x for x in r.output.splitlines() if x.strip()]
    assert line == (f"Error: the moon config file {config_path()} cannot be read (not UTF-8): "
                    "fix it or move it aside (it keeps your saved tokens), or pass --token")
