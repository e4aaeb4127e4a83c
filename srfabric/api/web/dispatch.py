"""The API's ASGI application: every request is routed here. A resource (``resources.kinds``) is found with two
dictionary lookups and handled in this module; any other route (``web.router``: metrics, discovery, the fabric
view, the schedule, FRER, the web view, the OpenAPI document) likewise, and its handler called once its token
is checked. A chain deployment makes 22 requests, so the router stays two lookups deep.

Errors are in Neutron's shape (``errors.validation_message`` words a body that does not fit its schema).
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from srfabric.api import projects
from srfabric.api.errors import (
    ApiError,
    bad_request,
    database_unavailable,
    internal_error,
    not_leader,
    validation_message,
)
from srfabric.api.projects import TokenBook
from srfabric.api.resources.kinds import ResourceKind
from srfabric.api.service import LIST_PARAMETERS, SfcService
from srfabric.api.streams import qcc_streams
from srfabric.api.web.router import Route, Routes, json_bytes

COOKIE = "srfabric_token"  # the web view's: a read may carry the token in it (``ui``)

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

COLLECTION_METHODS = ("GET", "POST")
MEMBER_METHODS = ("GET", "PUT", "DELETE")
WRITES = ("POST", "PUT", "PATCH", "DELETE")
NOT_A_DICT = "Invalid input for body. Reason: Input should be a valid dictionary or object to extract fields from."
MAX_BODY_BYTES = 1 << 20  # Neutron's own limit is 112 KiB (oslo.middleware's max_request_body_size)
BULK = ("streams",)  # collections created in bulk: a stream batch is admitted together
MAX_BULK = 1000


class ClientGone(Exception):
    """The client disconnected before its request body was complete: nothing is done and nothing answered."""


def method_not_allowed() -> ApiError:
    return ApiError(405, "HTTPMethodNotAllowed", "Method Not Allowed")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")  # NaN or Infinity: no database or client could read it back


def _is_json(content_type: bytes | None) -> bool:
    """``application/json`` or ``application/<anything>+json``, parameters ignored (FastAPI's rule)."""
    if content_type is None:
        return False
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/") and media.endswith(b"+json"))


def read_json(raw: bytes, content_type: bytes | None) -> Any:
    """A request body as JSON; ``ApiError`` (400) when it is missing, not JSON or not sent as JSON."""
    if not raw:
        raise bad_request("Unable to find 'body' in request body")
    if not _is_json(content_type):
        raise bad_request(NOT_A_DICT)
    try:
        # json.loads, as FastAPI does, rather than pydantic's JSON mode: the same messages ("a valid list"),
        # and text with a lone surrogate reaches the field's own check.
        return json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # not JSON (or not UTF-8), NaN, or nested too deep to parse
        raise bad_request("Body contains invalid data") from None


def validated(model: type[BaseModel], data: Any, method: str, where: str = "") -> Any:
    """``data`` as ``model``; ``ApiError`` (400) naming the field (after ``where``, which says which item of a
    bulk request it is), in the words FastAPI's handlers gave."""
    try:
        return model.model_validate(data, from_attributes=True)
    except ValidationError as error:
        first = error.errors()[0]
        raise bad_request(where + validation_message(dict(first), method)) from None


def validate_body(resource: ResourceKind, method: str, data: Any, where: str = "") -> dict[str, Any]:
    """The wrapped body's inner object as the fields the client set (see ``validated``)."""
    model = resource.create_body if method == "POST" else resource.update_body
    body: dict[str, Any] = getattr(validated(model, data, method, where), resource.member).model_dump(
        exclude_unset=True)
    return body


async def request_body(request: Request, model: type[BaseModel]) -> Any:
    """A declared route's JSON body, read and checked as a resource's is."""
    return validated(model, read_json(await request.body(), request.headers.get("content-type", "").encode() or None),
                     request.method)


def bulk_items(resource: ResourceKind, data: Any) -> list[dict[str, Any]] | None:
    """The items of a bulk create (``{"streams": [{...}, ...]}``, Neutron's form), each checked like a single
    create's body; None when ``data`` is not a bulk request. Only streams are created in bulk."""
    if resource.collection not in BULK or not isinstance(data, dict) or resource.collection not in data:
        return None
    items = data[resource.collection]
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK:
        raise bad_request(f"{resource.collection}: a bulk create takes a list of 1 to {MAX_BULK} items.")
    if len(data) > 1:
        raise bad_request(f"Unrecognized attribute(s) '{next(k for k in data if k != resource.collection)}'")
    return [validate_body(resource, "POST", {resource.member: item}, f"{resource.collection}[{index}]: ")
            for index, item in enumerate(items)]


class ResourceApp:
    """An ASGI application serving ``resources`` (keyed by collection path) and ``routes``."""

    def __init__(self, service: SfcService, book: TokenBook, resources: dict[str, ResourceKind], routes: Routes,
                 document: Callable[[], dict[str, Any]]) -> None:
        self.service = service
        self.book = book  # whose each token is (only digests are kept)
        self.resources = resources
        self.routes = routes
        self.document = document

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document of every route served here."""
        return self.document()

    def route(self, path: str) -> tuple[ResourceKind, str | None] | None:
        """The resource and member id (None: the collection) a path names; None when it is not served here.

        Trailing slashes are ignored (FastAPI answered them with a redirect to the path without them).
        """
        path = path.rstrip("/")
        resource = self.resources.get(path)
        if resource is not None:
            return resource, None
        head, _, ident = path.rpartition("/")
        resource = self.resources.get(head)
        return (resource, ident) if resource is not None and ident else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self.route(scope["path"]) if scope["type"] == "http" else None
        leader = self.service.leader_elsewhere() if scope["type"] == "http" and scope["method"] in WRITES else None
        if found is None and leader is None:
            await self._other(scope, receive, send)
            return
        location: list[tuple[bytes, bytes]] = []
        try:
            await self.book.learn(_headers(scope).get(b"x-auth-token"))  # Keystone's word, when it is asked
            if leader is not None:  # a follower: every write (resources, schedule) goes to the leader
                self.book.who(_headers(scope).get(b"x-auth-token"))
                if leader:
                    path = scope.get("raw_path") or scope["path"].encode()
                    query = b"?" + scope["query_string"] if scope["query_string"] else b""
                    location = [(b"location", leader.rstrip("/").encode() + path + query)]
                raise not_leader(leader)
            assert found is not None
            status, content = await self._answer(scope, receive, *found)
            body = b"" if content is None else json_bytes(content)
        except ClientGone:
            return
        except ApiError as error:
            status, body = error.status, json_bytes(error.body())
        except Exception as error:  # noqa: BLE001 - the client gets Neutron's 500, the log gets the traceback
            failure = database_unavailable(error)  # or, when the database went away, a 503 and one line
            if failure is None:
                log.exception("request failed")
            else:
                log.warning("request failed: %s", failure.message)
            failure = failure or internal_error()
            status, body = failure.status, json_bytes(failure.body())
        if not body:
            await send({"type": "http.response.start", "status": status, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json"),
                                *location]})
        await send({"type": "http.response.body", "body": body})

    async def _other(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A route that is not a resource: found, its token checked, its handler's answer sent."""
        if scope["type"] != "http":
            return  # the server speaks HTTP only (lifespan is off)
        try:
            found = self.routes.find(scope["method"], scope["path"])
            if found is None:
                raise ApiError(404, "HTTPNotFound", "Not Found")
            if found == "method":
                raise method_not_allowed()
            route, param = found
            request = Request(scope, receive)
            await self._check_token(route, request)
            answer = await route.handler(request, param)
        except ApiError as error:
            answer = Response(json_bytes(error.body()), error.status, media_type="application/json")
        except Exception:  # noqa: BLE001 - the client gets Neutron's 500, the log gets the traceback
            log.exception("request failed")
            failure = internal_error()
            answer = Response(json_bytes(failure.body()), failure.status, media_type="application/json")
        if isinstance(answer, dict):
            answer = Response(json_bytes(answer), route.status, media_type="application/json")
        await answer(scope, receive, send)

    async def _check_token(self, route: Route, request: Request) -> None:
        """An admin's token (a read may send the web view's cookie instead), any valid token, or none."""
        if route.auth == "none":
            return
        given = request.headers.get("x-auth-token")
        client = request.client
        peer = f"{client.host}:{client.port}" if client else ""
        if given is None and request.method == "GET" and route.auth != "any":
            given = request.cookies.get(COOKIE)
        token = None if given is None else given.encode()
        await self.book.learn(token)  # Keystone's word, when the book asks Keystone (``api/keystone``)
        if route.auth == "any":
            self.book.who(token, peer)
            return
        self.book.admin(token, peer)

    async def _answer(self, scope: Scope, receive: Receive, resource: ResourceKind,
                      ident: str | None) -> tuple[int, Any]:
        """Status and JSON content (None: no body) of one request for ``resource``."""
        method, kind, member = scope["method"], resource.collection, resource.member
        if method not in (COLLECTION_METHODS if ident is None else MEMBER_METHODS):
            raise method_not_allowed()
        headers = _headers(scope)
        client = scope.get("client") or ("", 0)
        who = self.book.who(headers.get(b"x-auth-token"), f"{client[0]}:{client[1]}")  # before any body
        snapshot = None if who.admin else self.service.snapshot  # (an admin's requests need not look)
        if ident is not None and snapshot is not None:  # another project's resource is not found, as in Neutron
            projects.owned(who, {ident: self.service.show(kind, ident, [])}, kind, ident)  # (a follower reads anew)
        query = urllib.parse.parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        if method in WRITES and dry_run(query):  # what the change would answer (a driver's precommit check)
            body = {} if method == "DELETE" else projects.scoped(who, snapshot, kind, validate_body(
                resource, method, read_json(await _read_body(receive), headers.get(b"content-type"))), ident is None)
            return 200, {"dry_run": {member: await self.service.check(kind, method, ident, body)}}
        if method in ("POST", "PUT"):
            data = read_json(await _read_body(receive), headers.get(b"content-type"))
            if ident is None and kind == "streams" and qcc_streams.is_qcc(data):  # IEEE 802.1Qcc's form
                return 201, await qcc_streams.create(self.service, data["stream"], None if who.admin else who.project)
            bulk = bulk_items(resource, data) if ident is None else None
            if bulk is not None:  # admitted together; the refused ones are listed with their reasons
                created, refused = await self.service.create_streams(
                    [projects.scoped(who, snapshot, kind, item) for item in bulk])
                return 201, {kind: created, "refused": refused}
            body = projects.scoped(who, snapshot, kind, validate_body(resource, method, data), ident is None)
            if ident is None:
                return 201, {member: await self.service.create(kind, body)}
            return 200, {member: await self.service.update(kind, ident, body)}
        if method == "DELETE":
            await self.service.delete(kind, ident or "")
            return 204, None
        fields = [value for key, value in query if key == "fields"]
        if ident is not None:
            return 200, {member: self.service.show(kind, ident, fields)}
        filters: dict[str, list[str]] = {}
        for key, value in query:
            if key not in LIST_PARAMETERS:
                filters.setdefault(key, []).append(value)
        if not who.admin:  # a member's own project only (compared exactly: list filters ignore case)
            filters["project_id"] = [who.project]
            return 200, {kind: [r for r in self.service.find_all(kind, filters, [*fields, "project_id"] if fields
                                                                   else []) if projects.visible(who, r)]}
        return 200, {kind: self.service.find_all(kind, filters, fields)}


def dry_run(query: list[tuple[str, str]]) -> bool:
    """Whether a write asks only what it would be answered (``?dry_run=true``); ``ApiError`` (400) for a value
    that is neither true nor false."""
    values = [value.lower() for key, value in query if key == "dry_run"]
    if any(value not in ("true", "false", "1", "0") for value in values):
        raise bad_request("dry_run: must be true or false")
    return any(value in ("true", "1") for value in values)


def _headers(scope: Scope) -> dict[bytes, bytes]:
    """The request's headers by name; a repeated header: the first counts, as in Starlette."""
    return dict(reversed(scope["headers"]))


async def _read_body(receive: Receive) -> bytes:
    """The whole request body; ``ApiError`` (413) past ``MAX_BODY_BYTES``, ``ClientGone`` on a disconnect."""
    parts, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        part = message.get("body", b"")
        size += len(part)
        if size > MAX_BODY_BYTES:
            raise ApiError(413, "HTTPRequestEntityTooLarge", f"Request body: larger than {MAX_BODY_BYTES} bytes.")
        parts.append(part)
        if not message.get("more_body", False):
            return b"".join(parts)
