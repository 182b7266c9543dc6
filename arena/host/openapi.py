"""The host's OpenAPI schema, complete enough to generate a client from: FastAPI's, with
what it cannot see added from the routes themselves.

- every error answer has its body (:class:`~arena.host.schemas.Message`, ``{"detail":
  "..."}``; FastAPI's own 422 keeps its list of field errors) and each operation lists
  the ones it can give: 401 where a token is read, 403 for the organiser's, 404 where the
  path names something, 422 where there are parameters, 429 (the visitors' budget) and
  503 (the database cannot answer) everywhere;
- every success answer has its body (a repeated submission's 200 is the same version);
- fields that hold one of a few values (a version's ``status``, a game's ``kind``,
  ``status`` and ``termination``, a fault's ``reason``, a phase) list them as an enum;
- the token requirement per operation: ``HTTPBearer`` where it is needed, ``{}`` or
  ``HTTPBearer`` where it is optional (it shows its owner's private fields), none where it
  is not read.

:func:`install` makes it the app's ``/openapi.json``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import fastapi.routing
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute

from ..core.results import FaultReason, Termination
from . import deps
from .phases import PHASES
from .schemas import Message

BEARER = "HTTPBearer"
"""The security scheme of the API token (``Authorization: Bearer TOKEN``)."""
VERSION_STATUSES = ("pending", "building", "validating", "active", "rejected", "retired",
                    "disabled")
GAME_STATUSES = ("queued", "running", "finished", "voided", "cancelled")
GAME_KINDS = ("rated", "final", "validation", "challenge", "table")
ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("VersionOut", "status"): VERSION_STATUSES,
    ("GameOut", "status"): GAME_STATUSES,
    ("GameOut", "kind"): GAME_KINDS,
    ("ChallengeOut", "status"): GAME_STATUSES,
    ("FinalOut", "state"): ("not started", "playing", "over"),
    ("FinalOut", "phase"): PHASES,
    ("GameOut", "termination"): tuple(t.key for t in Termination),
    ("FaultOut", "reason"): tuple(r.key for r in FaultReason),
    ("StatusOut", "phase"): PHASES,
    ("StatusOut", "next_phase"): PHASES,
    ("StatusOut", "runner"): ("local", "docker"),
    ("PhaseOut", "phase"): PHASES,
    ("PhaseOut", "next_phase"): PHASES,
    ("PhaseOut", "by"): ("calendar", "organiser"),
    ("PhaseIn", "phase"): PHASES,
}
"""(schema, field) → the values the field holds."""
ERRORS = {
    401: "No token where one is needed, a malformed Authorization header, or a token this "
         "host does not know",
    403: "Not allowed: the organiser's, or closed in the competition's phase",
    404: "No such thing at this address",
    429: "Too many requests (the visitors' budget; Retry-After says when to try again), or "
         "a submission over its limits",
    503: "The database cannot answer just now (Retry-After)",
}
"""The errors documented for an operation that can give them, and what they mean."""

Auth = str | None
"""How an operation reads the token: ``"admin"``, ``"user"``, ``"optional"`` or None."""
_AUTH: dict[Callable[..., Any], str] = {deps.admin: "admin",
                                        deps.current_participant: "user",
                                        deps.optional_participant: "optional"}


def _calls(d: Dependant) -> Iterator[Callable[..., Any]]:
    for sub in d.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from _calls(sub)


def auth_of(route: Any) -> Auth:
    """How ``route`` reads the caller's token (the strictest of its dependencies)."""
    found = {_AUTH[c] for c in _calls(route.dependant) if c in _AUTH}
    return next((a for a in ("admin", "user", "optional") if a in found), None)


def api_routes(app: FastAPI) -> Iterator[Any]:
    """Every API route of ``app`` (an :class:`APIRoute`, or what stands for one with the
    prefixes of the routers it was included through: newer FastAPI keeps included routers
    whole in ``app.routes``)."""
    contexts = getattr(fastapi.routing, "iter_route_contexts", None)
    if contexts is None:
        yield from (r for r in app.routes if isinstance(r, APIRoute))
        return
    yield from (c for c in contexts(app.routes) if isinstance(c.original_route, APIRoute))


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/Message"}}}}


def _enum(prop: dict[str, Any], values: tuple[str, ...]) -> None:
    """Set ``values`` as the enum of a string property (or of its non-null branch)."""
    for branch in prop.get("anyOf", [prop]):
        if branch.get("type") == "string":
            branch["enum"] = list(values)


def host_openapi(app: FastAPI) -> dict[str, Any]:
    """The app's schema (OpenAPI 3.1) with everything the module's docstring lists."""
    schema = get_openapi(title=app.title, version=app.version, description=app.description,
                         routes=app.routes)
    components = schema.setdefault("components", {})
    models = components.setdefault("schemas", {})
    models.setdefault("Message", Message.model_json_schema())
    components.setdefault("securitySchemes", {})[BEARER] = {
        "type": "http", "scheme": "bearer",
        "description": "The API token from registration (POST /api/register; the "
                       "organiser's is the competition folder's admin.token)."}
    for (model, field), values in ENUMS.items():
        prop = models.get(model, {}).get("properties", {}).get(field)
        if prop is not None:
            _enum(prop, values)
    for route in api_routes(app):
        if not route.include_in_schema:
            continue
        for method in route.methods:
            op = schema["paths"][route.path_format].get(method.lower())
            if op is not None:
                _complete(op, route)
    return schema


def _complete(op: dict[str, Any], route: Any) -> None:
    """One operation: its success bodies, its errors and its token requirement."""
    auth = auth_of(route)
    if auth is None:
        op.pop("security", None)
    else:
        op["security"] = [{BEARER: []}] if auth != "optional" else [{}, {BEARER: []}]
    responses = op.setdefault("responses", {})
    body = next((r["content"] for code, r in responses.items()
                 if code.startswith("2") and r.get("content")), None)
    for code, r in responses.items():
        if code.startswith("2") and not r.get("content") and body is not None \
                and code != "204":
            r["content"] = copy.deepcopy(body)  # e.g. a repeated submission's 200
        elif code[0] in "45" and not r.get("content"):
            r.update(_error(r.get("description") or ERRORS.get(int(code), "An error")))
    wanted = [429, 503]
    if auth is not None:
        wanted.append(401)
    if auth == "admin":
        wanted.append(403)
    if route.dependant.path_params:
        wanted.append(404)
    for code in wanted:
        responses.setdefault(str(code), _error(ERRORS[code]))


def install(app: FastAPI) -> None:
    """Serve :func:`host_openapi` as ``app``'s schema (worked out once, when first
    asked)."""
    made: list[dict[str, Any]] = []

    def openapi() -> dict[str, Any]:
        if not made:
            made.append(host_openapi(app))
        return made[0]

    app.openapi = openapi  # type: ignore[method-assign]


__all__ = ["BEARER", "ENUMS", "ERRORS", "GAME_KINDS", "GAME_STATUSES", "VERSION_STATUSES",
           "api_routes", "auth_of", "host_openapi", "install"]
