"""A Neutron API with networking-sfc and the srfabric drivers, for a demo and the tests: ``up`` writes its
configuration into a state folder, makes its database (SQLite tables from Neutron's models, or MariaDB
migrated by ``neutron-db-manage``), and starts the API (eventlet's WSGI server, ``wsgi``), printing its pid once
it answers;
``down`` stops it by that pid. Runs in the Neutron venv.

    python -m networking_srfabric.stack up --state DIR --port 9697 --srfabric-url URL --srfabric-token T
    python -m networking_srfabric.stack down --state DIR
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

NEUTRON_CONF = """[DEFAULT]
core_plugin = ml2
service_plugins = flow_classifier,sfc
auth_strategy = noauth
transport_url = fake://
api_paste_config = {paste}
state_path = {state}
debug = false
[database]
connection = {db}
[oslo_messaging_notifications]
driver = noop
[oslo_concurrency]
lock_path = {state}/lock
[oslo_policy]
enforce_new_defaults = False
enforce_scope = False
[sfc]
drivers = srfabric
[flowclassifier]
drivers = srfabric
[srfabric]
url = {url}
token = {token}
backoff_max = {backoff}
"""
ML2_CONF = """[ml2]
type_drivers = flat,vlan,vxlan
tenant_network_types = vxlan
mechanism_drivers = srfabric
extension_drivers = port_security
[ml2_type_vxlan]
vni_ranges = 1:1000
"""


def paste_file() -> Path:
    """The api-paste.ini Neutron ships in the venv's etc/."""
    found = Path(sys.prefix) / "etc" / "neutron" / "api-paste.ini"
    if not found.exists():
        raise SystemExit(f"api_paste_config: {found} is missing: is Neutron installed in this venv?")
    return found


def make_database(db: str) -> None:
    if db.startswith("sqlite"):
        import networking_sfc.db.flowclassifier_db  # noqa: F401  (their tables join Neutron's models)
        import networking_sfc.db.sfc_db  # noqa: F401
        import sqlalchemy
        from neutron.db.migration.models import head

        head.get_metadata().create_all(sqlalchemy.create_engine(db))
        return
    conf = os.environ["OS_NEUTRON_CONFIG_DIR"]
    subprocess.run([str(Path(sys.prefix) / "bin" / "neutron-db-manage"), "--config-file", f"{conf}/neutron.conf",
                    "upgrade", "heads"], check=True)


def up(args: argparse.Namespace) -> None:
    state = Path(args.state).resolve()
    (state / "lock").mkdir(parents=True, exist_ok=True)
    db = args.db or f"sqlite:///{state}/neutron.db"
    (state / "neutron.conf").write_text(NEUTRON_CONF.format(paste=paste_file(), state=state, db=db,
                                                            url=args.srfabric_url, token=args.srfabric_token,
                                                            backoff=args.backoff_max))
    (state / "ml2_conf.ini").write_text(ML2_CONF)
    os.environ["OS_NEUTRON_CONFIG_DIR"] = str(state)
    os.environ["OS_NEUTRON_CONFIG_FILES"] = "neutron.conf;ml2_conf.ini"
    make_database(db)
    log = open(state / "neutron-api.log", "ab")  # noqa: SIM115 - the server keeps writing it after we return
    server = subprocess.Popen([sys.executable, "-m", "networking_srfabric.wsgi", str(args.port)],
                              stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ), start_new_session=True)
    (state / "neutron-api.pid").write_text(str(server.pid))
    deadline = time.monotonic() + args.wait
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"neutron-api: exited with {server.returncode}; see {state / 'neutron-api.log'}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{args.port}/v2.0/networks", timeout=2) as answer:
                if answer.status == 200:
                    print(server.pid, flush=True)
                    return
        except OSError:
            time.sleep(0.3)
    os.killpg(server.pid, signal.SIGTERM)
    raise SystemExit(f"neutron-api: no answer within {args.wait} s; see {state / 'neutron-api.log'}")


def down(args: argparse.Namespace) -> None:
    pid_file = Path(args.state) / "neutron-api.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)  # the server and anything it started: the session it was started in
    pid_file.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(prog="networking_srfabric.stack")
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("up")
    start.add_argument("--state", required=True)
    start.add_argument("--port", type=int, default=9697)
    start.add_argument("--db", default="", help="a MariaDB URL (mysql+pymysql://...); default: SQLite in --state")
    start.add_argument("--srfabric-url", default="http://127.0.0.1:9696")
    start.add_argument("--srfabric-token", default="")
    start.add_argument("--backoff-max", type=float, default=60.0)
    start.add_argument("--wait", type=float, default=120.0)
    stop = commands.add_parser("down")
    stop.add_argument("--state", required=True)
    args = parser.parse_args()
    up(args) if args.command == "up" else down(args)


if __name__ == "__main__":
    main()
