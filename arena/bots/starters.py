"""New bot folders from templates (`moon new-bot`): one per language, each ready to build
and play, with a README that says what to change.

The templates are in ``arena/bots/templates/<language>/``; ``__NAME__``, ``__GO_MODULE__``,
``__PACKAGE__`` (the name as a package name), ``__DIR__``, ``__EXAMPLES__`` and
``__PROTO__`` (the folders of the example bots and of the protocol that came with moon: a
checkout's, or an installed wheel's copies) in them are replaced, and a file named
``gitignore`` becomes ``.gitignore``.
Go and Node.js bots are made self-contained from the repository's single sources: the
``.proto`` files (``proto/``) for Node.js; the generated code (``gen/moonv1``, kept fresh by
``make gen-go``), ``go.mod`` and ``go.sum`` of ``example_bots/go-heuristic`` for Go; the
``package.json`` and ``package-lock.json`` of ``example_bots/node-heuristic`` for Node.js. So
a new bot uses exactly the dependency versions the example bots are tested with. Their
protocol code too is the example bots' own (``bot.js``, ``main.go``), with the name put in:
the templates hold only what a bot author changes (the strategy, the README).

Java (Maven, grpc-java) and TypeScript (tsc, @grpc/grpc-js) bots get the ``.proto`` files
(``src/main/proto`` and ``proto``), which their builds compile; everything else of theirs is
in the template, package locks included. The C++ bot speaks the stdio protocol (CMake, a
small JSON reader of its own, no dependency): gRPC for C++ is too heavy a build to ask of a
first bot.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path

from ..core.names import name_problem
from ..errors import ConfigError
from .resources import resource_dir

LANGUAGES = ("python", "node", "go", "stdio", "java", "typescript", "cpp")
PROTO_FOLDER = {"node": "proto", "typescript": "proto", "java": "src/main/proto"}
"""Where a language's bots keep their copy of the ``.proto`` files (moon/v1/ below it)."""
TEMPLATES = Path(__file__).resolve().parent / "templates"
PROTO_DIR = resource_dir("proto")  # the checkout's folders, or the wheel's copies
GO_EXAMPLE = resource_dir("example_bots") / "go-heuristic"
NODE_EXAMPLE = resource_dir("example_bots") / "node-heuristic"


def shown(target: Path) -> str:
    """A folder as a user types it: ``./name`` rather than ``name``."""
    return str(target) if target.is_absolute() or len(target.parts) > 1 else f"./{target}"


def _package_name(name: str) -> str:
    """The bot name as an npm package name or a Go module path."""
    return re.sub(r"[^a-z0-9_-]", "-", name.lower())


def _needs(*paths: Path) -> None:
    for p in paths:
        if not p.exists():
            raise ConfigError(f"{p} is missing: `moon new-bot` makes bots in other languages "
                              "from the Moon Arena repository's files (run it from a checkout)")


