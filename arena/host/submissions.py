"""Archive intake: an uploaded bot folder (``.tar.gz``, ``.tar`` or ``.zip``) checked,
unpacked safely and stored content-addressed.

Safe extraction refuses, with a one-line reason: an absolute path, a ``..`` component, a
link (symbolic or hard) whose target leaves the folder, a device, FIFO or other special
file, more than ``max_files`` entries, and more than ``max_unpacked`` bytes in all —
counted while reading, so a zip bomb that lies in its headers stops at the limit too. The
archive itself is kept as ``archives/<sha256>``; its folder as ``versions/<hash>`` where
the hash is the bot's version (:func:`arena.bots.versions.bot_version`), holding only the files
that version hashes: build outputs (declared ``outputs``, ``node_modules``...) that came in
the archive are dropped, so the host builds them from the sources.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from ..bots.manifest import MANIFEST, BotSpec, load_bot
from ..bots.versions import bot_version, version_files
from ..errors import ConfigError


class UploadError(ConfigError):
    """An upload that cannot be taken; the message says what was wrong and what to do."""


@dataclass(frozen=True)
class UploadLimits:
    """Limits of one upload, bytes and entries."""

    max_archive: int = 10 * 1024 * 1024
    max_unpacked: int = 50 * 1024 * 1024
    max_files: int = 2000


@dataclass(frozen=True)
class StoredUpload:
    """An archive taken in: its sha256, the bot it holds, its version hash, and where the
    folder is stored."""

    archive_sha256: str
    spec: BotSpec
    version: str
    folder: Path


MAX_PATH = 1024
"""The longest entry path an archive may hold, characters."""
MAX_PART = 255
"""The longest name of one file or folder in it, bytes of UTF-8 (the filesystem's limit)."""
MAX_DEPTH = 32
"""The most folders deep an entry may be."""
MAX_LINK = 1024
"""The longest link target, bytes."""
MAX_MANIFEST = 64 * 1024
"""The largest ``bot.toml``, bytes."""


def _printable(name: str, what: str = "name") -> str:
    """``name`` if it is UTF-8 text without control characters, else UploadError."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise UploadError(f"archive entry {name!r} has a {what} that is not "
                          "UTF-8: name files in UTF-8") from None
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name):
        raise UploadError(f"archive entry {name!r} has a control character "
                          f"in its {what}: name files without them") from None
    return name


def _check_name(name: str) -> str:
    """The member name normalised (POSIX, no leading ``./``), or UploadError."""
    if not name or "\x00" in name:
        raise UploadError("an archive entry has an empty or invalid name")
    _printable(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or name.startswith("\\"):
        raise UploadError(f"archive entry {name!r} is an absolute path: pack the bot folder "
                          "with paths relative to it (moon submit does)")
    parts = name.replace("\\", "/").split("/")
    if ".." in parts:
        raise UploadError(f"archive entry {name!r} has a '..' component: entries must stay "
                          "inside the bot folder")
    kept = [p for p in parts if p not in ("", ".")]
    if len(name) > MAX_PATH or len(kept) > MAX_DEPTH \
            or any(len(p.encode()) > MAX_PART for p in kept):
        raise UploadError(f"archive entry {name[:60]!r}... is too long or too deep (at most "
                          f"{MAX_PATH} characters, {MAX_DEPTH} folders, {MAX_PART} bytes a "
                          "name)")
    norm = posixpath.normpath("/".join(kept) or ".")
    return norm


_KIND = {"dir": "folder", "file": "file", "link": "link"}


class _Seen:
    """The entries unpacked so far: each path once, a file never also a folder."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {".": "dir"}

    def add(self, name: str, kind: str) -> None:
        """Record ``name`` (normalised) as ``kind`` (``dir``, ``file``, ``link``).

        Raises:
            UploadError: it is there already (but as a folder twice), or one of its
                parents is a file.
        """
        parent = posixpath.dirname(name)
        while parent:  # under a link is allowed: where it leads is checked on writing
            if self.kinds.setdefault(parent, "dir") == "file":
                raise UploadError(f"archive entry {name!r} is inside {parent!r}, which the "
                                  "archive also holds as a file: pack each path once")
            parent = posixpath.dirname(parent)
        before = self.kinds.get(name)
        if before is not None and not (before == kind == "dir"):
            how = "twice" if before == kind else \
                f"as both a {_KIND[before]} and a {_KIND[kind]}"
            raise UploadError(f"archive entry {name!r} appears {how}: pack each path once")
        self.kinds[name] = kind


def _within(root: Path, path: Path, name: str) -> Path:
    """``path`` if its real location (links already made followed) is inside ``root``."""
    real_root = root.resolve()
    real = path.resolve()
    if real != real_root and real_root not in real.parents:
        raise UploadError(f"archive entry {name!r} leads outside the bot folder (through a "
                          "link): entries must stay inside it")
    return path


class _Budget:
    def __init__(self, limits: UploadLimits) -> None:
        self.limits = limits
        self.bytes = 0
        self.files = 0

    def entry(self) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise UploadError(f"the archive has more than {self.limits.max_files} entries "
                              "(leave build outputs and dependencies out)")

    def take(self, n: int) -> None:
        self.bytes += n
        if self.bytes > self.limits.max_unpacked:
            mb = self.limits.max_unpacked / 1024 / 1024
            raise UploadError(f"the archive unpacks to more than {mb:g} MB (a zip bomb, or "
                              "build outputs that should be left out)")


def _copy(src: IO[bytes], root: Path, name: str, budget: _Budget, executable: bool) -> None:
    dest = _within(root, root / name, name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "xb") as out:
        for chunk in iter(lambda: src.read(1 << 16), b""):
            budget.take(len(chunk))
            out.write(chunk)
    os.chmod(dest, 0o755 if executable else 0o644)


def _link(name: str, target: str, root: Path) -> None:
    """Make a symbolic link ``name -> target`` if the target stays inside ``root``."""
    if not target or "\x00" in target or len(target.encode("utf-8", "replace")) > MAX_LINK:
        raise UploadError(f"archive entry {name!r} is a link with an empty, invalid or "
                          f"too long target (at most {MAX_LINK} bytes)")
    _printable(target, "link target")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
        raise UploadError(f"archive entry {name!r} links to {target!r}, outside the bot "
                          "folder: links must stay inside it")
    dest = root / name
    _within(root, dest.parent, name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _within(root, dest.parent / target, name)
    os.symlink(target, dest)


class _Capped(io.RawIOBase):
    """The tar stream, decompressed, with every byte tarfile reads counted: headers and
    their long names and PAX records too, which tarfile reads whole into memory (a 1 MB
    .tar.gz can declare a 1 GB long name), and the data of entries it skips. Past
    ``cap`` bytes the archive is refused."""

    def __init__(self, inner: IO[bytes], cap: int, limits: UploadLimits) -> None:
        self.inner, self.cap, self.limits, self.read_so_far = inner, cap, limits, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        room = self.cap - self.read_so_far
        data = self.inner.read(min(len(b), room + 1))
        self.read_so_far += len(data)
        if self.read_so_far > self.cap:
            mb = self.limits.max_unpacked / 1024 / 1024
            raise UploadError(f"the archive unpacks to more than {mb:g} MB (a tar bomb, or "
                              "build outputs that should be left out)")
        b[:len(data)] = data
        return len(data)


def _decompressed(data: IO[bytes]) -> IO[bytes]:
    """``data`` decompressed as its first bytes say (gzip, bzip2, xz; else a plain tar)."""
    head = data.read(6)
    data.seek(0)
    if head.startswith(b"\x1f\x8b"):
        return cast(IO[bytes], gzip.GzipFile(fileobj=data, mode="rb"))
    if head.startswith(b"BZh"):
        return bz2.BZ2File(data)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(data)
    return data


def _extract_tar(data: IO[bytes], root: Path, budget: _Budget) -> None:
    # headers: a 512-byte block each, plus a long name or PAX record (a few blocks) each
    cap = budget.limits.max_unpacked + (budget.limits.max_files + 8) * 8 * 512
    stream = io.BufferedReader(_Capped(_decompressed(data), cap, budget.limits), 1 << 16)
    try:  # a stream ("r|"): read once, in order, every byte through the cap
        tf = tarfile.open(fileobj=stream, mode="r|")
    except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, zlib_error()):
        raise UploadError("not a readable archive: send the bot folder as a .tar.gz, .tar "
                          "or .zip") from None
    seen = _Seen()
    with tf:
        try:
            for m in _members(tf):
                budget.entry()
                name = _check_name(m.name)
                if name == ".":
                    if not m.isdir():  # its data would be skipped unread: inflated for nothing
                        raise UploadError(f"archive entry {m.name!r} names the bot folder "
                                          "itself but is not a folder")
                    continue
                seen.add(name, "dir" if m.isdir() else "link" if m.issym() else "file")
                if m.isdir():
                    _within(root, root / name, name).mkdir(parents=True, exist_ok=True)
                elif m.issym():
                    _link(name, m.linkname, root)
                elif m.islnk():
                    raise UploadError(f"archive entry {m.name!r} is a hard link: pack files, "
                                      "not hard links")
                elif m.isreg():
                    src = tf.extractfile(m)
                    assert src is not None
                    _copy(src, root, name, budget, bool(m.mode & 0o111))
                else:
                    raise UploadError(f"archive entry {m.name!r} is a device, FIFO or other "
                                      "special file: a bot folder holds files and folders only")
        except (tarfile.TarError, EOFError, lzma.LZMAError, zlib_error()) as e:
            raise UploadError(f"the archive is damaged: {e}") from None


def zlib_error() -> type[Exception]:
    import zlib

    return zlib.error


def _members(tf: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while True:
        m = tf.next()
        if m is None:
            return
        yield m


def _extract_zip(data: IO[bytes], root: Path, budget: _Budget) -> None:
    try:
        zf = zipfile.ZipFile(data)
    except (zipfile.BadZipFile, OSError) as e:
        raise UploadError(f"not a readable zip archive ({e}): send the bot folder as a "
                          ".tar.gz, .tar or .zip") from None
    seen = _Seen()
    with zf:
        for info in zf.infolist():
            budget.entry()
            name = _check_name(info.filename)
            mode = info.external_attr >> 16
            if name == ".":
                if not info.is_dir():
                    raise UploadError(f"archive entry {info.filename!r} names the bot folder "
                                      "itself but is not a folder")
                continue
            link = stat.S_ISLNK(mode) and not info.is_dir()
            seen.add(name, "dir" if info.is_dir() else "link" if link else "file")
            if info.is_dir():
                _within(root, root / name, name).mkdir(parents=True, exist_ok=True)
            elif link:
                _link(name, _zip_link_target(zf, info, name), root)
            elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):  # no type bits: a file
                raise UploadError(f"archive entry {info.filename!r} is a device, FIFO or "
                                  "other special file: a bot folder holds files and folders "
                                  "only")
            else:
                try:
                    with zf.open(info) as src:
                        _copy(src, root, name, budget, bool(mode & 0o111))
                except (zipfile.BadZipFile, zlib_error(), NotImplementedError) as e:
                    raise UploadError(f"the archive is damaged: {e}") from None


def _zip_link_target(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> str:
    """The target of a zip's link entry (its data), read no further than :data:`MAX_LINK`
    bytes, so a link entry that inflates to gigabytes costs nothing.

    Raises:
        UploadError: too long, not UTF-8, or damaged.
    """
    try:
        with zf.open(info) as src:
            data = src.read(MAX_LINK + 1)
    except (zipfile.BadZipFile, zlib_error(), NotImplementedError) as e:
        raise UploadError(f"the archive is damaged: {e}") from None
    if len(data) > MAX_LINK:
        raise UploadError(f"archive entry {name!r} is a link whose target is over "
                          f"{MAX_LINK} bytes: links must name a path inside the bot folder")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError(f"archive entry {name!r} is a link whose target is not UTF-8"
                          ) from None


def _links_stay_inside(root: Path) -> None:
    """Every symbolic link under ``root``, now that all are made, resolves inside it (one
    link's target may pass through a link made after it: ``a -> x/..`` then ``x -> .``).

    Raises:
        UploadError: one leads out (or round in a loop).
    """
    for path in root.rglob("*"):
        if path.is_symlink():
            name = path.relative_to(root).as_posix()
            try:
                _within(root, path, name)
            except RuntimeError:  # a loop of links (Python < 3.13 raises this)
                raise UploadError(f"archive entry {name!r} is a link in a loop of links: "
                                  "links must lead to a file or folder of the bot") from None


OWN_IMAGES = ("moon-arena/", "moon-arena-bot/")
"""The arena's own image names: its base image, and the images built from bots'
Dockerfiles (:func:`arena.sandbox.docker.image_tag`)."""
_REGISTRY = re.compile(r"^(?:docker\.io/|index\.docker\.io/|registry-1\.docker\.io/)?")


def image_problem(image: object) -> None:
    """Refuse a submission's ``image`` that names an image the arena made, or an image by
    its id: one built from another participant's Dockerfile holds that participant's bot,
    which a ``run`` of one's own in it would print.

    Raises:
        UploadError: such a name (a bad type is :func:`arena.sandbox.docker.docker_options`'s
            to report, at the build).
    """
    if not isinstance(image, str):
        return
    ref = _REGISTRY.sub("", image.strip().lower())
    if ref.startswith(OWN_IMAGES) or ref.startswith("sha256:") \
            or re.fullmatch(r"[0-9a-f]{6,64}", ref):
        raise UploadError(f"{MANIFEST}: image = {image!r} is the arena's own image or an "
                          "image id: name a public image (python:3.12-slim), or build "
                          "yours with dockerfile = \"Dockerfile\"")


def _bot_root(root: Path) -> Path:
    """The folder holding ``bot.toml``: the archive's top, or its single top folder."""
    if (root / MANIFEST).is_file():
        return root
    entries = [p for p in root.iterdir() if p.name not in ("__MACOSX",)]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() \
            and (entries[0] / MANIFEST).is_file():
        return entries[0]
    raise UploadError(f"no {MANIFEST} at the top of the archive (or in its one top folder): "
                      "a bot folder needs one (see `moon new-bot`)")


def unpack(data: IO[bytes], dest: Path, limits: UploadLimits) -> Path:
    """Unpack the archive ``data`` (tar, tar.gz or zip, told by its first bytes) into the
    new folder ``dest`` and return the bot's folder in it.

    Raises:
        UploadError: an unsafe or damaged archive, or no ``bot.toml`` (nothing is left
            in ``dest`` then).
    """
    head = data.read(4)
    data.seek(0)
    budget = _Budget(limits)
    dest.mkdir(parents=True)
    try:
        try:
            if head.startswith(b"PK"):
                _extract_zip(data, dest, budget)
            else:
                _extract_tar(data, dest, budget)
            _links_stay_inside(dest)
        except OSError as e:  # what the checks above did not foresee: still one line
            raise UploadError(f"the archive cannot be unpacked: {e.strerror or e}"
                              f"{f' ({Path(e.filename).name!r})' if e.filename else ''}: "
                              "pack the bot folder with `moon submit`") from None
        return _bot_root(dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def take_upload(data: IO[bytes], store: Path, limits: UploadLimits,
                accept: Callable[[BotSpec, str], None] | None = None) -> StoredUpload:
    """Check, unpack and store an uploaded archive under ``store`` (``archives/`` and
    ``versions/``; the same bytes or the same sources are stored once).

    ``accept(spec, version)``, if given, is called once the archive is unpacked and its
    ``bot.toml`` read, before anything is stored: whatever it raises refuses the upload
    and leaves nothing behind (so a refused upload, sent again and again, cannot fill the
    host's disk).

    Raises:
        UploadError: over ``max_archive`` bytes, unsafe, damaged, or no ``bot.toml``.
        ConfigError: a bad ``bot.toml`` (the message names the field).
        Exception: whatever ``accept`` raises.
    """
    data.seek(0, os.SEEK_END)
    size = data.tell()
    data.seek(0)
    if size > limits.max_archive:
        raise UploadError(f"the archive is {size / 1024 / 1024:.1f} MB, over the limit of "
                          f"{limits.max_archive / 1024 / 1024:g} MB: leave build outputs "
                          "and dependencies out")
    if size == 0:
        raise UploadError("the archive is empty")
    h = hashlib.sha256()
    for chunk in iter(lambda: data.read(1 << 16), b""):
        h.update(chunk)
    sha = h.hexdigest()
    data.seek(0)
    (store / "tmp").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="upload-", dir=store / "tmp"))
    try:
        root = unpack(data, work / "x", limits)
        if (root / MANIFEST).stat().st_size > MAX_MANIFEST:
            raise UploadError(f"{MANIFEST} is over {MAX_MANIFEST // 1024} KB: a bot.toml "
                              "holds a few settings")
        try:
            spec = load_bot(root)
            image_problem(spec.extra.get("image"))
        except ConfigError as e:
            raise ConfigError(str(e).replace(str(root), "the archive")) from None
        version = bot_version(root)
        _keep_only_version(root)
        if accept is not None:
            accept(spec, version)
        archives = store / "archives"
        archives.mkdir(parents=True, exist_ok=True)
        archive = archives / sha
        if not archive.exists():
            data.seek(0)
            tmp = archives / f".{sha}.part"
            with open(tmp, "wb") as out:
                shutil.copyfileobj(data, out)
            os.replace(tmp, archive)
        folder = store / "versions" / version
        if not folder.exists():
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.replace(root, folder)
        return StoredUpload(sha, load_bot(folder), version, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _keep_only_version(root: Path) -> None:
    """Delete from the unpacked folder ``root`` every file that is not part of its version
    (:func:`arena.bots.versions.version_files`): declared ``outputs``, build stamps, caches,
    ``node_modules``... So the stored folder is exactly what its version hashes, and a
    prebuilt program uploaded among the sources cannot run under that version: the host
    builds it from the sources."""
    keep = {rel.as_posix() for rel in version_files(root)}
    for here, dirs, files in os.walk(root):
        base = Path(here)
        for name in files:
            if (base / name).relative_to(root).as_posix() not in keep:
                (base / name).unlink()
        for d in dirs:  # a link to a folder named as an output, or as node_modules...
            if (base / d).is_symlink() and (base / d).relative_to(root).as_posix() not in keep:
                (base / d).unlink()


def pack(folder: Path) -> bytes:
    """A bot folder as a ``.tar.gz`` (what ``moon submit`` uploads): the files of its
    version (:func:`arena.bots.versions.version_files`), relative to the folder, so build
    outputs, caches and VCS folders stay home.

    Raises:
        ConfigError: not a bot folder (no or a bad ``bot.toml``).
    """
    load_bot(folder)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for rel in version_files(folder):
            tf.add(folder / rel, arcname=rel.as_posix(), recursive=False)
    return buf.getvalue()
