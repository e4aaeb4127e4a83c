"""``ResourceApp`` in process over a stub service: the resources and the other declared routes, one router."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest

from srfabric.api.errors import ApiError
from srfabric.api.web.app import create_app
from srfabric.api.web.routes import RESOURCES

PAIR = {"ingress": "0c7a8a0e-4bc1-4b1f-9b0e-0d0f3c2a1b11", "egress": "1c7a8a0e-4bc1-4b1f-9b0e-0d0f3c2a1b11"}


class StubService:
    """Records the calls a request turns into; ``fail`` makes the next call raise it."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail: Exception | None = None
        self.leader: str | None = None  # a follower's leader ('' while none is elected); None: this one leads

    def _record(self, *call: Any) -> None:
        self.calls.append(call)
        if self.fail is not None:
            raise self.fail

    async def create(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        self._record("create", kind, body)
        return {"id": "new", **body}

    async def update(self, kind: str, ident: str, body: dict[str, Any]) -> dict[str, Any]:
        self._record("update", kind, ident, body)
        return {"id": ident, **body}

    async def delete(self, kind: str, ident: str) -> None:
        self._record("delete", kind, ident)

    def show(self, kind: str, ident: str, fields: list[str]) -> dict[str, Any]:
        self._record("show", kind, ident, fields)
        return {"id": ident}

    def find_all(self, kind: str, filters: dict[str, list[str]], fields: list[str]) -> list[dict[str, Any]]:
        self._record("find_all", kind, filters, fields)
        return [{"id": "a"}]

    def fabric_view(self) -> dict[str, Any]:
        return {"switches": []}

    def leader_elsewhere(self) -> str | None:
        return self.leader


def request(service: StubService, method: str, url: str, token: str | None = "tok", **kwargs: Any) -> httpx.Response:
    app = create_app(service, "tok")  # type: ignore[arg-type]
    headers = {"X-Auth-Token": token} if token is not None else {}
    headers.update(kwargs.pop("headers", {}))

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            return await client.request(method, url, headers=headers, **kwargs)

    return asyncio.run(go())


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    found = response.json()["NeutronError"]
    return response.status_code, found["type"], found["message"]


def test_every_documented_operation_is_served_by_the_resource_app() -> None:
    app = create_app(StubService(), "tok")  # type: ignore[arg-type]
    document = app.openapi()
    operations = [(path, method.upper()) for path, item in document["paths"].items() for method in item
                  if path not in ("/v2.0/srfabric/fabric", "/v2.0/srfabric/schedule",
                                  "/v2.0/srfabric/schedule/reoptimise", "/", "/v2.0/", "/v2.0/extensions",
                                  "/v2.0/extensions/{alias}", "/v2.0/srfabric/chains",
                                  "/v2.0/srfabric/switches/{dpid}", "/v2.0/srfabric/events", "/metrics",
                                  "/v2.0/srfabric/frer", "/v2.0/srfabric/frer/reports", "/v2.0/srfabric/psfp",
                                  "/v2.0/srfabric/psfp/{bridge}", "/v2.0/srfabric/psfp/reports",
                                  "/v2.0/srfabric/bridges", "/v2.0/srfabric/bridges/{name}")]
    assert len(operations) == 5 * len(RESOURCES)
    for path, _method in operations:
        found = app.route(path.replace("{ident}", "some-id"))
        assert found is not None, path
        assert found[1] == ("some-id" if "{ident}" in path else None)


@pytest.mark.parametrize(("method", "url", "call", "status"), [
    ("POST", "/v2.0/sfc/port_pairs", ("create", "port_pairs", {**PAIR, "name": "p"}), 201),
    ("POST", "/v2.0/sfc/port_pairs/", ("create", "port_pairs", {**PAIR, "name": "p"}), 201),
    ("PUT", "/v2.0/sfc/port_pairs/x", ("update", "port_pairs", "x", {"name": "p"}), 200),
    ("GET", "/v2.0/sfc/port_pairs/x?fields=id&fields=name", ("show", "port_pairs", "x", ["id", "name"]), 200),
    ("GET", "/v2.0/ports?name=a&name=b&fields=id&limit=5", ("find_all", "ports", {"name": ["a", "b"]}, ["id"]), 200),
])
def test_requests_become_service_calls(method: str, url: str, call: tuple[Any, ...], status: int) -> None:
    service = StubService()
    body = {"port_pair": {"name": "p", **(PAIR if method == "POST" else {})}} if method in ("POST", "PUT") else None
    response = request(service, method, url, json=body)
    assert response.status_code == status
    assert service.calls == [call]
    assert response.headers["content-type"] == "application/json"


def test_a_delete_answers_204_without_a_body() -> None:
    service = StubService()
    response = request(service, "DELETE", "/v2.0/sfc/port_chains/c")
    assert (response.status_code, response.content, service.calls) == (204, b"", [("delete", "port_chains", "c")])


@pytest.mark.parametrize(("method", "url", "kwargs", "expected"), [
    ("POST", "/v2.0/sfc/port_pairs", {"content": b""},
     (400, "HTTPBadRequest", "Unable to find 'body' in request body")),
    ("POST", "/v2.0/sfc/port_pairs", {"content": b"{", "headers": {"Content-Type": "application/json"}},
     (400, "HTTPBadRequest", "Body contains invalid data")),
    ("POST", "/v2.0/sfc/port_pairs", {"content": b"{}", "headers": {"Content-Type": "text/plain"}},
     (400, "HTTPBadRequest", "Invalid input for body. Reason: Input should be a valid dictionary or object to "
                             "extract fields from.")),
    ("POST", "/v2.0/sfc/port_pairs", {"json": {"port_pair": {"ingress": PAIR["ingress"]}}},
     (400, "HTTPBadRequest", "Failed to parse request. Required attribute 'egress' not specified")),
    ("PUT", "/v2.0/sfc/port_pairs/x", {"json": {"port_pair": {"ingress": PAIR["ingress"]}}},
     (400, "HTTPBadRequest", "Cannot update read-only attribute ingress")),
    ("POST", "/v2.0/sfc/port_chains", {"json": {"port_chain": {"port_pair_groups": "x"}}},
     (400, "HTTPBadRequest", "Invalid input for port_pair_groups. Reason: Input should be a valid list.")),
    ("DELETE", "/v2.0/sfc/port_pairs", {}, (405, "HTTPMethodNotAllowed", "Method Not Allowed")),
    ("PATCH", "/v2.0/sfc/port_pairs/x", {}, (405, "HTTPMethodNotAllowed", "Method Not Allowed")),
    ("GET", "/v2.0/sfc/nothing", {}, (404, "HTTPNotFound", "Not Found")),
])
def test_bad_requests_get_neutron_errors_and_reach_no_service(method: str, url: str, kwargs: dict[str, Any],
                                                             expected: tuple[int, str, str]) -> None:
    service = StubService()
    assert error_of(request(service, method, url, **kwargs)) == expected
    assert service.calls == []


@pytest.mark.parametrize("url", ["/v2.0/sfc/port_pairs", "/v2.0/srfabric/fabric"])
@pytest.mark.parametrize("token", [None, "wrong"])
def test_a_missing_or_wrong_token_is_refused(token: str | None, url: str) -> None:
    service = StubService()
    response = request(service, "GET", url, token=token)
    assert error_of(response) == (401, "HTTPUnauthorized", "X-Auth-Token: a valid token is required.")
    assert service.calls == []


def test_service_errors_keep_their_status_and_surprises_are_a_logged_500(caplog: pytest.LogCaptureFixture) -> None:
    service = StubService()
    service.fail = ApiError(409, "PortPairInUse", "Port Pair x is in use.")
    assert error_of(request(service, "DELETE", "/v2.0/sfc/port_pairs/x")) == (409, "PortPairInUse",
                                                                             "Port Pair x is in use.")
    service.fail = RuntimeError("boom")
    with caplog.at_level(logging.ERROR):
        status, kind, _ = error_of(request(service, "DELETE", "/v2.0/sfc/port_pairs/x"))
    assert (status, kind) == (500, "HTTPInternalServerError")
    assert "boom" in caplog.text


def test_a_database_gone_under_a_request_is_a_503_and_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    """A restarted PostgreSQL ends the connection a write was using: the client is told to retry, and the log
    says so in one line, with no traceback."""
    from sqlalchemy.exc import OperationalError

    service = StubService()
    service.fail = OperationalError("SELECT generation FROM leader", {},
                                    Exception("terminating connection due to administrator command"))
    with caplog.at_level(logging.WARNING):
        status, kind, message = error_of(request(service, "DELETE", "/v2.0/sfc/port_pairs/x"))
    assert (status, kind) == (503, "DatabaseUnavailable")
    assert "terminating connection due to administrator command" in message and "retry" in message
    assert "Traceback" not in caplog.text and len(caplog.records) == 1


def test_the_other_routes_and_the_openapi_document_are_served_too() -> None:
    assert request(StubService(), "GET", "/openapi.json", token=None).json()["info"]["title"] == "srfabric"
    assert request(StubService(), "GET", "/v2.0/srfabric/fabric").json() == {"fabric": {"switches": []}}


@pytest.mark.parametrize("raw", [b'{"port_pair": {"name": NaN}}', b'{"port_pair": {"name": -Infinity}}',
                                 b"[" * 100_000, b'{"port_pair": {"name": "\xff"}}'])
def test_bodies_no_json_reader_could_take_back_are_refused(raw: bytes) -> None:
    service = StubService()
    response = request(service, "POST", "/v2.0/sfc/port_pairs", content=raw,
                       headers={"Content-Type": "application/json"})
    assert error_of(response) == (400, "HTTPBadRequest", "Body contains invalid data")
    assert service.calls == []


def test_a_body_over_the_limit_is_refused_with_413() -> None:
    service = StubService()
    raw = b'{"port_pair": {"description": "' + b"x" * (1 << 20) + b'"}}'
    response = request(service, "POST", "/v2.0/sfc/port_pairs", content=raw,
                       headers={"Content-Type": "application/json"})
    assert error_of(response)[:2] == (413, "HTTPRequestEntityTooLarge")
    assert "1048576 bytes" in error_of(response)[2]
    assert service.calls == []


def test_a_repeated_header_counts_once_its_first_time() -> None:
    app = create_app(StubService(), "tok")  # type: ignore[arg-type]
    statuses = []
    for tokens in ([b"tok", b"bad"], [b"bad", b"tok"]):
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any], into: list[dict[str, Any]] = sent) -> None:
            into.append(message)

        scope = {"type": "http", "method": "GET", "path": "/v2.0/sfc/port_pairs", "query_string": b"",
                 "headers": [(b"x-auth-token", token) for token in tokens]}
        asyncio.run(app(scope, receive, send))
        statuses.append(sent[0]["status"])
    assert statuses == [200, 401]


