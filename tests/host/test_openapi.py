"""The host's OpenAPI schema (arena/host/openapi.py) is one a client can be generated from:
valid by openapi-spec-validator, with no gaps (every operation's errors have a body,
every response is documented, enum-like fields list their values, every route that reads
a token says so), and openapi-python-client generates a client from it that talks to the
real app (FastAPI's TestClient as its transport)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from host_support import make_competition
from openapi_spec_validator import validate

from arena.host.app import create_app
from arena.host.run import open_host

ENUM_LIKE = {"status", "kind", "termination", "phase", "next_phase", "runner"}
"""Field names that hold one of a few values wherever they appear."""
OPEN = {("GET", "/api/leaderboard"), ("GET", "/api/status"), ("GET", "/api/phase"),
        ("GET", "/api/final"), ("GET", "/api/final.csv")}
"""The operations that never read a token (worked out from the routes by hand)."""
OPTIONAL = {("POST", "/api/register"), ("GET", "/api/bots"), ("GET", "/api/bots/{name}"),
            ("GET", "/api/versions/{version_id}"), ("GET", "/api/versions/{version_id}/log"),
            ("GET", "/api/games"), ("GET", "/api/games/{game_id}"),
            ("GET", "/api/games/{game_id}/record"), ("GET", "/api/games/{game_id}/logs/{seat}")}
"""Those where a token is optional (it shows its owner's private fields)."""
ADMIN = {("POST", "/api/invites"), ("POST", "/api/phase"), ("GET", "/api/audit"),
         ("POST", "/api/versions/{version_id}/disable"),
         ("POST", "/api/versions/{version_id}/enable"),
         ("POST", "/api/games/{game_id}/void"), ("POST", "/api/announcement"),
         ("POST", "/api/participants/{name}/disable"),
         ("POST", "/api/participants/{name}/enable")}
"""The organiser's."""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str]]:
    folder = make_competition(tmp_path_factory.mktemp("openapi") / "comp")
    host, _ = open_host(folder, None)
    try:
        yield TestClient(create_app(host)), (folder / "admin.token").read_text().strip()
    finally:
        host.close()


@pytest.fixture(scope="module")
def schema(app: tuple[TestClient, str]) -> dict[str, Any]:
    r = app[0].get("/openapi.json")
    assert r.status_code == 200
    return dict(r.json())


def operations(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            yield method.upper(), path, op


def test_the_schema_is_valid_openapi(schema: dict[str, Any]) -> None:
    validate(schema)


def test_every_response_has_a_body_and_every_operation_its_errors(schema) -> None:
    gaps = []
    for method, path, op in operations(schema):
        responses = op["responses"]
        for code, r in responses.items():
            if code != "204" and not r.get("content"):
                gaps.append(f"{method} {path} {code}: no body")
        errors = {c for c in responses if c[0] in "45"}
        need = {"429", "503"} | ({"401"} if (method, path) not in OPEN else set()) \
            | ({"403"} if (method, path) in ADMIN else set()) \
            | ({"404"} if "{" in path else set())
        if need - errors:
            gaps.append(f"{method} {path}: undocumented {sorted(need - errors)}")
    assert gaps == []
    # the error body is {"detail": "..."}
    message = schema["components"]["schemas"]["Message"]
    assert message["properties"]["detail"]["type"] == "string"
    # a repeated submission's 200 is the version, as the 201
    sub = schema["paths"]["/api/submissions"]["post"]["responses"]
    assert sub["200"]["content"] == sub["201"]["content"]
    assert sub["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/VersionOut")


def test_every_enum_like_field_lists_its_values(schema) -> None:
    gaps = []
    for name, model in schema["components"]["schemas"].items():
        for field, prop in model.get("properties", {}).items():
            if field in ENUM_LIKE:
                strings = [b for b in prop.get("anyOf", [prop]) if b.get("type") == "string"]
                if not strings or any("enum" not in b for b in strings):
                    gaps.append(f"{name}.{field}")
    assert gaps == []
    props = schema["components"]["schemas"]
    assert props["VersionOut"]["properties"]["status"]["enum"] == [
        "pending", "building", "validating", "active", "rejected", "retired", "disabled"]
    assert "timeout" in props["FaultOut"]["properties"]["reason"]["enum"]
    # which bound to quote when a rating is open
    assert "'at least rating_low' when rating_high is null" in \
        props["VersionOut"]["properties"]["rating_open"]["description"]


def test_every_operation_says_whether_it_needs_a_token(schema) -> None:
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    for method, path, op in operations(schema):
        key = (method, path)
        if key in OPEN:
            assert "security" not in op, key
        elif key in OPTIONAL:
            assert op["security"] == [{}, {"HTTPBearer": []}], key
        else:
            assert op["security"] == [{"HTTPBearer": []}], key


def test_the_token_requirements_hold_on_the_app(app, schema) -> None:
    """What the schema says of each call is what the app does: without a token, a
    required one is a 401, an optional or open one is not."""
    client, _ = app
    for method, path, op in operations(schema):
        if method != "GET" or "{" in path:
            continue
        got = client.get(path).status_code
        assert (got == 401) == (op.get("security") == [{"HTTPBearer": []}]), (path, got)


@pytest.mark.slow  # a generator run in a process of its own
def test_a_generated_client_talks_to_the_host(app, schema, tmp_path: Path) -> None:
    tool = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
    assert tool, "openapi-python-client is in the dev extra"
    spec = tmp_path / "openapi.json"
    spec.write_text(json.dumps(schema))
    # its post-hooks run ruff (the dev extra's) by name: the virtualenv's bin on PATH, as
    # in an activated one (make runs .venv/bin/python without it)
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run([tool, "generate", "--path", str(spec), "--output-path",
                           str(tmp_path / "client"), "--meta", "none"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        pkg = importlib.import_module("client")
        get_status = importlib.import_module("client.api.status.status_api_status_get")
        create_invite = importlib.import_module(
            "client.api.accounts.make_invite_api_invites_post")
        client, admin = app
        plain = pkg.Client(base_url="http://testserver")
        plain.set_httpx_client(client)
        status = get_status.sync(client=plain)
        assert status.phase.value in ("upcoming", "registration", "season", "freeze",
                                      "final", "ended")
        # without the token: the documented 401, parsed as the error body
        refused = create_invite.sync_detailed(client=plain)
        assert refused.status_code == 401 and "token" in refused.parsed.detail
        authed = pkg.AuthenticatedClient(base_url="http://testserver", token=admin)
        authed.set_httpx_client(client)
        client.headers["Authorization"] = f"Bearer {admin}"
        try:
            assert len(create_invite.sync(client=authed).code) >= 16
        finally:
            del client.headers["Authorization"]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "client" or m.startswith("client.")]:
            del sys.modules[name]
