"""``srfabric pki``: the fabric's CA and certificates in one folder, for ``srfabric serve --openflow-tls DIR`` and
for the switches (``ovs-vsctl set-ssl KEY CERT CA``).

    srfabric pki init DIR [--host 10.0.0.254 ...]        # the CA and the controller's certificate
    srfabric pki controller DIR [--host ...]             # the controller's again (new addresses)
    srfabric pki switch DIR NAME --dpid 0x101 [--dpid ...] # a switch's: the datapath ids it may claim
    srfabric pki switch DIR NAME --dpid 0x101 --listens    # one that `serve --dial` connects to
"""

from __future__ import annotations

import argparse
from pathlib import Path

from srfabric.errors import SrfabricError
from srfabric.security.pki import Issued, make_ca, make_certificate


def add_parser(commands: argparse._SubParsersAction) -> None:
    pki = commands.add_parser("pki", help="the fabric's CA and its controller's and switches' certificates")
    sub = pki.add_subparsers(dest="pki_command", required=True)
    init = sub.add_parser("init", help="a CA and the controller's certificate in DIR")
    init.add_argument("folder", metavar="DIR")
    init.add_argument("--host", action="append", default=[], help="an address switches reach the controller at "
                                                                    "(repeatable; default 127.0.0.1)")
    controller = sub.add_parser("controller", help="the controller's certificate made again with DIR's CA (for "
                                                   "new addresses, or one made before `serve --dial` could use it)")
    controller.add_argument("folder", metavar="DIR")
    controller.add_argument("--host", action="append", default=[], help="an address switches reach the controller "
                                                                        "at (repeatable; default 127.0.0.1)")
    switch = sub.add_parser("switch", help="a switch's certificate, naming the datapath ids it may claim")
    switch.add_argument("folder", metavar="DIR")
    switch.add_argument("name")
    switch.add_argument("--dpid", action="append", required=True, help="a datapath id (0x101 or 257; repeatable)")
    switch.add_argument("--listens", action="store_true",
                        help="for a switch that listens (Open vSwitch `pssl:`, type=primary) and that `serve --dial` "
                             "connects to: a TLS server's certificate, which cannot dial another switch")


def parse_dpid(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise SrfabricError("--dpid", f"must be a number (0x101 or 257), got {text!r}") from None
    if not 0 <= value < 2**64:
        raise SrfabricError("--dpid", f"must fit in 64 bits, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if args.pki_command == "init":
        if (folder / "ca-cert.pem").exists():
            raise SrfabricError("DIR", f"{folder} holds a CA already; use another folder")
        ca = make_ca(folder)
        controller = make_certificate(folder, ca, "controller", hosts=args.host or ["127.0.0.1"])
        print(f"CA: {ca.cert}\ncontroller: {controller.cert} (serve --openflow-tls {folder})")
        return 0
    ca = Issued(folder / "ca-cert.pem", folder / "ca-privkey.pem")
    if not ca.key.exists():
        raise SrfabricError("DIR", f"{folder} has no CA: run `srfabric pki init {folder}` first")
    if args.pki_command == "controller":
        made = make_certificate(folder, ca, "controller", hosts=args.host or ["127.0.0.1"])
        print(f"controller: {made.cert} (restart `serve --openflow-tls {folder}` to use it)")
        return 0
    if args.name in ("ca", "controller") or not args.name.replace("-", "").replace("_", "").isalnum():
        raise SrfabricError("name", f"{args.name!r}: letters, digits, - and _ only, and not ca or controller (the "
                                    "CA's and the controller's files)")
    made = make_certificate(folder, ca, args.name, dpids=[parse_dpid(text) for text in args.dpid],
                            listens=args.listens)
    print(f"ovs-vsctl set-ssl {made.key} {made.cert} {ca.cert}")
    return 0
