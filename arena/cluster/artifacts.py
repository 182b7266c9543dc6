"""Bots as content-addressed artifacts: what travels from the client to a worker, and the
worker's cache of them.

A bot folder travels as a gzipped tarball of exactly the files that make its version
(:func:`arena.bots.versions.version_files`), named by that version (:func:`arena.bots.versions
.bot_version`, a sha256): :func:`pack_folder`. A worker keeps each one unpacked in its
cache under the hash (:class:`BotCache`): it is unpacked into a temporary folder, its hash
computed again and compared with its name, and only then renamed into place, so a folder
in the cache is always complete and always the version its name says. A game asks for a
version by hash and gets that folder or none: a worker never runs a stale version. The
bot is built there (its ``build`` command, or its Docker image) once, before its first
game on that machine.

The cache is ``$MOON_CLUSTER_CACHE`` (default ``~/.cache/moon-arena/cluster``); worker
processes of one machine may share it (a lock file per version keeps two of them from
unpacking or building the same one at once).
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ..bots.versions import bot_version, version_files
from ..errors import InfrastructureError

CACHE_VAR = "MOON_CLUSTER_CACHE"
"""The environment variable naming a worker's artifact cache folder."""
MAX_ARTIFACT_BYTES = 512 * 1024 * 1024
"""The largest bot folder (its version's files, gzipped) the arena sends to workers:
512 MiB. Larger ones belong in a Docker image the workers pull."""


def default_cache() -> Path:
    """The worker's cache folder: ``$MOON_CLUSTER_CACHE``, else
    ``$XDG_CACHE_HOME/moon-arena/cluster`` (``~/.cache/...`` by default)."""
    if os.environ.get(CACHE_VAR):
        return Path(os.environ[CACHE_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "moon-arena" / "cluster"


PROTO = Path("proto") / "moon" / "v1" / "bot.proto"
"""Where a bot folder (or the repository) keeps the protocol's main ``.proto`` file."""


def outside_proto(folder: Path) -> Path | None:
    """The ``proto/`` folder a Node.js bot in ``folder`` loads from outside it, or None.

    The repository's Node.js example bot (``example_bots/node-heuristic``) loads the
    protocol from its own ``proto/`` if it has one (as ``moon new-bot --lang node`` makes
    it), else from the repository's, two folders up: on a worker, where the folder is
    unpacked alone into the cache, the second is not there, so its artifact carries a
    copy as its own ``proto/`` (:func:`pack_folder`)."""
    import tomllib

    if (folder / PROTO).is_file() or not (folder.parent.parent / PROTO).is_file():
        return None
    try:
        language = tomllib.loads((folder / "bot.toml").read_text()).get("language")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return folder.parent.parent / "proto" if language == "node" else None


def _add(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
    """Add one file (or link) with owners, groups and times zeroed."""
    info = tar.gettarinfo(str(path), arcname=arcname)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    if info.isreg():
        with open(path, "rb") as f:
            tar.addfile(info, f)
    else:
        tar.addfile(info)


def pack_folder(folder: Path) -> tuple[str, bytes]:
    """The version of the bot in ``folder`` as it travels, and its artifact: a gzipped
    tarball of the version's files (:func:`arena.bots.versions.version_files`; symbolic
    links as links), with owners, groups and times zeroed so the same files always give
    the same bytes. A Node.js bot that loads the protocol from outside its folder
    (:func:`outside_proto`) carries a copy of it as ``proto/``: its version is then that
    of the folder with the copy in it (what a worker finds when it unpacks it).

    Returns:
        ``(version, tarball)``: the sha256 hex digest, and the bytes.

    Raises:
        InfrastructureError: the folder cannot be read, or its artifact is larger than
            :data:`MAX_ARTIFACT_BYTES`.
    """
    try:
        version = bot_version(folder)
        proto = outside_proto(folder)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
            for rel in version_files(folder):
                _add(tar, folder / rel, rel.as_posix())
            if proto is not None:
                for path in sorted(p for p in proto.rglob("*") if p.is_file()):
                    _add(tar, path, (Path("proto") / path.relative_to(proto)).as_posix())
    except OSError as e:
        raise InfrastructureError(f"cannot pack the bot folder {folder}: {e}") from None
    data = buf.getvalue()
    if len(data) > MAX_ARTIFACT_BYTES:
        raise InfrastructureError(
            f"the bot folder {folder} packs to {len(data) >> 20} MiB, more than the "
            f"{MAX_ARTIFACT_BYTES >> 20} MiB a cluster sends: keep data out of the folder "
            "(a Docker image the workers pull)")
    if proto is not None:  # the version of what a worker unpacks: the folder and the copy
        with tempfile.TemporaryDirectory(prefix="moon-artifact-") as tmp:
            unpack(data, Path(tmp))
            version = bot_version(tmp)
    return version, data


def unpack(data: bytes, into: Path) -> None:
    """Unpack an artifact of :func:`pack_folder` into the empty folder ``into``, refusing
    any member that is not a plain file, folder or symbolic link, or that would land
    outside it (the ``data`` tar filter).

    Raises:
        InfrastructureError: not a tarball, or a refused member.
    """
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError, EOFError) as e:
        raise InfrastructureError(f"a bot artifact cannot be unpacked: {e}") from None


class BotCache:
    """A worker's bot folders by version (see the module's docstring).

    Args:
        root: the cache folder (made when needed).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fetched = 0
        """Artifacts this process unpacked (the rest were cache hits)."""

    def path(self, version: str) -> Path:
        """Where version ``version`` lives once unpacked."""
        return self.root / "bots" / version

    @contextlib.contextmanager
    def lock(self, version: str) -> Iterator[None]:
        """Hold the version's lock (between threads and processes of this machine)."""
        lock_dir = self.root / "locks"
        lock_dir.mkdir(parents=True, exist_ok=True)
        with open(lock_dir / f"{version}.lock", "w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def ensure(self, version: str, fetch: Callable[[], bytes]) -> Path:
        """The folder of ``version``, unpacked from ``fetch()`` if the cache lacks it (the
        caller holds :meth:`lock`). An unpacked artifact whose files do not hash to
        ``version`` is thrown away, never used.

        Raises:
            InfrastructureError: the artifact cannot be fetched or unpacked, or is not
                the version it claims to be.
        """
        final = self.path(version)
        if final.is_dir():
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        data = fetch()
        tmp = Path(tempfile.mkdtemp(prefix=f".{version[:12]}-", dir=final.parent))
        try:
            unpack(data, tmp)
            got = bot_version(tmp)
            if got != version:
                raise InfrastructureError(
                    f"a bot artifact that should be version {version[:12]} hashes to "
                    f"{got[:12]}: not used")
            os.replace(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        self.fetched += 1
        return final


__all__ = ["CACHE_VAR", "MAX_ARTIFACT_BYTES", "BotCache", "default_cache", "pack_folder",
           "unpack"]
