"""The whole OpenStack side for a demo and the tests, in one state folder: a MariaDB of its own, Keystone on it,
and Neutron's API with networking-sfc and the srfabric drivers. ``up`` writes the configuration, makes the
databases (MariaDB migrated by ``neutron-db-manage`` and ``keystone-manage``), starts the servers (Neutron under
eventlet's WSGI server, ``wsgi``; Keystone under a threaded one, ``keystone_wsgi``), makes the demo's projects
and writes ``clouds.yaml`` for the openstack client, then prints what it started as JSON; ``down`` stops each by
its pid. Runs in the Neutron venv.

    python -m networking_srfabric.stack up --state DIR --srfabric-url URL --srfabric-token T
    OS_CLIENT_CONFIG_FILE=DIR/clouds.yaml openstack --os-cloud alice network list
    python -m networking_srfabric.stack api --state DIR --port 9697   # Neutron's API again, after it died
    python -m networking_srfabric.stack down --state DIR

``--auth noauth`` leaves Keystone out: every request is then an admin's (Neutron's noauth), projects mean nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from networking_srfabric import identity, mariadb

NEUTRON_CONF = """[DEFAULT]
core_plugin = ml2
service_plugins = flow_classifier,sfc
auth_strategy = {auth}
transport_url = fake://
api_paste_config = {paste}
state_path = {state}
debug = false
[database]
connection = {db}
max_pool_size = 20
max_overflow = 40
[oslo_messaging_notifications]
driver = noop
[oslo_concurrency]
lock_path = {state}/lock
[quotas]
# networking-sfc allows 10 chains and 10 groups per project by default; a group serves one chain, so the demo and
# the benchmark (over 100 chains) lift them. A cloud sets its own.
quota_port_chain = -1
quota_port_pair_group = -1
quota_port_pair = -1
quota_flow_classifier = -1
quota_port = -1
[sfc]
drivers = srfabric
[flowclassifier]
drivers = srfabric
[srfabric]
url = {url}
token = {token}
backoff_max = {backoff}
stale_claim = {stale}
"""
# Without Keystone every request is an admin's; the policy's new defaults would want a scoped token.
NOAUTH_POLICY = """[oslo_policy]
enforce_new_defaults = False
enforce_scope = False
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
    done = subprocess.run([str(Path(sys.prefix) / "bin" / "neutron-db-manage"), "--config-file",
                           f"{conf}/neutron.conf", "upgrade", "heads"], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"neutron-db-manage: {done.stderr.strip()[-1500:]}")


def serve(state: Path, name: str, module: str, port: int, ready: str, wait_s: float) -> int:
    """Start ``python -m module port`` in a session of its own, logging to ``state/name.log``; its pid once
    ``ready`` (a URL) answers at all (401 included: the server is up)."""
    log = open(state / f"{name}.log", "ab")  # noqa: SIM115 - the server keeps writing it after we return
    server = subprocess.Popen([sys.executable, "-m", module, str(port)], stdout=log, stderr=subprocess.STDOUT,
                              env=dict(os.environ), start_new_session=True)
    (state / f"{name}.pid").write_text(str(server.pid))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"{name}: exited with {server.returncode}; see {state / f'{name}.log'}")
        try:
            with urllib.request.urlopen(ready, timeout=2):
                return server.pid
        except urllib.error.HTTPError:
            return server.pid
        except OSError:
            time.sleep(0.3)
    os.killpg(server.pid, signal.SIGTERM)
    raise SystemExit(f"{name}: no answer within {wait_s} s; see {state / f'{name}.log'}")


def secret(state: Path, name: str) -> str:
    """A password made once per state folder (so ``up`` again after ``down`` finds the same users)."""
    kept = state / "secrets.json"
    known = json.loads(kept.read_text()) if kept.exists() else {}
    if name not in known:
        known[name] = secrets.token_hex(16)
        kept.write_text(json.dumps(known))
        kept.chmod(0o600)
    return str(known[name])


