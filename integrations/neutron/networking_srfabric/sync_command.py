"""``python -m networking_srfabric.sync_command``: the full sync (``full_sync``) as an operator runs it, beside a
Neutron server. It reads Neutron's resources over its API as an admin (a cloud of ``clouds.yaml``; without
``--os-cloud``, a Neutron without Keystone at ``--neutron-url``), srfabric's with the service credential from
neutron.conf's ``[srfabric]``, prints each repair, and writes them to the journal in Neutron's database (the
worker inside Neutron sends them within seconds). ``--dry-run`` only prints. Exits 1 when there was drift."""

from __future__ import annotations

import argparse
import configparser
import json
import sys
import urllib.request
from typing import Any

from networking_srfabric.full_sync import KIND, Get, inventory, repairs
from networking_srfabric.journal import JOURNAL_METADATA, record
from networking_srfabric.sender import http_call


def neutron_reader(cloud: str | None, neutron_url: str) -> Get:
    if cloud is None:
        def plain(path: str) -> dict[str, Any]:
            with urllib.request.urlopen(neutron_url.rstrip("/") + path, timeout=30) as answer:
                return dict(json.load(answer))
        return plain
    import openstack

    connection = openstack.connect(cloud=cloud)
    endpoint = neutron_url or connection.session.get_endpoint(service_type="network", interface="public")

    def signed(path: str) -> dict[str, Any]:
        answer = connection.session.get(endpoint.rstrip("/") + path, timeout=30)
        answer.raise_for_status()
        return dict(answer.json())
    return signed


def srfabric_reader(url: str, token: str) -> Get:
    call = http_call(url, token)

    def read(path: str) -> dict[str, Any]:
        status, answer = call("GET", path, None)
        if status != 200:
            raise SystemExit(f"srfabric: GET {path} answered {status}: {answer}")
        return answer
    return read


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="networking_srfabric.sync_command")
    parser.add_argument("--config-file", required=True, help="neutron.conf: its [database] and [srfabric]")
    parser.add_argument("--os-cloud", default=None, help="an admin's cloud in clouds.yaml (Keystone)")
    parser.add_argument("--neutron-url", default="", help="Neutron's API (default: from Keystone's catalogue)")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    conf = configparser.ConfigParser(interpolation=None)
    if not conf.read(args.config_file):
        raise SystemExit(f"--config-file: cannot read {args.config_file}")
    for section, option in (("database", "connection"), ("srfabric", "url")):
        if not conf.has_option(section, option):
            raise SystemExit(f"--config-file: [{section}] {option} is missing in {args.config_file}")
    fixes = repairs(inventory(neutron_reader(args.os_cloud, args.neutron_url)),
                    inventory(srfabric_reader(conf["srfabric"]["url"], conf["srfabric"].get("token", ""))))
    for operation, collection, ident, _ in fixes:
        print(f"{operation} {KIND[collection]} {ident}")
    if fixes and not args.dry_run:
        from sqlalchemy import create_engine

        engine = create_engine(conf["database"]["connection"])
        JOURNAL_METADATA.create_all(engine)
        with engine.begin() as db:
            for operation, collection, ident, resource in fixes:
                record(db, KIND[collection], ident, operation, resource)
    print(f"{len(fixes)} repairs{' (not written: --dry-run)' if args.dry_run else ' journaled'}")
    return 1 if fixes else 0


if __name__ == "__main__":
    sys.exit(main())