def test_a_client_gone_before_its_body_was_complete_changes_nothing() -> None:
    service = StubService()
    app = create_app(service, "tok")  # type: ignore[arg-type]
    messages = [{"type": "http.request", "body": b'{"port_pair": {"ingress": "', "more_body": True},
                {"type": "http.disconnect"}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v2.0/sfc/port_pairs", "query_string": b"",
             "headers": [(b"x-auth-token", b"tok"), (b"content-type", b"application/json")]}
    asyncio.run(app(scope, receive, send))
    assert (service.calls, sent) == ([], [])


def test_trailing_slashes_are_ignored() -> None:
    service = StubService()
    assert request(service, "GET", "/v2.0/sfc/port_pairs/x//").status_code == 200
    assert request(service, "GET", "/v2.0/sfc/port_pairs//").status_code == 200
    assert service.calls == [("show", "port_pairs", "x", []), ("find_all", "port_pairs", {}, [])]


@pytest.mark.parametrize(("body", "field"), [({"schedule": {"duty_percent": 100}}, "duty_percent"),
                                             ({"schedule": {"duty_percent": "x"}}, "duty_percent"),
                                             ({"schedule": {"duty": 50}}, "duty"), ({}, "schedule")])
def test_a_bad_re_schedule_gets_400_naming_the_field(body: dict[str, Any], field: str) -> None:
    service = StubService()
    status, kind, message = error_of(request(service, "PUT", "/v2.0/srfabric/schedule", json=body))
    assert (status, kind) == (400, "HTTPBadRequest") and field in message
    assert service.calls == []


