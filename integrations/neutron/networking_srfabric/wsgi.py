"""Neutron's API as a WSGI application: Neutron 29 has no ``neutron-server``, and its ``neutron.wsgi.api`` parses
the process's arguments as its own (a server's would be refused), so they are hidden from it. The configuration
files come from ``OS_NEUTRON_CONFIG_DIR`` and ``OS_NEUTRON_CONFIG_FILES``.

``python -m networking_srfabric.wsgi PORT`` serves it on loopback with eventlet's WSGI server: Neutron runs on
eventlet, and a server that always yields lets the drivers' green threads (the journal's worker) run between
requests, which a server blocked in ``accept`` would not."""

import sys

PORT = int(sys.argv[1]) if __name__ == "__main__" and len(sys.argv) > 1 else 9696
sys.argv = sys.argv[:1]

from neutron.wsgi.api import application  # noqa: E402

__all__ = ["application"]

if __name__ == "__main__":
    import eventlet
    import eventlet.wsgi

    eventlet.wsgi.server(eventlet.listen(("127.0.0.1", PORT)), application, log_output=False)