def _copy_template(lang: str, target: Path, subst: dict[str, str]) -> None:
    source = TEMPLATES / lang
    for src in sorted(source.rglob("*")):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        rel = src.relative_to(source)
        dest = target / (rel.parent / ".gitignore" if rel.name == "gitignore" else rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        text = src.read_text()
        for key, value in subst.items():
            text = text.replace(key, value)
        dest.write_text(text)


def _copy_tree(source: Path, dest: Path, pattern: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted(source.glob(pattern)):
        shutil.copyfile(f, dest / f.name)


def _as_is(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement for :func:`re.subn` that puts ``text`` in as it is (no ``\\1``)."""
    return lambda _match: text


def _derived(source: Path, edits: list[tuple[str, str]]) -> str:
    """``source``'s text with each ``(pattern, replacement)`` applied exactly once.

    Raises:
        ConfigError: a pattern no longer matches once (the example bot changed shape).
    """
    text = source.read_text()
    for pattern, replacement in edits:
        text, n = re.subn(pattern, _as_is(replacement), text, count=1, flags=re.M)
        if n != 1:
            raise ConfigError(f"{source} no longer has {pattern!r}: update arena/bots/starters.py")
    return text


def _node_files(name: str, target: Path) -> None:
    _needs(NODE_EXAMPLE / "package.json", NODE_EXAMPLE / "package-lock.json")
    package = json.loads((NODE_EXAMPLE / "package.json").read_text())
    package["name"] = _package_name(name)
    package["version"] = "0.1.0"
    package["description"] = f"{name}: a Moon bot in Node.js"
    (target / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    lock = json.loads((NODE_EXAMPLE / "package-lock.json").read_text())
    lock["name"] = package["name"]
    lock["version"] = package["version"]
    lock["packages"][""]["name"] = package["name"]
    lock["packages"][""]["version"] = package["version"]
    (target / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    (target / "bot.js").write_text(_derived(NODE_EXAMPLE / "bot.js", [
        (r"^// The node-heuristic bot: .*$",
         f"// {name}: a Moon bot in Node.js, a gRPC client of the referee (see README.md)."),
        (r'^const BOT_NAME = ".*";$', f"const BOT_NAME = {json.dumps(name)};"),
        (r'^const BOT_VERSION = ".*";$', 'const BOT_VERSION = "0.1";'),
    ]))


def _go_files(name: str, target: Path) -> None:
    _needs(GO_EXAMPLE / "gen" / "moonv1", GO_EXAMPLE / "go.mod", GO_EXAMPLE / "go.sum")
    _copy_tree(GO_EXAMPLE / "gen" / "moonv1", target / "gen" / "moonv1", "*.go")
    gomod = re.sub(r"(?m)^module .*$", f"module {_package_name(name)}",
                   (GO_EXAMPLE / "go.mod").read_text(), count=1)
    (target / "go.mod").write_text(gomod)
    shutil.copyfile(GO_EXAMPLE / "go.sum", target / "go.sum")
    module = _package_name(name)
    (target / "main.go").write_text(_derived(GO_EXAMPLE / "main.go", [
        (r"^// The go-heuristic bot: .*$",
         f"// {name}: a Moon bot in Go, a gRPC client of the referee (see README.md)."),
        (r"^// heuristic\.go is the strategy\..*$", "// strategy.go is the strategy. gen/moonv1 "
         "is generated from the protocol's .proto files."),
        (r'^\t"go-heuristic/gen/moonv1"$', f'\t"{module}/gen/moonv1"'),
        (r'^\tbotName( +)= ".*"$', f'\tbotName         = {json.dumps(name)}'),
        (r'^\tbotVersion( +)= ".*"$', '\tbotVersion      = "0.1"'),
    ]))


def scaffold(name: str, lang: str, parent: Path) -> Path:
    """Write a new bot folder ``parent/name`` for ``lang``; returns it.

    Raises:
        ConfigError: a bad name or language, the folder exists (and is not empty), or a
            file the template needs is missing.
    """
    if name_problem(name):  # the one check of arena.core.names
        raise ConfigError(f"bot name {name_problem(name)}")
    if lang not in LANGUAGES:
        raise ConfigError(f"language {lang!r}: one of {', '.join(LANGUAGES)}")
    target = parent / name
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ConfigError(f"{target} exists already: pick another name or --dir")
    subst = {"__NAME__": name, "__GO_MODULE__": _package_name(name),
             "__PACKAGE__": _package_name(name), "__DIR__": shown(target),
             "__EXAMPLES__": str(resource_dir("example_bots")), "__PROTO__": str(PROTO_DIR)}
    target.mkdir(parents=True, exist_ok=True)
    try:
        _copy_template(lang, target, subst)
        if lang in PROTO_FOLDER:
            _needs(PROTO_DIR / "moon" / "v1")
            _copy_tree(PROTO_DIR / "moon" / "v1", target / PROTO_FOLDER[lang] / "moon" / "v1",
                       "*.proto")
        if lang == "node":
            _node_files(name, target)
        elif lang == "go":
            _go_files(name, target)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return target


def next_steps(target: Path, lang: str) -> list[str]:
    """The commands that build (its ``bot.toml``'s ``build``) and play the new bot."""
    build = tomllib.loads((target / "bot.toml").read_text()).get("build")
    steps = [f"(cd {shown(target)} && {build})"] if build else []
    return [*steps, f"moon play {shown(target)} random heuristic"]
