"""``srfabric neutron-demo`` (``make neutron-demo``): the whole OpenStack side and a fabric in one command.

``srfabric serve`` with a Mininet fabric of Open vSwitch (h1 - s1 - s2 - s3 - h2, functions v1 and v2 on s2), a
MariaDB, Keystone and Neutron with networking-sfc and srfabric's drivers; then, as an operator would with the
``openstack`` client (each command printed), the hosts' and functions' ports, pairs, groups, a classifier and a
chain; UDP from h1 to h2 then crosses v1 and v2. ``--keep`` leaves everything up until Ctrl-C, with the lines to
use it; otherwise all is stopped (by pid) and removed.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser("neutron-demo", help="srfabric under OpenStack Neutron (Keystone, MariaDB, "
                                                    "networking-sfc) with a Mininet fabric, a chain made with the "
                                                    "openstack client (root)")
    demo.add_argument("--keep", action="store_true", help="leave it all running until Ctrl-C")


def run(args: argparse.Namespace) -> int:
    # Here, not at the top: the command line's parser imports this module for every command.
    from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec
    from srfabric_tools.testbed.neutron_fabric import NeutronFabric, until
    from srfabric_tools.testbed.neutron_stack import NeutronStack
    from srfabric_tools.testbed.udp_probe import udp_through

    state = Path(tempfile.mkdtemp(prefix="srfabric-neutron-demo-"))
    try:
        print(f"starting srfabric serve, a Mininet fabric, MariaDB, Keystone and Neutron (state: {state})")
        with ServeProcess(f"sqlite:///{state}/srfabric.db") as serve, \
                ApiLab(line_spec(2), serve, declare_functions=False) as lab, \
                NeutronStack(state / "stack", serve.url, serve.token, backoff_max_s=10.0) as stack:
            print(f"Neutron {stack.url}, Keystone {stack.started['keystone']}, srfabric {serve.url}")
            fabric = NeutronFabric(lab, stack, say=lambda line: print(f"  $ {line}"))
            fabric.build()
            udp = fabric.classifier("udp-7000", "udp", 7000)
            chain = fabric.alice("sfc", "port", "chain", "create", "--port-pair-group", fabric.groups["v1"],
                                 "--port-pair-group", fabric.groups["v2"], "--flow-classifier", udp, "web")["id"]
            until(lambda: chain in fabric.held("port_chains"), "the chain in srfabric")
            received, seen = udp_through(lab, 7000)
            print(f"UDP h1 -> h2:7000: {received} of 100 received; v1 saw {seen['v1'].get('packets', 0)}, v2 saw "
                  f"{seen['v2'].get('packets', 0)} ({seen['v2'].get('from_mark_1', 0)} of them after v1)")
            if not args.keep:
                return 0 if received >= 95 and seen["v2"].get("from_mark_1", 0) >= 95 else 1
            print(f"\nexport OS_CLIENT_CONFIG_FILE={stack.state / 'clouds.yaml'}\n"
                  f"{stack.python.parent / 'openstack'} --os-cloud alice sfc port chain list\n"
                  f"clouds: admin, compute (binds ports, as Nova), alice (project-a), bob (project-b)\n"
                  f"srfabric's view: curl -H 'X-Auth-Token: {serve.token}' {serve.url}/v2.0/srfabric/fabric\n"
                  "Ctrl-C stops everything.")
            while True:
                time.sleep(3600)
    finally:
        shutil.rmtree(state, ignore_errors=True)
