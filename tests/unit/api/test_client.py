"""The API client on a local HTTP server that closes idle connections: no root, no network."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator

import pytest

from srfabric.cli.client import SfcClient


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn
    timeout = 0.2  # an idle connection is closed after 0.2 s (uvicorn: 5 s)

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        body = json.dumps({"port_pairs": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_connection_the_server_closed_while_idle_is_replaced(server: str) -> None:
    with SfcClient(server) as client:
        assert client.list("port_pairs") == []
        first = client.http.sock
        time.sleep(0.5)  # the server closes the idle connection meanwhile
        assert client.list("port_pairs") == []
        assert client.http.sock is not first


def test_a_connection_kept_open_is_used_again(server: str) -> None:
    with SfcClient(server) as client:
        client.list("port_pairs")
        first = client.http.sock
        client.list("port_pairs")
        assert client.http.sock is first
