"""``srfabric up``: an emulated fabric kept running under ``srfabric serve`` until Ctrl-C or SIGTERM, and
``srfabric host NAME -- CMD`` to run a command on one of its hosts.

``up`` builds the topology in Mininet (Open vSwitch in userspace, or the XDP
switch), starts ``srfabric serve`` on it (SQLite in a fresh folder), creates the
functions' ports through the API, lets the hosts be learned, starts the service
functions (namespaces forwarding between their two interfaces) and prints the
API's URL and token. It writes where everything is to a state file
(``/run/srfabric/up.json``) that ``srfabric host`` reads. On Ctrl-C or SIGTERM
it stops what it started, by process id, and Mininet removes its namespaces,
links and bridges by name; the state file goes too. An ``up`` that finds the
state of one that was killed removes what that one left (``up_leftovers``) first.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.up_state import STATE, read_up_state
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from srfabric_tools.testbed.topo_choice import topology
from srfabric_tools.testbed.up_leftovers import remove_leftovers


class Stop(Exception):
    """SIGTERM: leave the wait and clean up, as Ctrl-C does."""


def add_parsers(commands: argparse._SubParsersAction) -> None:
    from srfabric.codecs import CODEC_NAMES
    from srfabric_tools.testbed.kinds import SWITCH_KINDS

    up = commands.add_parser("up", help="keep an emulated fabric running under srfabric serve until Ctrl-C (root)")
    up.add_argument("--topo", default="line:3", help="fat-tree:K, line:N, tsn-fig7 or FILE.json (default line:3)")
    up.add_argument("--functions", type=int, default=2, help="service functions dealt to the switches (default 2)")
    up.add_argument("--switch", choices=SWITCH_KINDS, default="ovs")
    up.add_argument("--codec", choices=CODEC_NAMES, default="mac-nibble")
    up.add_argument("--token", default=None, help="the API token (default: a random one, printed)")
    up.add_argument("--exec", dest="exec_line", default=None,
                    help="once running, run this on a host and print its output, e.g. \"h1 ping -c1 h2\"")
    host = commands.add_parser("host", help="run a command on a host of the running `srfabric up` "
                                            "(host names in the command become their addresses)")
    host.add_argument("name")
    host.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND ...")


def run_up(args: argparse.Namespace, ready: Any = print) -> int:
    from srfabric.security.pki import make_ca, make_certificate
    from srfabric_tools.demo import check_host

    check_host(args.switch)
    spec = topology(args.topo, args.functions)
    previous_state = read_up_state()
    if previous_state and _alive(previous_state.get("pid", 0)):
        raise SrfabricError("up", f"another srfabric up is running (see {STATE})")
    if previous_state:  # an up that was killed: its bridges and links would clash with this one's
        removed = remove_leftovers(previous_state)
        ready(f"srfabric up: removed what a killed srfabric up left: {', '.join(removed) or 'nothing'}")
        STATE.unlink(missing_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="srfabric-up-"))
    token = args.token or secrets.token_hex(16)  # hex: never starts with "-", which argparse reads as an option
    pki = folder / "pki"  # OpenFlow over TLS with a CA of this fabric's own
    make_certificate(pki, make_ca(pki), "controller")
    serve = ServeProcess(f"sqlite:///{folder}/api.db", token=token, codec=args.codec, tls=pki)
    previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        with serve, ApiLab(spec, serve, switch=args.switch) as lab:
            assert lab.testbed is not None
            nodes = {name: lab.testbed.node(name) for name in (*spec.hosts, *spec.functions)}
            assert serve.process is not None
            state = {"pid": os.getpid(), "serve_pid": serve.process.pid, "api": serve.url, "token": token,
                     "web": f"{serve.url}/ui/",
                     "topo": args.topo, "switches": sorted(spec.switches),
                     "hosts": {name: {"ip": host.ip, "pid": nodes[name].pid} for name, host in spec.hosts.items()},
                     "functions": {name: {"pid": nodes[name].pid} for name in spec.functions}}
            channel = f"TLS, CA {pki / 'ca-cert.pem'}"
            STATE.parent.mkdir(parents=True, exist_ok=True)
            STATE.write_text(json.dumps(state, indent=1) + "\n")
            ready(f"srfabric up: {args.topo} with {len(spec.switches)} switches, {len(spec.hosts)} hosts, "
                  f"{len(spec.functions)} functions ({args.switch}, {args.codec})\n"
                  f"  API     {serve.url}   token {token}\n"
                  f"  web     {serve.url}/ui/?token={token}\n"
                  f"  openflow {channel}\n"
                  f"  hosts   " + ", ".join(f"{name} {host.ip}" for name, host in spec.hosts.items()) + "\n"
                  f"  state   {STATE}  (srfabric host NAME -- CMD)\n"
                  f"  ready; Ctrl-C stops it and removes what it made")
            sys.stdout.flush()
            if args.exec_line:
                name, *argv = args.exec_line.split()
                done = run_on_host(state, name, argv, capture=True)
                ready(done.stdout.rstrip())
            with contextlib.suppress(KeyboardInterrupt, Stop):
                while serve.process is not None and serve.process.poll() is None:
                    time.sleep(0.5)
    finally:
        signal.signal(signal.SIGTERM, previous)
        STATE.unlink(missing_ok=True)
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def run_host(args: argparse.Namespace) -> int:
    if not STATE.exists():
        raise SrfabricError("host", f"no srfabric up is running ({STATE} is missing)")
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise SrfabricError("host", "give a command after --, e.g. srfabric host h1 -- ping -c1 h2")
    return run_on_host(json.loads(STATE.read_text()), args.name, argv).returncode


def run_on_host(state: dict[str, Any], name: str, argv: list[str],
                capture: bool = False) -> subprocess.CompletedProcess[str]:
    """``argv`` in host ``name``'s namespaces (mnexec -a), host names replaced by their addresses."""
    hosts = state["hosts"]
    if name not in hosts:
        raise SrfabricError("host", f"{name!r} is not one of {', '.join(sorted(hosts))}")
    command = ["mnexec", "-a", str(hosts[name]["pid"]), *(hosts[word]["ip"] if word in hosts else word
                                                          for word in argv)]
    return subprocess.run(command, text=True, check=False, stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.STDOUT if capture else None)


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _raise_stop(signum: int, frame: object) -> None:
    raise Stop()