def up(args: argparse.Namespace) -> None:
    state = Path(args.state).resolve()
    (state / "lock").mkdir(parents=True, exist_ok=True)
    started: dict[str, object] = {}
    db = args.db
    if not db:  # a MariaDB of the stack's own
        folder = state / "mariadb"
        started["mariadb_pid"] = mariadb.start(folder, args.mariadb_port)
        (state / "mariadb.pid").write_text(str(started["mariadb_pid"]))
        password = secret(state, "database")
        for name in ("neutron", "keystone"):
            mariadb.create_database(folder, name)
            mariadb.grant(folder, "openstack", password, name)
        db = f"mysql+pymysql://openstack:{password}@127.0.0.1:{args.mariadb_port}/neutron"
    neutron_url = f"http://127.0.0.1:{args.port}"
    auth = ""
    if args.auth == "keystone":
        if not db.startswith("mysql"):
            raise SystemExit("--auth keystone: Keystone needs the stack's MariaDB or a MySQL --db")
        keystone_url = f"http://127.0.0.1:{args.keystone_port}"
        identity.setup(state, db.rsplit("/", 1)[0] + "/keystone", keystone_url, secret(state, "admin"))
        os.environ["OS_KEYSTONE_CONFIG_DIR"] = str(state)
        os.environ["OS_KEYSTONE_CONFIG_FILES"] = "keystone.conf"
        started["keystone_pid"] = serve(state, "keystone", "networking_srfabric.keystone_wsgi", args.keystone_port,
                                        f"{keystone_url}/v3", args.wait)
        clouds = identity.populate(keystone_url, secret(state, "admin"), neutron_url, secret(state, "neutron"))
        (state / "clouds.yaml").write_text(identity.clouds_yaml(keystone_url, clouds))
        (state / "clouds.yaml").chmod(0o600)
        auth = identity.AUTHTOKEN.format(url=keystone_url, password=secret(state, "neutron"))
        started.update(keystone=keystone_url, clouds=str(state / "clouds.yaml"))
    (state / "neutron.conf").write_text(
        NEUTRON_CONF.format(auth=args.auth, paste=paste_file(), state=state, db=db, url=args.srfabric_url,
                            token=args.srfabric_token, backoff=args.backoff_max, stale=args.stale_claim)
        + (auth or NOAUTH_POLICY))
    (state / "ml2_conf.ini").write_text(ML2_CONF)
    os.environ["OS_NEUTRON_CONFIG_DIR"] = str(state)
    os.environ["OS_NEUTRON_CONFIG_FILES"] = "neutron.conf;ml2_conf.ini"
    make_database(db)
    started["neutron_pid"] = serve(state, "neutron-api", "networking_srfabric.wsgi", args.port,
                                   f"{neutron_url}/v2.0/networks", args.wait)
    started["neutron"] = neutron_url
    print(json.dumps(started), flush=True)


def api(args: argparse.Namespace) -> None:
    """Start Neutron's API again on the state ``up`` made (after it died or was killed); prints its pid."""
    state = Path(args.state).resolve()
    os.environ["OS_NEUTRON_CONFIG_DIR"] = str(state)
    os.environ["OS_NEUTRON_CONFIG_FILES"] = "neutron.conf;ml2_conf.ini"
    if (state / "keystone.conf").exists():
        os.environ["OS_KEYSTONE_CONFIG_DIR"] = str(state)
    print(serve(state, "neutron-api", "networking_srfabric.wsgi", args.port,
                f"http://127.0.0.1:{args.port}/v2.0/networks", args.wait), flush=True)


def down(args: argparse.Namespace) -> None:
    """Stop what ``up`` started, Neutron first (its journal's worker writes to the database to the end)."""
    for name in ("neutron-api", "keystone", "mariadb"):
        pid_file = Path(args.state) / f"{name}.pid"
        if not pid_file.exists():
            continue
        pid = int(pid_file.read_text())
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)  # the server and anything it started: the session it was started in
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                os.kill(pid, 0)  # ProcessLookupError once it is gone (it is no child of ours to wait for)
                time.sleep(0.1)
            os.killpg(pid, signal.SIGKILL)
        pid_file.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(prog="networking_srfabric.stack")
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("up")
    start.add_argument("--state", required=True)
    start.add_argument("--port", type=int, default=9697, help="Neutron's API")
    start.add_argument("--auth", choices=("keystone", "noauth"), default="keystone")
    start.add_argument("--keystone-port", type=int, default=5000)
    start.add_argument("--mariadb-port", type=int, default=3307)
    start.add_argument("--db", default="", help="an existing database for Neutron (mysql+pymysql://... or "
                                                "sqlite:///...); default: a MariaDB of the stack's own")
    start.add_argument("--srfabric-url", default="http://127.0.0.1:9696")
    start.add_argument("--srfabric-token", default="")
    start.add_argument("--backoff-max", type=float, default=60.0)
    start.add_argument("--stale-claim", type=float, default=30.0,
                       help="seconds before a row claimed by a worker that died is sent by another")
    start.add_argument("--wait", type=float, default=120.0)
    again = commands.add_parser("api", help="start Neutron's API again on an existing state")
    again.add_argument("--state", required=True)
    again.add_argument("--port", type=int, default=9697)
    again.add_argument("--wait", type=float, default=120.0)
    stop = commands.add_parser("down")
    stop.add_argument("--state", required=True)
    args = parser.parse_args()
    {"up": up, "api": api, "down": down}[args.command](args)


if __name__ == "__main__":
    main()
