"""A peer controller under ``bench capacity``: an os-ken application run by os-ken's own ``AppManager``, as
``osken-manager`` ran one (os-ken 4 ships no ``osken-manager``).

``python -m srfabric_tools.bench.peer_controller APP`` picks a free port on 127.0.0.1, prints ``{"port": N}``, and
serves the application there at log level WARNING (os-ken's default, INFO, logs every packet-in, which would
be measured too). APP is a module name or a file: ``bench capacity`` runs os-ken 1.4.0's ``simple_switch_13.py``,
unchanged, as the package index serves it (``make bootstrap`` puts it under ``build/peers``).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SIMPLE_SWITCH_13 = REPO / "build" / "peers" / "os-ken-1.4.0" / "os_ken" / "app" / "simple_switch_13.py"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def main(app: str) -> None:
    from os_ken import cfg, log
    from os_ken.base.app_manager import AppManager  # first: it brings in the controller's --ofp-* options

    port = free_port()  # os-ken takes port 0 for "unset" and would listen on 6653 and 6633 of every address
    cfg.CONF(args=["--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port", str(port),
                   "--default-log-level", "30"], project="os_ken")
    log.init_log()
    print(json.dumps({"port": port}), flush=True)
    AppManager.run_apps([app])


if __name__ == "__main__":
    main(sys.argv[1])
