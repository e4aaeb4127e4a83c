"""A certificate authority for one fabric, and the certificates of its controller and switches (Python's
``cryptography``), so that OpenFlow runs over mutually authenticated TLS without a new user making anything.

A switch's certificate names the datapath ids it may claim, as subjectAltName URIs ``urn:srfabric:dpid:<16 hex
digits>``. One Open vSwitch daemon has one certificate for all its bridges (``ovs-vsctl set-ssl``), so a lab
whose bridges share a daemon gives that certificate every bridge's dpid.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> ca = make_ca(folder)
>>> switch = make_certificate(folder, ca, "ovs-lab", dpids=[0x101, 0x102])
>>> sorted(f"{d:#x}" for d in dpids_of(x509.load_pem_x509_certificate(switch.cert.read_bytes())))
['0x101', '0x102']
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DPID_URI = "urn:srfabric:dpid:"
VALID = datetime.timedelta(days=825)


@dataclass(frozen=True)
class Issued:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write(folder: Path, name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> Issued:
    folder.mkdir(parents=True, exist_ok=True)
    issued = Issued(folder / f"{name}-cert.pem", folder / f"{name}-privkey.pem")
    issued.key.unlink(missing_ok=True)
    with os.fdopen(os.open(issued.key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:  # never readable
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    issued.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return issued


def make_ca(folder: Path, name: str = "srfabric fabric CA") -> Issued:
    """A self-signed CA (``ca-cert.pem``, ``ca-privkey.pem``) in ``folder``."""
    key = _key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALID)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(key, hashes.SHA256()))
    return _write(folder, "ca", cert, key)


def make_certificate(folder: Path, ca: Issued, name: str, dpids: Sequence[int] = (),
                     hosts: Sequence[str] = ("127.0.0.1",), listens: bool = False) -> Issued:
    """A certificate signed by ``ca`` for ``name``: a switch's (``dpids`` it may claim, and no address) or the
    controller's (``hosts``: the addresses switches reach it at).

    Its extended key usage says which end of a TLS connection it may be. A switch's is a client's, or with
    ``listens`` (a switch the controller dials, ``serve --dial``) a server's only, so that no switch's
    certificate can dial another switch as its controller. The controller's is both: it takes switches in and
    dials the switches that listen."""
    import ipaddress

    ca_key = serialization.load_pem_private_key(ca.key.read_bytes(), None)
    ca_cert = x509.load_pem_x509_certificate(ca.cert.read_bytes())
    key = _key()
    names: list[x509.GeneralName] = [x509.UniformResourceIdentifier(f"{DPID_URI}{dpid:016x}") for dpid in dpids]
    for host in () if dpids else hosts:  # a switch names no address: it cannot pass as the controller anywhere
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    now = datetime.datetime.now(datetime.UTC)
    usage = ([ExtendedKeyUsageOID.SERVER_AUTH if listens else ExtendedKeyUsageOID.CLIENT_AUTH] if dpids
             else [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH])
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALID)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
            .sign(ca_key, hashes.SHA256()))  # type: ignore[arg-type]
    return _write(folder, name, cert, key)


def may_dial(cert_path: Path) -> bool:
    """Whether the certificate at ``cert_path`` may be a TLS client (extended key usage clientAuth, or none), as
    dialing switches that listen needs of the controller's."""
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    try:
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True
    return ExtendedKeyUsageOID.CLIENT_AUTH in usages


def dpids_of(cert: x509.Certificate) -> set[int]:
    """The datapath ids a switch's certificate lets it claim."""
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    out = set()
    for uri in names.get_values_for_type(x509.UniformResourceIdentifier):
        if uri.startswith(DPID_URI):
            try:
                out.add(int(uri[len(DPID_URI):], 16))
            except ValueError:
                continue
    return out
