"""Socket activation (``southbound.activation``): a listening socket handed over as descriptor 3 with
``LISTEN_FDS``/``LISTEN_PID`` is the one a process takes; a malformed hand-over is refused by name."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from srfabric.errors import SrfabricError
from srfabric.southbound.activation import inherited_listener

TAKE = "from srfabric.southbound.activation import inherited_listener as take; print(take().getsockname()[1])"


def test_the_socket_handed_over_as_descriptor_3_is_taken() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        fd = listener.fileno()
        done = subprocess.run(["/bin/sh", "-c", 'LISTEN_PID=$$ exec "$@"', "sh", sys.executable, "-c", TAKE],
                              env={**os.environ, "LISTEN_FDS": "1"}, pass_fds=(3,), preexec_fn=lambda: os.dup2(fd, 3),
                              capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == str(listener.getsockname()[1]), done.stderr


def test_a_malformed_hand_over_is_refused_by_name() -> None:
    assert inherited_listener({}) is None
    with pytest.raises(SrfabricError, match="LISTEN_FDS: must be a count"):
        inherited_listener({"LISTEN_PID": str(os.getpid()), "LISTEN_FDS": "many"})
