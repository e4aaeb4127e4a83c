"""``srfabric bridge serve``: a Linux machine as a TSN bridge that srfabric gates over NETCONF. It starts Debian's
netconfd with the pinned IEEE 802.1Qcw modules and srfabric's SIL library, seeds each port's capability leaves,
and applies every committed gate schedule to taprio (``--apply none`` on a kernel without taprio: committed and
kept in the state leaves, not run).

    srfabric bridge serve --name s1 --port s1-eth1 --port s1-eth2 --yang /usr/share/srfabric/yang \\
        --state /var/lib/srfabric-bridge            # behind the machine's sshd (Port 830, netconf subsystem)
    srfabric bridge serve ... --sshd --ssh-port 8301 --authorized-keys keys   # its own sshd (several per machine)
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from pathlib import Path

from srfabric.errors import SrfabricError
from srfabric.tsn.gates.capabilities import PortCapabilities


def add_parser(commands: argparse._SubParsersAction) -> None:
    bridge = commands.add_parser("bridge", help="run this machine as a TSN bridge gated over NETCONF")
    sub = bridge.add_subparsers(dest="bridge_command", required=True)
    serve = sub.add_parser("serve", help="netconfd with the 802.1Qcw modules, and the agent that applies its "
                                         "committed schedules")
    serve.add_argument("--name", required=True, help="the bridge's name in srfabric's topology")
    serve.add_argument("--port", action="append", required=True, dest="ports", metavar="IFNAME",
                       help="a gated port (repeatable)")
    serve.add_argument("--yang", type=Path, required=True, help="the folder of the pinned IEEE and IETF modules")
    serve.add_argument("--state", type=Path, required=True, help="netconfd's startup file, logs and the ports' "
                                                                 "state leaves")
    serve.add_argument("--fresh", action="store_true", help="start from the capability leaves alone, not from "
                                                            "the last committed configuration")
    serve.add_argument("--apply", choices=("taprio", "none"), default="taprio",
                       help="run each committed list with taprio, or only commit and keep it (no taprio here)")
    serve.add_argument("--list-max", type=int, default=256, help="supported-list-max of every port")
    serve.add_argument("--cycle-max-ns", type=int, default=1_000_000_000, help="supported-cycle-max, in ns")
    serve.add_argument("--interval-max-ns", type=int, default=1_000_000_000, help="supported-interval-max")
    serve.add_argument("--tick", type=int, default=10, help="tick-granularity, tenths of a ns")
    serve.add_argument("--address", help="the bridge's MAC address (aa-bb-cc-dd-ee-ff); default: the locally "
                                          "administered one srfabric's API gives the switch of that name")
    serve.add_argument("--flow-meters", type=int, default=1024, help="max-flow-meter-instances (PSFP; the published "
                       "must statement reads it, but bounds no count); its stream gates take the ports' limits")
    serve.add_argument("--ssh-port", type=int, default=830, help="the SSH port NETCONF sessions arrive on")
    serve.add_argument("--sshd", action="store_true", help="run a private sshd for this bridge")
    serve.add_argument("--listen", default="127.0.0.1", help="the private sshd's address")
    serve.add_argument("--authorized-keys", type=Path, help="the private sshd's authorized keys")
    check = sub.add_parser("check", help="reach every bridge of a bridges file over NETCONF: its capabilities and "
                                         "what each port runs")
    check.add_argument("--bridges", type=Path, required=True, help="the bridges file serve --gates netconf reads")


def capabilities(args: argparse.Namespace) -> PortCapabilities:
    from fractions import Fraction

    cycle = Fraction(args.cycle_max_ns, 1_000_000_000)
    return PortCapabilities(args.list_max, (cycle.numerator, cycle.denominator), args.interval_max_ns, args.tick)


def run(args: argparse.Namespace) -> int:
    return check(args) if args.bridge_command == "check" else serve(args)


def check(args: argparse.Namespace) -> int:
    """One line per bridge and per gated port; exit 1 when a bridge did not answer."""
    from srfabric.model.management import read_bridges_file
    from srfabric.southbound.netconf.session import BridgeSession

    failed = 0
    for name, access in sorted(read_bridges_file(args.bridges).items()):
        session = BridgeSession(access)
        try:
            tables = session.tables()
        except SrfabricError as error:
            failed += 1
            print(f"{name}: {error}")
            continue
        finally:
            session.close()
        print(f"{name}: {access.host}:{access.port}, {len(tables)} ports with a gate-parameter-table")
        for port, table in sorted(tables.items()):
            caps = table.capabilities
            limits = (f"list-max {caps.list_max}, cycle-max {float(caps.cycle_max_ns):g} ns, interval-max "
                      f"{caps.interval_max_ns} ns, tick {caps.tick_tenths_ns / 10:g} ns") if caps else "no capabilities"
            running = (f"runs {len(table.oper.entries)} entries from base time {table.oper.base_time_ns}"
                       if table.oper else "runs no list")
            print(f"  {port}: {'gated' if table.enabled else 'not gated'}; {running}"
                  f"{' (a change pending)' if table.pending else ''}; {limits}")
    return 1 if failed else 0


def serve(args: argparse.Namespace) -> int:
    from srfabric.bridge.agent import BridgeAgent
    from srfabric.bridge.ports import PortDriver, TaprioPorts, UnappliedPorts
    from srfabric.bridge.server import BridgeServer
    from srfabric.rules.yang.psfp_document import edge_address
    from srfabric.rules.yang.psfp_netconf import startup_psfp
    from srfabric.southbound.gates import tai_now_ns

    if args.sshd and args.authorized_keys is None:
        raise SrfabricError("--authorized-keys", "a private sshd (--sshd) needs the keys it lets in")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    caps = capabilities(args)
    psfp = startup_psfp(args.name, args.address or edge_address(args.name), caps, args.flow_meters)
    server = BridgeServer(args.name, args.state.resolve(), args.yang.resolve(), dict.fromkeys(args.ports, caps),
                          args.ssh_port, psfp)
    ports: PortDriver = TaprioPorts() if args.apply == "taprio" else UnappliedPorts()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        server.start(fresh=args.fresh)
        if args.sshd:
            server.start_sshd(args.authorized_keys.resolve(), args.listen)
        print(f"bridge {args.name}: NETCONF on port {args.ssh_port}, ports {', '.join(args.ports)}, "
              f"taprio {ports.name}", flush=True)
        BridgeAgent(server.state, args.name, ports, tai_now_ns, args.tick).run(stop)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
