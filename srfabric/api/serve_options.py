"""``srfabric serve``'s options, and the checks that refuse a bad one before anything listens or loads."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from srfabric.codecs import CODEC_NAMES
from srfabric.errors import SrfabricError

if TYPE_CHECKING:
    from srfabric.api.keystone import KeystoneAccess

MAX_HOSTS_PER_PORT = 4096
TOKEN_ENV = "SRFABRIC_TOKEN"
KEYSTONE_PASSWORD_ENV = "SRFABRIC_KEYSTONE_PASSWORD"


def add_parser(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="run the controller with the networking-sfc REST API")
    serve.add_argument("--host", default="127.0.0.1", help="address the REST API listens on")
    serve.add_argument("--port", type=int, default=9696, help="REST API port (Neutron's is 9696)")
    serve.add_argument("--db", default="sqlite:///srfabric.db",
                       help="sqlite:///PATH (default: ./srfabric.db) or postgresql://USER@HOST/DB")
    serve.add_argument("--advertise-url", default=None,
                       help="this instance's API URL as the others on the same PostgreSQL database send writes to it "
                            "(default: http://HOST:PORT)")
    serve.add_argument("--edges", default=None, metavar="NAMES",
                       help="on PostgreSQL: the switches (comma-separated names) this instance is OpenFlow MASTER of "
                            "while it lives, sharing the fabric with the other instances; the leader holds the rest "
                            "and takes these when this instance ends")
    serve.add_argument("--token", default=None, help=f"the secret clients send as X-Auth-Token (or ${TOKEN_ENV})")
    serve.add_argument("--no-auth", action="store_true", help="accept requests without a token (local use only)")
    serve.add_argument("--openflow-host", default="0.0.0.0", help="address switches connect to")
    serve.add_argument("--openflow-port", type=int, default=6653)
    serve.add_argument("--openflow-tls", default=None, metavar="DIR",
                       help="OpenFlow over TLS with the certificates of `srfabric pki init DIR`: a switch must show a "
                            "certificate of that CA naming the dpid it claims")
    serve.add_argument("--openflow-insecure", action="store_true",
                       help="take switches over plain TCP (without it, --openflow-tls is required)")
    serve.add_argument("--dial", action="append", default=[], metavar="HOST:PORT",
                       help="connect to a switch that listens there (Open vSwitch: a `pssl:PORT` controller with "
                            "type=primary) and again whenever the connection ends: a restarted controller has it back "
                            "at once, without the switch's own retry timer (repeatable)")
    serve.add_argument("--tokens", default=None, metavar="FILE",
                       help="projects and roles: a JSON list of {sha256, project, role: admin|member}; a member sees "
                            "and changes its own project's resources only")
    serve.add_argument("--api-tls", default=None, metavar="DIR",
                       help="serve the API and the web view over HTTPS with the controller's certificate of "
                            "`srfabric pki init DIR` (clients: SRFABRIC_CACERT=DIR/ca-cert.pem)")
    serve.add_argument("--codec", choices=CODEC_NAMES, default="mac-nibble")
    serve.add_argument("--gateway", default=None, metavar="IPV4",
                       help="the host (an uplink router) that takes IPv4 to no host of the fabric; without it such "
                            "traffic is dropped at its ingress")
    serve.add_argument("--reactive", action="store_true",
                       help="also set each new IPv4 flow between hosts up on its first packet, at its ingress edge")
    serve.add_argument("--flow-idle-timeout", type=int, default=60, metavar="S",
                       help="with --reactive: a flow's entry goes after S seconds without a packet (0: never)")
    serve.add_argument("--max-hosts-per-port", type=int, default=32, metavar="N",
                       help="hosts one switch port may teach; ARP past them is refused and counted")
    serve.add_argument("--log-json", action="store_true",
                       help="log one JSON object per line (security events carry an 'event' field)")
    add_stream_options(serve.add_argument_group("time-sensitive streams"))
    add_keystone_options(serve.add_argument_group("Keystone tokens (without Neutron in front)"))


def add_keystone_options(group: argparse._ArgumentGroup) -> None:
    """``serve``'s options for taking Keystone tokens itself (``api/keystone.py``)."""
    group.add_argument("--keystone", default=None, metavar="URL",
                       help="take Keystone tokens, each checked with Keystone's v3 API at URL "
                            "(http://HOST:5000/v3) by srfabric's service user; a token's project is its "
                            "member's, Keystone's admin role an admin's; --token stays an admin's")
    group.add_argument("--keystone-user", default="srfabric", help="srfabric's service user in Keystone")
    group.add_argument("--keystone-project", default="service", help="the project its token is scoped to")
    group.add_argument("--keystone-domain", default="Default", help="the domain of that user and project")
    group.add_argument("--keystone-password-file", default=None, metavar="FILE",
                       help=f"the service user's password (else ${KEYSTONE_PASSWORD_ENV})")
    group.add_argument("--keystone-cache-s", type=float, default=300.0, metavar="S",
                       help="how long a checked token is taken without asking again (never past its expiry)")


