"""Keystone's API (``keystone.wsgi.api``) served on loopback by a threaded WSGI server from the standard library:
``python -m networking_srfabric.keystone_wsgi PORT``. Its configuration comes from ``OS_KEYSTONE_CONFIG_DIR`` and
``OS_KEYSTONE_CONFIG_FILES``; the process's arguments are hidden from it, as from Neutron's."""

import sys

PORT = int(sys.argv[1]) if __name__ == "__main__" and len(sys.argv) > 1 else 5000
sys.argv = sys.argv[:1]

from keystone.wsgi.api import application  # noqa: E402

__all__ = ["application"]

if __name__ == "__main__":
    import socketserver
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the name wsgiref calls
            pass  # Keystone logs each request itself

    class ThreadedServer(socketserver.ThreadingMixIn, WSGIServer):
        daemon_threads = True

    make_server("127.0.0.1", PORT, application, ThreadedServer, QuietHandler).serve_forever()
