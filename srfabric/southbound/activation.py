"""Socket activation, as systemd does it (``sd_listen_fds``): a supervisor holds the OpenFlow port and hands the
listening socket to ``srfabric serve`` as descriptor 3, with ``LISTEN_FDS`` and ``LISTEN_PID`` in its environment.
The port then never closes across a restart of the controller: a switch that reconnects meanwhile waits in the
socket's backlog instead of being refused and backing off (Open vSwitch waits whole seconds between attempts).

>>> inherited_listener({"LISTEN_PID": "1", "LISTEN_FDS": "1"}, pid=2) is None  # meant for another process
True
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, MutableMapping

from srfabric.errors import SrfabricError

FIRST_FD = 3  # SD_LISTEN_FDS_START


def inherited_listener(environ: Mapping[str, str] = os.environ, pid: int | None = None) -> socket.socket | None:
    """The listening socket handed over as descriptor 3; None when none was handed to this process. Call it before
    the process opens anything, so that descriptor 3 is still the one handed over."""
    if environ.get("LISTEN_PID") != str(os.getpid() if pid is None else pid):
        return None
    count = environ.get("LISTEN_FDS", "0")
    if not count.isdigit() or int(count) < 1:
        raise SrfabricError("LISTEN_FDS", f"must be a count of descriptors >= 1, got {count!r}")
    try:
        listener = socket.socket(fileno=FIRST_FD)
    except OSError as error:
        raise SrfabricError("LISTEN_FDS", f"descriptor {FIRST_FD} is not a socket: {error}") from None
    if listener.type != socket.SOCK_STREAM or listener.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) != 1:
        raise SrfabricError("LISTEN_FDS", f"descriptor {FIRST_FD} is not a listening stream socket")
    listener.setblocking(False)
    listener.set_inheritable(False)  # not handed on to what this process starts
    if isinstance(environ, MutableMapping):  # nor are the variables that named it
        for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
            environ.pop(name, None)
    return listener