def add_stream_options(tsn: argparse._ArgumentGroup) -> None:
    """``serve``'s options for time-sensitive streams: queues, gates, the cycle, gPTP."""
    tsn.add_argument("--tt-queue", type=int, default=6,
                     help="OpenFlow queue of time-triggered frames on every switch (OVS's Linux datapath: queue 6 "
                          "is skb priority 7); -1: none")
    tsn.add_argument("--gates", choices=("none", "taprio", "netconf"), default="none",
                     help="taprio: install each gated port's schedule with tc (the switches' ports are local); "
                          "netconf: push it to each bridge's NETCONF server (--bridges); none: compute and show "
                          "them only")
    tsn.add_argument("--bridges", type=Path, help="with --gates netconf: a JSON file of each bridge's NETCONF "
                                                  "address and credentials ({\"bridges\": {name: {host, port, "
                                                  "username, password or key_file}}})")
    tsn.add_argument("--confirm-timeout-s", type=int, default=30,
                     help="how long a bridge waits for a confirmed commit's confirmation before it rolls back")
    tsn.add_argument("--cycle-ns", type=int, default=1_000_000, help="base period of the slot grid")
    tsn.add_argument("--gate-lead-ms", type=float, default=200.0,
                     help="how far ahead a gate change's common base time is set")
    tsn.add_argument("--gptp", action="append", default=[], metavar="BRIDGE=SOCKET",
                     help="watch BRIDGE's gPTP state through its ptp4l's socket (pmc); no stream is scheduled "
                          "through a bridge off its grandmaster by more than --gptp-bound-ns (repeatable)")
    tsn.add_argument("--gptp-bound-ns", type=int, default=1000, help="the largest offset a bridge may run gates at")
    tsn.add_argument("--psfp-tolerance-ns", type=int, default=0,
                     help="802.1Qci: open each stream's ingress gate this long before and after its slot (the "
                          "talkers' and the edges' clocks disagree by up to this), 0..1000000")
    tsn.add_argument("--psfp-meters", action="store_true",
                     help="802.1Qci on Open vSwitch: police each time-triggered stream at its talker's edge with an "
                          "OpenFlow meter of its reservation (frames a second, a bucket of two); its counters reach "
                          "the PSFP view and /metrics. The meter only: the size and the window need the XDP program "
                          "in front of the port")


def token_from(args: argparse.Namespace) -> str | None:
    token = args.token or os.environ.get(TOKEN_ENV)
    if args.no_auth:
        return None
    if not token:
        raise SrfabricError("--token", f"a token is required (--token or ${TOKEN_ENV}); --no-auth turns it off")
    return str(token)


def keystone_from(args: argparse.Namespace) -> KeystoneAccess | None:
    """``--keystone``'s access, its password read (``SrfabricError`` naming the option that is wrong)."""
    from srfabric.api.keystone import KeystoneAccess

    if not args.keystone:
        return None
    if args.no_auth or args.tokens:
        raise SrfabricError("--keystone", "takes Keystone's tokens: not with --no-auth, nor with --tokens")
    if not args.keystone.startswith(("http://", "https://")):
        raise SrfabricError("--keystone", f"must be Keystone's v3 URL (http[s]://HOST:PORT/v3), got {args.keystone!r}")
    if not 0 < args.keystone_cache_s <= 86_400:
        raise SrfabricError("--keystone-cache-s", f"must be in (0, 86400], got {args.keystone_cache_s}")
    password = os.environ.get(KEYSTONE_PASSWORD_ENV)
    if args.keystone_password_file:
        try:
            password = Path(args.keystone_password_file).read_text().strip()
        except OSError as error:
            raise SrfabricError("--keystone-password-file", f"cannot be read: {error}") from None
    if not password:
        raise SrfabricError("--keystone-password-file", f"the service user's password is needed (a file, or "
                                                         f"${KEYSTONE_PASSWORD_ENV})")
    return KeystoneAccess(args.keystone, args.keystone_user, password, args.keystone_project, args.keystone_domain,
                          args.keystone_cache_s)


def check_args(args: argparse.Namespace) -> None:
    """Refuse a bad option before anything listens or loads, naming the option and the limit."""
    from srfabric.rules.streams.time_triggered import BE_QUEUE, CLASS_QUEUE, MAX_QUEUE
    from srfabric.tsn.protect.psfp import MAX_TOLERANCE_NS

    if not args.openflow_tls and not args.openflow_insecure:
        raise SrfabricError("--openflow-tls", "switches connect over TLS: give --openflow-tls DIR (certificates of "
                                              "`srfabric pki init DIR`), or say --openflow-insecure to take them "
                                              "over plain TCP")
    if args.tt_queue > MAX_QUEUE or args.tt_queue < -1:
        raise SrfabricError("--tt-queue", f"must be in -1..{MAX_QUEUE}, got {args.tt_queue}")
    taken = (BE_QUEUE, *CLASS_QUEUE.values())
    if args.tt_queue in taken:
        raise SrfabricError("--tt-queue", f"{args.tt_queue} is best effort's or an SR class's queue "
                                          f"({', '.join(map(str, taken))})")
    if args.cycle_ns < 100_000:
        raise SrfabricError("--cycle-ns", f"must be at least 100000, got {args.cycle_ns}")
    if not 1 <= args.max_hosts_per_port <= MAX_HOSTS_PER_PORT:
        raise SrfabricError("--max-hosts-per-port",
                            f"must be in 1..{MAX_HOSTS_PER_PORT}, got {args.max_hosts_per_port}")
    if not 0 <= args.flow_idle_timeout <= 65535:
        raise SrfabricError("--flow-idle-timeout", f"must be in 0..65535 (OpenFlow's 16 bits), got "
                                                   f"{args.flow_idle_timeout}")
    if args.edges and not args.db.startswith("postgresql"):
        raise SrfabricError("--edges", "instances share a fabric through PostgreSQL: give --db postgresql://...")
    if args.gptp and args.gptp_bound_ns < 1:
        raise SrfabricError("--gptp-bound-ns", f"must be at least 1, got {args.gptp_bound_ns}")
    if not 0 <= args.psfp_tolerance_ns <= MAX_TOLERANCE_NS:
        raise SrfabricError("--psfp-tolerance-ns", f"must be in 0..{MAX_TOLERANCE_NS}, got {args.psfp_tolerance_ns}")
    keystone_from(args)
