"""Archive intake: hostile uploads are refused with a clear reason and leave nothing
behind; good ones are stored content-addressed (arena.host.submissions). The last test
sends the same hostile archives to a real `moon host run` over HTTP."""

from __future__ import annotations

import gzip
import hashlib
import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder

from arena.bots.versions import bot_version
from arena.errors import ConfigError
from arena.host.submissions import UploadError, UploadLimits, pack, take_upload, unpack

MANIFEST = b'name = "evil"\nrun = "{python} bot.py"\n'
LIMITS = UploadLimits(max_archive=64 * 1024, max_unpacked=256 * 1024, max_files=50)


def tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def special(name: str, kind: bytes, target: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def zip_bomb() -> bytes:
    """A zip whose one entry inflates to 1 GB of zeros (about 1 MB packed)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("bot.toml", MANIFEST)
        with zf.open("bot.py", "w", force_zip64=True) as f:
            block = b"\0" * (1 << 20)
            for _ in range(1024):
                f.write(block)
    return buf.getvalue()


def zip_link_bomb() -> bytes:
    """A zip whose link entry's target inflates to 256 MB (about 256 KB packed)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("bot.toml", MANIFEST)
        info = zipfile.ZipInfo("l")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as f:
            for _ in range(256):
                f.write(b"a" * (1 << 20))
    return buf.getvalue()


def zip_twice() -> bytes:
    """A zip holding bot.toml twice (the second one naming another bot)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, pytest.warns(UserWarning, match="Duplicate"):
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("bot.toml", b'name = "other"\nrun = "x"\n')
    return buf.getvalue()


def raw_tar(*names: str) -> bytes:
    """An uncompressed tar with these member names as bytes (so not UTF-8 ones too:
    ``\udcff`` becomes the byte 0xff)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT,
                      errors="surrogateescape") as tf:
        for name in names:
            data = MANIFEST if name == "bot.toml" else b"x"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def skipped_bomb() -> bytes:
    """A .tar.gz whose first entry is a 256 MB file named './' (about 256 KB packed): if it
    were skipped as the folder itself, its data would be inflated for nothing (a 10 MB
    archive made so costs over a minute of a core)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        info = tarfile.TarInfo("./")
        info.size = 256 << 20
        gz.write(info.tobuf(format=tarfile.GNU_FORMAT))
        for _ in range(256):
            gz.write(b"\0" * (1 << 20))
        info = tarfile.TarInfo("bot.toml")
        info.size = len(MANIFEST)
        gz.write(info.tobuf(format=tarfile.GNU_FORMAT))
        gz.write(MANIFEST + b"\0" * (512 - len(MANIFEST)) + b"\0" * 1024)
    return buf.getvalue()


def header_bomb(kind: bytes) -> bytes:
    """A .tar.gz whose first header is a GNU long name (``L``) or a PAX record (``x``) of
    16 MB (about 16 KB packed): tarfile reads such a header whole into memory, so one of
    1 GB in a 1 MB upload took 2 GB and four minutes."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        info = tarfile.TarInfo("././@LongLink")
        info.size, info.type = 16 << 20, kind
        gz.write(info._create_header(info.get_info(), tarfile.USTAR_FORMAT, "utf-8",
                                     "strict"))
        for _ in range(16):
            gz.write(b"a" * (1 << 20))
        info = tarfile.TarInfo("bot.toml")
        info.size = len(MANIFEST)
        gz.write(info.tobuf(format=tarfile.GNU_FORMAT))
        gz.write(MANIFEST + b"\0" * (512 - len(MANIFEST)) + b"\0" * 1024)
    return buf.getvalue()


def tar_bomb() -> bytes:
    """A .tar.gz of 20 MB of zeros in one file (about 20 KB packed)."""
    return tar(file("bot.toml", MANIFEST), file("bot.py", b"\0" * (20 << 20)))


