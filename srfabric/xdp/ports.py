"""The XDP agent's ports: as given on its command line, and the ``ip`` command that attaches a program to one."""

from __future__ import annotations

from pathlib import Path

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
