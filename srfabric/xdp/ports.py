"""The XDP agent's ports: as given on its command line, and the ``ip`` command that attaches a program to one."""

from __future__ import annotations

from pathlib import Path

from srfabric.codecs.macaddr import mac_from_str
from srfabric.errors import SrfabricError


def attach_command(ifname: str, program: Path | None) -> list[str]:
    """``ip`` attaching a pinned program in native mode (None detaches).

    >>> attach_command("s1-eth1", None)
    ['ip', 'link', 'set', 'dev', 's1-eth1', 'xdpdrv', 'off']
    """
    if program is None:
        return ["ip", "link", "set", "dev", ifname, "xdpdrv", "off"]
    return ["ip", "-force", "link", "set", "dev", ifname, "xdpdrv", "pinned", str(program)]


def parse_port(text: str) -> tuple[int, str]:
    """``3=s1-eth3`` -> (3, "s1-eth3").

    >>> parse_port("3=s1-eth3")
    (3, 's1-eth3')
    """
    number, _, name = text.partition("=")
    if not number.isdigit() or not name or not 1 <= int(number) <= 255:
        raise SrfabricError("port", f"{text!r} is not NUMBER=INTERFACE with a number in 1..255")
    return int(number), name


def carrier_of(ifname: str) -> bool:
    """Whether ``ifname`` has carrier (False for one that is down)."""
    try:
        return Path(f"/sys/class/net/{ifname}/carrier").read_text().strip() == "1"
    except OSError:  # reading carrier of an interface that is down fails
        return False


def mac_of(ifname: str) -> int:
    """``ifname``'s MAC address."""
    return mac_from_str(Path(f"/sys/class/net/{ifname}/address").read_text().strip(), ifname)