def test_discovery_documents_answer_as_neutron_does() -> None:
    service = StubService()
    versions = request(service, "GET", "/", token=None)  # Neutron serves its versions without a token
    assert versions.status_code == 200
    assert versions.json() == {"versions": [{"id": "v2.0", "status": "CURRENT",
                                             "links": [{"href": "http://api/v2.0/", "rel": "self"}]}]}
    index = request(service, "GET", "/v2.0/")
    assert index.json()["resources"] == [{"name": "port", "collection": "ports",
                                          "links": [{"href": "http://api/v2.0/ports", "rel": "self"}]}]
    listed = request(service, "GET", "/v2.0/extensions").json()["extensions"]
    assert {e["alias"] for e in listed} >= {"sfc", "flow_classifier", "sfc_graphs", "srfabric"}
    assert all(set(e) == {"alias", "name", "description", "updated", "links"} for e in listed)
    assert request(service, "GET", "/v2.0/extensions/sfc").json()["extension"]["name"] == "Service Function Chaining"
    assert error_of(request(service, "GET", "/v2.0/extensions/qos")) == (
        404, "ExtensionNotFound", "Extension with alias qos does not exist")
    for path in ("/v2.0/", "/v2.0/extensions", "/v2.0/extensions/sfc"):  # these need the token, as in Neutron
        assert request(service, "GET", path, token=None).status_code == 401
    assert service.calls == []


