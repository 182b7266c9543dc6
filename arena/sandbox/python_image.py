"""A Python image made from this machine's own Python, with no registry: the base of the
referee's image (``Dockerfile``).

Where no registry is reachable there is no ``python:3.11-slim`` to build FROM. The
sandbox's base image (:func:`arena.sandbox.docker.ensure_base_image`) solves that for bots
by mounting the host's runtime; a referee image must be self-contained, so this one
*copies* the host's Python into a root filesystem and ``docker import``s it as
:data:`PYTHON_IMAGE` (``moon-arena/python:3.11`` for Python 3.11):

- the interpreter (``sys._base_executable``, symlinks resolved) and its standard library
  (the folder of ``os.py``, with ``lib-dynload``), without the test suites, IDLE, Tk,
  turtledemo, ``site-packages`` and the static library of ``config-*``;
- every shared library that the interpreter, its ``lib-dynload`` modules, ``/bin/sh`` and
  the extension modules of *this* environment (grpcio, numpy, scipy...: what the wheels
  installed in the image will load) link to, as ``ldd`` lists them, with the dynamic
  linker and ``/etc/ld.so.cache``;
- ``/bin/sh`` (for the Dockerfile's ``RUN`` and the entry point), ``/tmp``, and
  ``/etc/passwd``/``group`` with root, nobody (65534) and moon (10001);
- ``/usr/local/bin/python3`` (and ``python``) linking to the interpreter.

Every file keeps its host path (as the base image's mounts do), so the interpreter finds
its prefix and libraries as it does on the host. The image is labelled with a digest of
its file list (paths, sizes, times): :func:`ensure_python_image` imports it again only when
that changed (another Python, a new extension module). ``python -m arena.sandbox
python-image`` and ``make image`` call it. Linux only; it takes seconds, and about 100 MB.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path

import docker
import docker.errors

from .docker import LABEL, SandboxError, client

PYTHON_IMAGE = f"moon-arena/python:{sys.version_info.major}.{sys.version_info.minor}"
"""The image's name: one per Python minor version (wheels are built per version)."""
DIGEST_LABEL = f"{LABEL}.python-image"
"""The label holding the digest of the image's file list."""
USER = "10001:10001"
"""The unprivileged user the referee image runs as (``moon`` in ``/etc/passwd``)."""
_SKIP_TOP = {"site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo"}
_SKIP_ANY = {"test", "tests", "idle_test", "__phello__"}
_LDD_LINE = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)")

Entry = tuple[str, str]
"""``(kind, source)``: ``("dir", "")``, ``("file", host path)``, ``("link", target)`` or
``("data", text)``."""


def _executable() -> Path:
    """The interpreter itself (not a virtualenv's link to it)."""
    return Path(getattr(sys, "_base_executable", "") or sys.executable).resolve()


def _stdlib() -> Path:
    return Path(os.__file__).resolve().parent


def _add_path(entries: dict[str, Entry], path: str, depth: int = 0) -> str:
    """Add the host ``path`` with every folder above it, keeping the symlinks met on the
    way (``/bin`` -> ``usr/bin``, ``sh`` -> ``dash``) as symlinks; returns the real path.

    Raises:
        SandboxError: a symlink loop.
    """
    if depth > 40:
        raise SandboxError(f"too many symlinks under {path}")
    parts = Path(path).parts
    current = "/"
    for i, part in enumerate(parts[1:], start=1):
        step = os.path.join(current, part)
        if os.path.islink(step):
            target = os.readlink(step)
            entries[step] = ("link", target)
            real = os.path.normpath(os.path.join(current, target))
            return _add_path(entries, os.path.join(real, *parts[i + 1:]), depth + 1)
        last = i == len(parts) - 1
        if not last or os.path.isdir(step):
            entries.setdefault(step, ("dir", ""))
        else:
            entries[step] = ("file", step)
        current = step
    return current


def _add_tree(entries: dict[str, Entry], root: Path) -> None:
    """The standard library folder ``root``, without what a server never imports."""
    _add_path(entries, str(root))
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not (
            (rel == Path(".") and (d in _SKIP_TOP or d.startswith("config-")))
            or d in _SKIP_ANY))
        for name in dirs:
            full = os.path.join(folder, name)
            entries[full] = ("link", os.readlink(full)) if os.path.islink(full) \
                else ("dir", "")
        for name in files:
            full = os.path.join(folder, name)
            entries[full] = ("link", os.readlink(full)) if os.path.islink(full) \
                else ("file", full)
    if (root / "site-packages").is_dir():
        entries[str(root / "site-packages")] = ("dir", "")  # empty: where pip may install


def _linked_libraries(binaries: list[str]) -> set[str]:
    """The shared libraries ``ldd`` says ``binaries`` load (absolute paths)."""
    ldd = shutil.which("ldd")
    if ldd is None:
        raise SandboxError("ldd is not on PATH: it lists the libraries the image needs")
    found: set[str] = set()
    for i in range(0, len(binaries), 200):
        done = subprocess.run([ldd, *binaries[i:i + 200]], capture_output=True, text=True,
                              check=False)
        found.update(m[1] for m in _LDD_LINE.finditer(done.stdout))
    return {p for p in found if os.path.exists(p)}


