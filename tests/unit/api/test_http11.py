"""The API client's HTTP/1.1 connection against scripted servers: every way a response may be framed."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from srfabric.api.web.http11 import Connection, ProtocolError, request_bytes
from srfabric.cli.client import SfcClient
from srfabric.errors import SrfabricError

OK_JSON = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'
THEN_CLOSE = b"<close>"  # an answer ending in this is sent without it, then the connection is closed


class ScriptedServer:
    """Answers the n-th request read on any connection with ``answers[n]``; b"" closes without answering."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.answers:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                while self.answers:
                    request = self._read_request(conn)
                    if request is None:
                        break
                    self.requests.append(request)
                    answer = self.answers.pop(0)
                    conn.sendall(answer.removesuffix(THEN_CLOSE))
                    if not answer or answer.endswith(THEN_CLOSE):
                        break

    @staticmethod
    def _read_request(conn: socket.socket) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                while len(body) < int(line.split(b":")[1]):
                    body += conn.recv(65536)
        return data

    def close(self) -> None:
        self.listener.close()


Scripted = Callable[[list[bytes]], "ScriptedServer"]


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    made: list[ScriptedServer] = []

    def make(answers: list[bytes]) -> ScriptedServer:
        server = ScriptedServer(answers)
        made.append(server)
        return server

    yield make
    for server in made:
        server.close()


@pytest.mark.parametrize(("answer", "body"), [
    (OK_JSON, b"{}"),
    (b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
     b'3;x=1\r\n{"a\r\n4\r\n": 1\r\n1\r\n}\r\n0\r\nT: v\r\n\r\n', b'{"a": 1}'),
    (b"HTTP/1.1 100 Continue\r\n\r\n" + OK_JSON, b"{}"),
    (b"HTTP/1.1 204 No Content\r\n\r\n", b""),
])
def test_each_framing_gives_the_whole_body_and_keeps_the_connection(scripted: Scripted, answer: bytes,
                                                                    body: bytes) -> None:
    server = scripted([answer, OK_JSON])
    conn = Connection("127.0.0.1", server.port, 5.0)
    try:
        assert conn.request("POST", "/x", {"A": "b"}, b"[1]").body == body
        assert conn.request("GET", "/y", {}).body == b"{}"
        assert server.connections == 1
        assert server.requests[0].endswith(b"Content-Length: 3\r\n\r\n[1]")
    finally:
        conn.close()


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
    b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
])
def test_a_response_that_ends_the_connection_closes_it(scripted: Scripted, answer: bytes) -> None:
    server = scripted([answer])
    conn = Connection("127.0.0.1", server.port, 5.0)
    assert conn.request("GET", "/", {}).body == b"{}"
    assert conn.sock is None


def test_a_body_without_length_is_read_until_the_server_closes(scripted: Scripted) -> None:
    server = scripted([b"HTTP/1.1 200 OK\r\n\r\nall of it" + THEN_CLOSE])
    conn = Connection("127.0.0.1", server.port, 5.0)
    assert conn.request("GET", "/", {}).body == b"all of it"
    assert conn.sock is None


@pytest.mark.parametrize(("answer", "words"), [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}" + THEN_CLOSE, "after 2 of 10 body bytes"),
    (b"SMTP ready\r\n\r\n", "is not an HTTP/1.x status line"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", "is not a number"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "is not hexadecimal"),
    (b"HTTP/1.1 200 OK\r\n" + THEN_CLOSE, "closed the connection before the response was complete"),
])
def test_a_broken_response_is_a_clear_error_and_closes_the_connection(scripted: Scripted, answer: bytes,
                                                                     words: str) -> None:
    server = scripted([answer])
    conn = Connection("127.0.0.1", server.port, 5.0)
    with pytest.raises(ProtocolError, match=words):
        conn.request("GET", "/", {})
    assert conn.sock is None


def test_the_client_names_the_url_when_the_server_fails(scripted: Scripted) -> None:
    server = scripted([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}" + THEN_CLOSE])
    with SfcClient(f"http://127.0.0.1:{server.port}") as client, pytest.raises(SrfabricError) as caught:
        client.list("port_pairs")
    assert caught.value.field == "--url"
    assert "after 2 of 10 body bytes" in caught.value.message


def test_the_client_reports_the_servers_neutron_error(scripted: Scripted) -> None:
    body = b'{"NeutronError": {"type": "PortPairNotFound", "message": "Port Pair x could not be found.", "detail": ""}}'
    server = scripted([b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)])
    with SfcClient(f"http://127.0.0.1:{server.port}") as client, pytest.raises(SrfabricError) as caught:
        client.show("port_pairs", "x")
    assert caught.value.field == "PortPairNotFound"
    assert "could not be found. (HTTP 404)" in caught.value.message


@pytest.mark.parametrize(("target", "headers"), [
    ("/a b", {}), ("/a\r\nX: 1", {}), ("/a", {"X-Auth-Token": "t\r\nX-Evil: 1"}), ("/a", {"X:Y": "1"}),
])
def test_a_request_that_would_change_its_own_framing_is_refused(target: str, headers: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="no "):
        request_bytes("GET", target, "h:1", headers, None)


def test_an_ipv6_host_is_bracketed() -> None:
    assert Connection("::1", 9696, 1.0).authority == "[::1]:9696"


@pytest.mark.parametrize(("answer", "words"), [
    (b"HTTP/1.1 2000 OK\r\n\r\n", "is not an HTTP/1.x status line"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", "is not hexadecimal"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}xx\r\n0\r\n\r\n", "not followed by a line end"),
    (b"HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n", "folded header line"),
])
def test_lenient_framing_is_refused(scripted: Scripted, answer: bytes, words: str) -> None:
    server = scripted([answer])
    conn = Connection("127.0.0.1", server.port, 5.0)
    with pytest.raises(ProtocolError, match=words):
        conn.request("GET", "/", {})
    assert conn.sock is None


def test_the_client_refuses_a_token_that_is_not_one_header_line() -> None:
    with pytest.raises(SrfabricError) as caught:
        SfcClient("http://127.0.0.1:1", token="t\r\nX-Evil: 1")
    assert caught.value.field == "--token"


def test_the_client_percent_encodes_ids_in_paths(scripted: Scripted) -> None:
    server = scripted([b'HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n{"port_pair": {}}'])
    with SfcClient(f"http://127.0.0.1:{server.port}") as client:
        client.show("port_pairs", "a b/c")
    assert server.requests[0].startswith(b"GET /v2.0/sfc/port_pairs/a%20b%2Fc HTTP/1.1\r\n")