HOSTILE = {
    "dotdot": (tar(file("bot.toml", MANIFEST), file("../escape.py", b"x")), "'..'"),
    "absolute": (tar(file("bot.toml", MANIFEST), file("/tmp/escape.py", b"x")),
                 "absolute path"),
    "symlink_out": (tar(file("bot.toml", MANIFEST), special("data", tarfile.SYMTYPE,
                                                            "/etc/passwd")), "outside"),
    "symlink_up": (tar(file("bot.toml", MANIFEST), special("up", tarfile.SYMTYPE, "..")),
                   "outside"),
    "symlink_chain": (tar(file("bot.toml", MANIFEST),
                          special("d/l", tarfile.SYMTYPE, ".."),
                          special("d/l/m", tarfile.SYMTYPE, "..")), "outside"),
    "write_through_link": (tar(file("bot.toml", MANIFEST),
                               special("l", tarfile.SYMTYPE, "."),
                               special("l/l2", tarfile.SYMTYPE, "l"),
                               file("l/x.py", b"x")), None),
    # a link made first may pass through a link made after it: a -> x/.. then x -> .
    "symlink_late_chain": (tar(file("bot.toml", MANIFEST),
                               special("a", tarfile.SYMTYPE, "x/.."),
                               special("x", tarfile.SYMTYPE, ".")), "'a' leads outside"),
    "symlink_loop": (tar(file("bot.toml", MANIFEST), special("a", tarfile.SYMTYPE, "b"),
                         special("b", tarfile.SYMTYPE, "a")), "loop of links"),
    "zip_link_bomb": (zip_link_bomb(), "target is over 1024 bytes"),
    "duplicate_file": (tar(file("bot.toml", MANIFEST), file("bot.py", b"a"),
                           file("bot.py", b"b")), "'bot.py' appears twice"),
    "duplicate_manifest_zip": (zip_twice(), "'bot.toml' appears twice"),
    "file_then_folder": (tar(file("bot.toml", MANIFEST), file("d", b"a"), file("d/x", b"b")),
                         "also holds as a file"),
    "folder_then_file": (tar(file("bot.toml", MANIFEST), file("d/x", b"a"), file("d", b"b")),
                         "both a folder and a file"),
    "file_then_link": (tar(file("bot.toml", MANIFEST), file("l", b"x"),
                           special("l", tarfile.SYMTYPE, "bot.toml")), "both a file and a link"),
    "long_name": (tar(file("bot.toml", MANIFEST), file("a" * 300, b"x")), "too long"),
    "deep": (tar(file("bot.toml", MANIFEST), file("d/" * 40 + "f", b"x")), "too deep"),
    "not_utf8": (raw_tar("bot.toml", "b\udcff.py"), "not UTF-8"),
    "terminal_escape": (tar(file("bot.toml", MANIFEST), file("\x1b]0;pwned\x07.py", b"x")),
                        "control character"),
    "link_target_escape": (tar(file("bot.toml", MANIFEST),
                               special("l", tarfile.SYMTYPE, "bot.toml\x1b[2J")),
                           "control character"),
    "huge_manifest": (tar(file("bot.toml", MANIFEST + b"#" * (100 << 10))), "over 64 KB"),
    "build_not_a_string": (tar(file("bot.toml", MANIFEST + b'build = ["make", "all"]\n')),
                           "'build' must be a string"),
    "language_not_a_string": (tar(file("bot.toml", MANIFEST + b"language = 5\n")),
                              "'language' must be a string"),
    "version_a_table": (tar(file("bot.toml", MANIFEST + b"version = {major = 1}\n")),
                        "'version' must be a string"),
    "file_named_dot": (skipped_bomb(), "names the bot folder itself"),
    "long_name_bomb": (header_bomb(tarfile.GNUTYPE_LONGNAME), "unpacks to more than"),
    "pax_bomb": (header_bomb(tarfile.XHDTYPE), "unpacks to more than"),
    "hardlink": (tar(file("bot.toml", MANIFEST), special("h", tarfile.LNKTYPE,
                                                         "/etc/passwd")), "hard link"),
    "device": (tar(file("bot.toml", MANIFEST), special("dev", tarfile.CHRTYPE)), "device"),
    "fifo": (tar(file("bot.toml", MANIFEST), special("fifo", tarfile.FIFOTYPE)), "FIFO"),
    "no_manifest": (tar(file("bot.py", b"print()")), "no bot.toml"),
    "too_many_files": (tar(file("bot.toml", MANIFEST),
                           *(file(f"f{i}.py", b"") for i in range(60))), "more than 50"),
    "tar_bomb": (tar_bomb(), "unpacks to more than"),
    "zip_bomb": (zip_bomb(), None),
    "garbage": (b"\x1f\x8b this is not gzip at all" * 10, "not a readable"),
    "bad_manifest": (tar(file("bot.toml", b'name = "evil"\n')), "'run' is required"),
    "nested_manifest": (tar(file("bot.toml", MANIFEST + b"x = " + b"[" * 5000 + b"]" * 5000)),
                        "the archive/bot.toml: not valid TOML: its arrays or inline tables are "
                        "nested too deeply"),
    "manifest_not_utf8": (tar(file("bot.toml", MANIFEST + b"# caf\xe9\n")),
                          "the archive/bot.toml: not valid TOML: not UTF-8 (byte 0xe9 at offset"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archive_refused(case: str, tmp_path: Path) -> None:
    data, why = HOSTILE[case]
    limits = LIMITS if case not in ("zip_bomb", "zip_link_bomb", "huge_manifest",
                                    "file_named_dot") \
        else UploadLimits(max_archive=4 << 20, max_unpacked=8 << 20)
    if case == "write_through_link":  # a link inside is fine; the chain stays inside too
        up = take_upload(io.BytesIO(data), tmp_path / "store", limits)
        assert (up.folder / "x.py").is_file()
        return
    with pytest.raises(ConfigError) as e:  # a clear reason, never an OSError (a 500)
        take_upload(io.BytesIO(data), tmp_path / "store", limits)
    if why:
        assert why in str(e.value), str(e.value)
    if case == "zip_bomb":
        assert "unpacks to more than 8 MB" in str(e.value)
    assert "\n" not in str(e.value).strip() or case == "bad_manifest"
    assert "Traceback" not in str(e.value)
    assert not (tmp_path / "escape.py").exists() and not Path("/tmp/escape.py").exists()
    store = tmp_path / "store"
    left = [p for p in store.rglob("*") if p.is_file()] if store.exists() else []
    assert left == []  # nothing stored, nothing half-unpacked


def test_oversize_archive(tmp_path: Path) -> None:
    data = tar(file("bot.toml", MANIFEST), file("big.bin", bytes(range(256)) * 1024))
    with pytest.raises(UploadError, match="over the limit"):
        take_upload(io.BytesIO(data), tmp_path, UploadLimits(max_archive=1024))


def test_good_archive_is_stored_by_content(tmp_path: Path) -> None:
    data = pack(EXAMPLES / "heuristic")
    up = take_upload(io.BytesIO(data), tmp_path, LIMITS)
    assert up.archive_sha256 == hashlib.sha256(data).hexdigest()
    assert (tmp_path / "archives" / up.archive_sha256).read_bytes() == data
    assert up.version == bot_version(EXAMPLES / "heuristic")
    assert up.folder == tmp_path / "versions" / up.version and up.spec.name == "heuristic"
    # a zip of the same folder in a top folder: the same version
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for p in sorted((EXAMPLES / "heuristic").iterdir()):
            if p.is_file():
                info = zipfile.ZipInfo(f"heuristic/{p.name}")
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                zf.writestr(info, p.read_bytes())
    again = take_upload(io.BytesIO(buf.getvalue()), tmp_path, LIMITS)
    assert again.version == up.version and again.archive_sha256 != up.archive_sha256


def test_unpack_keeps_modes(tmp_path: Path) -> None:
    info = tarfile.TarInfo("run.sh")
    info.mode = 0o755
    data = tar(file("bot.toml", MANIFEST), (info, b"#!/bin/sh\n"))
    root = unpack(io.BytesIO(data), tmp_path / "x", LIMITS)
    assert (root / "run.sh").stat().st_mode & 0o111


def test_hostile_uploads_over_http(tmp_path: Path) -> None:
    host = HostProcess(make_competition(tmp_path / "comp", extra=""), None)
    text = (host.folder / "competition.toml").read_text()
    (host.folder / "competition.toml").write_text(
        text.replace("max_archive_mb = 10", "max_archive_mb = 0.5")
            .replace("max_unpacked_mb = 50", "max_unpacked_mb = 8")
            .replace("max_files = 2000", "max_files = 50"))
    host.start()
    try:
        mallory = host.register("mallory")
        for case in ("dotdot", "absolute", "symlink_out", "no_manifest", "tar_bomb",
                     "device", "garbage", "symlink_late_chain", "duplicate_file", "not_utf8",
                     "long_name", "terminal_escape"):
            r = host.submit(mallory, HOSTILE[case][0])
            assert r.status_code == 400, (case, r.text)
            assert HOSTILE[case][1] in r.json()["detail"], (case, r.text)
        r = host.submit(mallory, zip_bomb())
        assert r.status_code == 413 and "over the limit" in r.json()["detail"]
        assert host.submit(None, tar_folder(EXAMPLES / "random")).status_code == 401
        assert host.submit("moon_forged", tar_folder(EXAMPLES / "random")).status_code == 401
        assert host.ok("GET", "/api/bots") == []
        # the API's index lists every path of its OpenAPI schema
        schema = host.ok("GET", "/openapi.json")["paths"]
        index = host.ok("GET", "/api")
        assert len(schema) >= 10 and index["endpoints"] == sorted(schema), index
        store = host.folder / "store"
        assert not (store / "versions").exists() or not any((store / "versions").iterdir())
    finally:
        host.stop()


def test_an_uploaded_build_output_is_not_stored(tmp_path: Path) -> None:
    """A Go-style bot uploaded with a prebuilt ``bot`` (a declared output): the stored
    folder holds only the sources its version hashes, so the host builds the program; an
    upload with another prebuilt ``bot`` is the same version and stores no other program."""
    toml = b'name = "g"\nbuild = "go build -o bot ."\nrun = "./bot"\noutputs = ["bot"]\n'
    sources = tar(file("bot.toml", toml), file("main.go", b"package main\n"))
    plain = take_upload(io.BytesIO(sources), tmp_path / "a", LIMITS)
    prebuilt = tar(file("bot.toml", toml), file("main.go", b"package main\n"),
                   file("bot", b"#!/bin/sh\necho smuggled\n"), file(".build-stamp", b"x"))
    up = take_upload(io.BytesIO(prebuilt), tmp_path / "b", LIMITS)
    assert up.version == plain.version
    assert sorted(p.name for p in up.folder.iterdir()) == ["bot.toml", "main.go"]
    assert bot_version(up.folder) == up.version