@pytest.mark.parametrize(("method", "url"), [("POST", "/v2.0/sfc/port_pairs"), ("DELETE", "/v2.0/sfc/port_pairs/x"),
                                             ("PUT", "/v2.0/srfabric/schedule?x=1")])
def test_a_follower_sends_writes_to_its_leader_and_serves_reads(method: str, url: str) -> None:
    service = StubService()
    service.leader = "http://10.0.0.1:9696"
    response = request(service, method, url, json={"port_pair": PAIR})
    assert response.status_code == 307 and response.headers["location"] == f"http://10.0.0.1:9696{url}"
    assert response.json()["NeutronError"]["type"] == "NotLeader"
    assert response.json()["NeutronError"]["detail"] == "http://10.0.0.1:9696"
    assert request(service, method, url, token="wrong").status_code == 401  # the token first, as for any write
    assert service.calls == []
    service.leader = ""  # an election under way
    assert error_of(request(service, method, url, json={"port_pair": PAIR}))[:2] == (503, "NoLeader")
    assert request(service, "GET", "/v2.0/sfc/port_pairs").json() == {"port_pairs": [{"id": "a"}]}


def test_the_web_view_takes_the_token_once_then_reads_with_the_cookie() -> None:
    service = StubService()
    app = create_app(service, "tok")  # type: ignore[arg-type]

    async def go() -> None:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            assert "Token" in (await client.get("/ui/")).text  # the login form
            assert (await client.get("/ui/?token=wrong")).status_code == 401
            posted = await client.post("/ui/", content=b"token=tok",
                                       headers={"Content-Type": "application/x-www-form-urlencoded"})
            assert posted.status_code == 303 and "srfabric_token=tok" in posted.headers["set-cookie"]
            client.cookies.clear()
            given = await client.get("/ui/?token=tok")
            assert given.status_code == 303 and given.headers["location"] == "/ui/"
            assert "httponly" in given.headers["set-cookie"].lower()
            page = await client.get("/ui/")
            assert '<svg id="topology"' in page.text and 'src="/ui/app.js"' in page.text
            assert (await client.get("/ui/app.js")).headers["content-type"].startswith("text/javascript")
            assert (await client.get("/ui/secret.py")).status_code == 404
            assert (await client.get("/v2.0/srfabric/fabric")).json() == {"fabric": {"switches": []}}
            # A write needs the header: a page elsewhere cannot make the browser change anything.
            refused = await client.post("/v2.0/sfc/port_pairs", json={"port_pair": PAIR})
            assert refused.status_code == 401 and service.calls == []

    asyncio.run(go())


def test_a_chosen_id_must_be_a_uuid() -> None:
    service = StubService()
    response = request(service, "POST", "/v2.0/ports", json={"port": {"id": "not-a-uuid", "name": "p"}})
    assert response.status_code == 400 and "id" in error_of(response)[2] and service.calls == []
    good = "0c7a8a0e-4bc1-4b1f-9b0e-0d0f3c2a1b11"
    assert request(service, "POST", "/v2.0/ports", json={"port": {"id": good}}).status_code == 201
    assert service.calls[-1][2]["id"] == good