def _extension_modules() -> list[str]:
    """Shared objects of the interpreter's ``lib-dynload`` and of this environment's
    packages (what the wheels installed in the image load)."""
    roots = {Path(p) for p in sys.path if p.endswith("lib-dynload")}
    roots |= {Path(sysconfig.get_path(k)) for k in ("purelib", "platlib")}
    out: set[str] = set()
    for root in roots:
        if root.is_dir():
            out.update(str(p) for p in root.rglob("*.so*") if p.is_file())
    return sorted(out)


def python_image_entries() -> dict[str, Entry]:
    """``{path in the image: entry}`` of the whole root filesystem (module docstring).

    Raises:
        SandboxError: not on Linux, or ``ldd`` is missing.
    """
    if not sys.platform.startswith("linux"):
        raise SandboxError("the Python image is made from a Linux host's Python")
    entries: dict[str, Entry] = {}
    for d in ("/etc", "/proc", "/sys", "/dev", "/run", "/home", "/usr/local/bin"):
        for folder in reversed([Path(d), *Path(d).parents][:-1]):
            entries.setdefault(str(folder), ("dir", ""))
    exe = _add_path(entries, str(_executable()))
    _add_tree(entries, _stdlib())
    sh = _add_path(entries, "/bin/sh")
    venv = Path(sys.prefix).resolve()
    for lib in sorted(_linked_libraries([exe, sh, *_extension_modules()])):
        real = Path(lib).resolve()
        if venv != Path(sys.base_prefix).resolve() and venv in real.parents:
            continue  # a wheel's own bundled library: it comes with the wheel
        _add_path(entries, lib)
    if os.path.isfile("/etc/ld.so.cache"):
        _add_path(entries, "/etc/ld.so.cache")
    entries["/usr/local/bin/python3"] = ("link", exe)
    entries["/usr/local/bin/python"] = ("link", exe)
    entries["/tmp"] = ("dir", "")
    entries["/etc/passwd"] = ("data", "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                              "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                              "moon:x:10001:10001:moon:/tmp:/usr/sbin/nologin\n")
    entries["/etc/group"] = ("data", "root:x:0:\nnogroup:x:65534:\nmoon:x:10001:\n")
    return entries


def digest(entries: dict[str, Entry]) -> str:
    """A digest of the file list: paths, kinds, link targets, sizes and times."""
    h = hashlib.sha256()
    for path in sorted(entries):
        kind, source = entries[path]
        extra = ""
        if kind == "file":
            st = os.stat(source)
            extra = f"{st.st_size}:{st.st_mtime_ns}:{st.st_mode}"
        h.update(f"{path}\0{kind}\0{source}\0{extra}\n".encode())
    return h.hexdigest()[:32]


def write_tarball(entries: dict[str, Entry], out: Path) -> None:
    """The root filesystem as a tar file, every entry owned by root; folders 0755 (so the
    unprivileged user can reach the interpreter wherever the host keeps it), ``/tmp``
    1777, files with their host mode."""
    with tarfile.open(out, "w") as tar:
        for path in sorted(entries, key=lambda p: Path(p).parts):
            kind, source = entries[path]
            name = path.lstrip("/")
            if kind == "file":
                ti = tar.gettarinfo(source, arcname=name)
                ti.mode = (ti.mode | 0o444) & 0o7755
            else:
                ti = tarfile.TarInfo(name)
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = "root"
            if kind == "dir":
                ti.type, ti.mode = tarfile.DIRTYPE, 0o1777 if path == "/tmp" else 0o755
                tar.addfile(ti)
            elif kind == "link":
                ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, source, 0o777
                tar.addfile(ti)
            elif kind == "data":
                data = source.encode()
                ti.size, ti.mode = len(data), 0o644
                tar.addfile(ti, io.BytesIO(data))
            else:
                with open(source, "rb") as f:
                    tar.addfile(ti, f)


def ensure_python_image(c: docker.DockerClient | None = None, force: bool = False) -> str:
    """Import :data:`PYTHON_IMAGE` unless the engine has it with the same file list (or
    ``force``); returns its name.

    Raises:
        SandboxError: no engine, not Linux, no ``ldd``, or the import failed.
    """
    c = c or client()
    entries = python_image_entries()
    want = digest(entries)
    old = None
    with contextlib.suppress(docker.errors.ImageNotFound):
        old = c.images.get(PYTHON_IMAGE)
        if not force and (old.labels or {}).get(DIGEST_LABEL) == want:
            return PYTHON_IMAGE
    repo, tag = PYTHON_IMAGE.rsplit(":", 1)
    path = _executable().parent
    changes = [f"LABEL {LABEL}=1", f"LABEL {DIGEST_LABEL}={want}",
               f"ENV PATH=/usr/local/bin:{path}:/usr/bin:/bin", "ENV LANG=C.UTF-8",
               'CMD ["python3"]']
    with tempfile.TemporaryDirectory(prefix="moon-python-image-") as tmp:
        tarball = Path(tmp) / "rootfs.tar"
        try:
            write_tarball(entries, tarball)
            c.api.import_image_from_file(str(tarball), repository=repo, tag=tag,
                                         changes=changes)
            new = c.images.get(PYTHON_IMAGE)
        except (OSError, docker.errors.DockerException) as e:
            raise SandboxError(f"cannot import the Python image {PYTHON_IMAGE}: {e}") from None
    if old is not None and old.id != new.id:
        with contextlib.suppress(docker.errors.DockerException):
            c.images.remove(old.id)  # ours, now untagged; kept if an image is built on it
    return PYTHON_IMAGE
