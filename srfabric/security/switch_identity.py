"""Who may be a switch: over TLS (``srfabric serve --openflow-tls DIR``) a switch shows a certificate of the
fabric's CA (``pki``) that names the datapath ids it may claim. After the OpenFlow handshake the dpid it claimed is
checked against them, and a second connection for a connected dpid must show the same certificate: otherwise the
connection is refused, and the refusal is logged and counted."""

from __future__ import annotations

import hashlib
import ssl
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from cryptography import x509

from srfabric.security.pki import dpids_of


class Peer(Protocol):
    dpid: int

    @property
    def writer(self) -> object: ...


def server_context(folder: Path) -> ssl.SSLContext:
    """TLS for the OpenFlow server from ``folder`` (``ca-cert.pem``, ``controller-cert.pem``,
    ``controller-privkey.pem``): its own certificate, and switches' certificates required and checked."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_cert_chain(folder / "controller-cert.pem", folder / "controller-privkey.pem")
    context.load_verify_locations(folder / "ca-cert.pem")
    return context


def client_context(folder: Path, name: str) -> ssl.SSLContext:
    """TLS for a switch of ``folder``'s fabric (the XDP agent's, or a test's): its certificate ``name``, and the
    controller's checked against the CA and the address connected to (``srfabric pki init --host``): a switch's
    certificate, of the same CA but naming no address, cannot pose as the controller."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_cert_chain(folder / f"{name}-cert.pem", folder / f"{name}-privkey.pem")
    context.load_verify_locations(folder / "ca-cert.pem")
    return context


def dialing_context(folder: Path) -> ssl.SSLContext:
    """TLS for dialing switches that listen (``serve --dial``): the controller's certificate, and the switch's
    checked against the CA. A switch names datapath ids, not an address: who it may be is checked after the
    OpenFlow handshake (``refusal``), as for a switch that connects."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.load_cert_chain(folder / "controller-cert.pem", folder / "controller-privkey.pem")
    context.load_verify_locations(folder / "ca-cert.pem")
    return context


def peer_certificate(peer: Peer) -> bytes | None:
    """The DER certificate the peer showed; None over plain TCP."""
    get = getattr(peer.writer, "get_extra_info", None)
    tls = get("ssl_object") if get is not None else None
    return None if tls is None else tls.getpeercert(binary_form=True)


def refusal(peer: Peer, connected: Iterable[Peer]) -> str | None:
    """Why ``peer`` may not be the switch it claims to be; None when it may (or is not on TLS)."""
    der = peer_certificate(peer)
    if der is None:
        return None
    cert = x509.load_der_x509_certificate(der)
    allowed = dpids_of(cert)
    if peer.dpid not in allowed:
        named = ", ".join(f"{dpid:#x}" for dpid in sorted(allowed)) or "none"
        return f"claims dpid {peer.dpid:#x}, but its certificate ({cert.subject.rfc4514_string()}) names {named}"
    mine = hashlib.sha256(der).hexdigest()
    for other in connected:
        if other is not peer and other.dpid == peer.dpid:
            theirs = peer_certificate(other)
            if theirs is not None and hashlib.sha256(theirs).hexdigest() != mine:
                return f"dpid {peer.dpid:#x} is connected already with another certificate"
    return None
