"""One kept-alive HTTP/1.1 client connection, doing only what the API client needs.

``http.client`` builds a request header by header and parses every response's headers
with the ``email`` package. Here a request is one ``sendall`` and a response is a status
line, a few header lines and a body read by ``Content-Length`` or in chunks: less of the
client's CPU per request, which ``bench deploy`` counts in a chain's deployment time.

Example
-------
>>> request_bytes("DELETE", "/v2.0/sfc/port_pairs/1", "127.0.0.1:9696", {"X-Auth-Token": "t"}, None)
b'DELETE /v2.0/sfc/port_pairs/1 HTTP/1.1\\r\\nHost: 127.0.0.1:9696\\r\\nX-Auth-Token: t\\r\\n\\r\\n'
>>> request_bytes("POST", "/v2.0/sfc/port_pairs", "h:1", {}, b"{}").split(b"\\r\\n")[-3:]
[b'Content-Length: 2', b'', b'{}']
"""

from __future__ import annotations

import select
import socket
import ssl
from dataclasses import dataclass
from typing import BinaryIO

MAX_LINE = 65536  # longest status or header line accepted
MAX_HEADERS = 100
NO_BODY = (204, 304)
HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")
UNSAFE_IN_TARGET = frozenset(" \t\r\n\x00")  # a target with these would split the request line
UNSAFE_IN_HEADER = frozenset("\r\n\x00")  # a header with these would smuggle in headers of its own


class ProtocolError(OSError):
    """The server's answer was not HTTP/1.1 as this client reads it (the message says what was wrong)."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes


def request_bytes(method: str, target: str, host: str, headers: dict[str, str], body: bytes | None) -> bytes:
    """A whole request in one buffer: one write, so Nagle's algorithm never holds its tail back.

    ``ValueError`` for a target or header that would change the request's framing.
    """
    if UNSAFE_IN_TARGET.intersection(target):
        raise ValueError(f"request target {target!r}: no spaces or control characters (percent-encode them)")
    for name, value in headers.items():
        if UNSAFE_IN_HEADER.intersection(name + value) or ":" in name:
            raise ValueError(f"header {name!r}: no line breaks or NUL characters (and no ':' in the name)")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", *(f"{k}: {v}" for k, v in headers.items())]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


class Connection:
    """A connection to ``host``:``port`` opened on first use and kept until the server or ``close`` ends it."""

    def __init__(self, host: str, port: int, timeout: float, tls: ssl.SSLContext | None = None) -> None:
        self.host, self.port, self.timeout, self.tls = host, port, timeout, tls
        self.authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # IPv6 in brackets
        self.sock: socket.socket | None = None
        self._reader: BinaryIO | None = None

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        if self.sock is not None:
            self.sock.close()
        self.sock, self._reader = None, None

    def closed_by_peer(self) -> bool:
        """An idle kept connection has nothing to read unless the server closed it (uvicorn does after 5 s); over
        TLS a record may wait to be read too, so a TLS connection counts as closed then (one reconnect more)."""
        return self.sock is not None and bool(select.select([self.sock], [], [], 0)[0])

    def _open(self) -> tuple[socket.socket, BinaryIO]:
        if self.sock is None or self._reader is None:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls is not None:  # HTTPS: the server's certificate checked against the CA (and its name)
                self.sock = self.tls.wrap_socket(self.sock, server_hostname=self.host)
            self._reader = self.sock.makefile("rb")
        return self.sock, self._reader

    def request(self, method: str, target: str, headers: dict[str, str], body: bytes | None = None) -> Response:
        """Send one request and read its whole response; on any error the connection is closed (except a
        ``ValueError`` for the request itself, raised before anything is sent)."""
        data = request_bytes(method, target, self.authority, headers, body)
        try:
            sock, reader = self._open()
            sock.sendall(data)
            response, keep = read_response(reader, method)
        except BaseException:
            self.close()
            raise
        if not keep:
            self.close()
        return response


def _line(reader: BinaryIO) -> bytes:
    line = reader.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a response line is longer than {MAX_LINE} bytes")
    if not line:
        raise ProtocolError("the server closed the connection before the response was complete")
    return line


def _exactly(reader: BinaryIO, size: int) -> bytes:
    data = reader.read(size)
    if len(data) < size:
        raise ProtocolError(f"the server closed the connection after {len(data)} of {size} body bytes")
    return data


def _chunked(reader: BinaryIO) -> bytes:
    parts: list[bytes] = []
    while True:
        size_field = _line(reader).split(b";", 1)[0].strip()
        if not size_field or not HEX_DIGITS.issuperset(size_field):
            raise ProtocolError(f"chunk size {size_field[:20]!r} is not hexadecimal")
        size = int(size_field, 16)
        if size == 0:
            while _line(reader) not in (b"\r\n", b"\n"):  # trailer fields, ignored
                pass
            return b"".join(parts)
        parts.append(_exactly(reader, size))
        if _line(reader) not in (b"\r\n", b"\n"):
            raise ProtocolError(f"chunk of {size} bytes is not followed by a line end")


def read_response(reader: BinaryIO, method: str) -> tuple[Response, bool]:
    """Read one response; also whether the connection can carry another request."""
    while True:
        status_line = _line(reader)
        version, _, rest = status_line.partition(b" ")
        code = rest[:3]
        if not version.startswith(b"HTTP/1.") or not code.isdigit() or rest[3:4] not in (b" ", b"\r", b"\n", b""):
            raise ProtocolError(f"{status_line[:40]!r} is not an HTTP/1.x status line")
        status = int(code)
        fields: dict[bytes, bytes] = {}
        for _ in range(MAX_HEADERS + 1):
            line = _line(reader)
            if line in (b"\r\n", b"\n"):
                break
            if line[:1] in (b" ", b"\t"):
                raise ProtocolError("a folded header line (obsolete in HTTP/1.1) is not accepted")
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip()
        else:
            raise ProtocolError(f"the response has more than {MAX_HEADERS} header fields")
        if status >= 200 or status == 101:
            break  # 1xx interim responses (100 Continue) come before the real one
    connection = fields.get(b"connection", b"").lower()
    keep = connection != b"close" if version == b"HTTP/1.1" else connection == b"keep-alive"
    if method == "HEAD" or status in NO_BODY or status < 200:
        return Response(status, b""), keep
    if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
        return Response(status, _chunked(reader)), keep
    length = fields.get(b"content-length")
    if length is not None:
        if not length.isdigit():
            raise ProtocolError(f"Content-Length {length[:20]!r} is not a number")
        return Response(status, _exactly(reader, int(length))), keep
    return Response(status, reader.read()), False  # the body ends when the server closes the connection
