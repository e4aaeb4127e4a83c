"""Projects and roles, as Neutron has them: each token belongs to a project and is an admin's or a member's. A
member lists, reads and changes only its own project's resources (any other id is a 404, as in Neutron), makes
them in its own project only, and names only its own project's resources in a body. An admin sees every project.
Only the tokens' SHA-256 digests are kept.

``serve --tokens FILE``: a JSON list of ``{"sha256": "<hex digest of the token>", "project": "...", "role":
"admin" | "member"}``; ``--token`` stays an admin's.

>>> book = TokenBook({digest("a-secret"): Principal("project-a", admin=False)})
>>> book.who(b"a-secret")
Principal(project='project-a', admin=False)
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srfabric.api.errors import ApiError, not_found
from srfabric.api.resources.common import NOT_FOUND
from srfabric.errors import SrfabricError
from srfabric.logs import security_event

log = logging.getLogger(__name__)
ADMIN_PROJECT = "srfabric"  # the project the API's own records (learned hosts) and an admin's belong to
# The ids a body names, by kind: field -> the collection they must be visible in.
REFERENCES = {
    "flow_classifiers": {"logical_source_port": "ports", "logical_destination_port": "ports"},
    "port_pairs": {"ingress": "ports", "egress": "ports"},
    "port_pair_groups": {"port_pairs": "port_pairs"},
    "port_chains": {"port_pair_groups": "port_pair_groups", "flow_classifiers": "flow_classifiers"},
    "service_graphs": {"port_chains": "port_chains"},
    "streams": {"talker": "ports", "listener": "ports"},
}


@dataclass(frozen=True)
class Principal:
    project: str
    admin: bool


ANYONE = Principal(ADMIN_PROJECT, admin=True)  # authentication off (``--no-auth``)


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class TokenBook:
    """The tokens the API takes (by digest); None: authentication is off and every request is an admin's."""

    def __init__(self, entries: dict[bytes, Principal] | None) -> None:
        self.entries = entries

    @classmethod
    def single(cls, token: str | None) -> TokenBook:
        return cls(None if token is None else {digest(token): Principal(ADMIN_PROJECT, admin=True)})

    @classmethod
    def from_file(cls, path: Path, admin_token: str | None) -> TokenBook:
        """``--tokens FILE``; ``SrfabricError`` naming the entry and field that is wrong."""
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise SrfabricError("--tokens", f"{path}: not a readable JSON list: {error}") from None
        if not isinstance(document, list):
            raise SrfabricError("--tokens", f"{path}: must be a JSON list of tokens")
        entries = {} if admin_token is None else {digest(admin_token): Principal(ADMIN_PROJECT, admin=True)}
        for index, item in enumerate(document):
            where = f"{path}[{index}]"
            if not isinstance(item, dict) or item.get("role") not in ("admin", "member"):
                raise SrfabricError("--tokens", f"{where}.role: must be admin or member")
            hexdigest, project = item.get("sha256"), item.get("project")
            if not isinstance(hexdigest, str) or len(hexdigest) != 64:
                raise SrfabricError("--tokens", f"{where}.sha256: must be the token's SHA-256, 64 hex digits")
            if not isinstance(project, str) or not project:
                raise SrfabricError("--tokens", f"{where}.project: must be a non-empty string")
            try:
                entries[bytes.fromhex(hexdigest)] = Principal(project, item["role"] == "admin")
            except ValueError:
                raise SrfabricError("--tokens", f"{where}.sha256: not hex digits") from None
        return cls(entries)

    async def learn(self, given: bytes | None) -> None:
        """Find out whose token ``given`` is before ``who`` is asked (a book that asks a server: ``keystone``)."""

    def who(self, given: bytes | None, peer: str = "") -> Principal:
        """Whose token ``given`` is; ``ApiError`` (401, and a security event) for none or an unknown one."""
        if self.entries is None:
            return ANYONE
        found = None if given is None else self.entries.get(hashlib.sha256(given).digest())
        if found is None:
            security_event(log, "auth_failed", f"a request {'without a' if given is None else 'with an unknown'} "
                                               f"token refused{f' from {peer}' if peer else ''}", peer=peer)
            raise ApiError(401, "HTTPUnauthorized", "X-Auth-Token: a valid token is required.")
        return found

    def admin(self, given: bytes | None, peer: str = "") -> Principal:
        """As ``who``, and 403 for a member (the fabric view, the schedule, metrics: an operator's)."""
        principal = self.who(given, peer)
        if not principal.admin:
            raise ApiError(403, "HTTPForbidden", "an admin's token is needed: this is the operator's view of the "
                                                 "whole fabric")
        return principal


def visible(principal: Principal, record: dict[str, Any]) -> bool:
    return principal.admin or record.get("project_id") == principal.project


def owned(principal: Principal, records: dict[str, dict[str, Any]], kind: str, ident: str) -> None:
    """404 (Neutron's) unless ``ident`` is a record of ``kind`` the principal may see."""
    record = records.get(ident)
    if record is None or not visible(principal, record):
        error, what = NOT_FOUND[kind]
        raise not_found(error, what, ident)


def scoped(principal: Principal, snapshot: Any, kind: str, body: dict[str, Any], creating: bool = True
           ) -> dict[str, Any]:
    """A member's body in its own project (403 naming another project), every id it names visible (404)."""
    if principal.admin:
        return body
    for field in ("project_id", "tenant_id"):
        if body.get(field) not in (None, principal.project):
            raise ApiError(403, "HTTPForbidden", f"{field}: a member makes resources in its own project "
                                                 f"({principal.project}) only")
    if kind == "ports":
        taken_by_others(principal, snapshot, body)
    if kind == "flow_classifiers" and creating and not body.get("logical_source_port"):
        raise ApiError(403, "HTTPForbidden", "logical_source_port: a member's classifier starts at one of its own "
                                             "ports (a prefix alone could take other projects' traffic)")
    for field, collection in REFERENCES.get(kind, {}).items():
        value = body.get(field)
        names = (value if isinstance(value, list) else list(value) + [i for v in value.values() for i in v]
                 if isinstance(value, dict) else [] if value is None else [value])
        for ident in names:
            owned(principal, snapshot[collection], collection, str(ident))
    return {**body, "project_id": principal.project} if creating else body


def taken_by_others(principal: Principal, snapshot: Any, body: dict[str, Any]) -> None:
    """A member's port may not place itself on the fabric (``binding:profile`` is the admin's or the compute
    service's, as in Neutron) nor take a MAC or an address another project's port holds: either would make the
    fabric take that project's host for the member's."""
    if body.get("binding_profile"):
        raise ApiError(403, "HTTPForbidden", "binding:profile: set by an admin or the compute service, which place "
                                             "ports on the fabric")
    mac = str(body.get("mac_address") or "").lower()
    addresses = {str(ip["ip_address"]) for ip in body.get("fixed_ips") or [] if isinstance(ip, dict)
                 and ip.get("ip_address")}
    for port in snapshot["ports"].values():
        if visible(principal, port):
            continue
        if mac and str(port.get("mac_address") or "").lower() == mac:
            raise ApiError(409, "MacAddressInUse", f"mac_address: {mac} is in use by another project's port")
        held = {str(ip.get("ip_address")) for ip in port.get("fixed_ips") or []}
        if addresses & held:
            raise ApiError(409, "IpAddressAlreadyAllocated", f"fixed_ips: {sorted(addresses & held)[0]} is in use "
                                                             "by another project's port")
