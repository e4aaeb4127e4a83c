"""How each header codec looks as flow entries: write, read, strip and spot a header.

``NibbleRules`` is the TSN paper's scheme (Fig. 4 and 6): the ingress sets the
source MAC; a transit switch matches the hop-count nibble, loads the count
minus one into it and outputs to the port held in nibble ``count - 1``.
``MplsRules`` is the SFC paper's header: VLAN + MPLS pushed, the destination
MAC overwritten, the MPLS TTL matched as the pointer and decremented.
"""

from __future__ import annotations

from typing import Protocol

from srfabric.codecs.mac_nibble import COUNT_SHIFT, MAX_HOPS, MacNibbleCodec
from srfabric.codecs.mac_vlan_mpls import SLOT_BITS, MacVlanMplsCodec, slot_location
from srfabric.rules.entries import (
    Action,
    LoadBits,
    Match,
    MoveBits,
    Output,
    OutputBits,
    PopMpls,
    PopVlan,
    PushMpls,
    PushVlan,
    SetField,
    SetMplsTtl,
    match,
)
from srfabric.rules.pipeline import IPV4_ETHERTYPE, IPV6_ETHERTYPE, MPLS_ETHERTYPE

NIBBLE_MASK = 0xF << COUNT_SHIFT
VLAN_PRESENT = 0x1000
TT_PCP = 7  # 802.1Q priority of time-triggered frames
IPV6_PCP = 1  # 802.1Q priority of the pushed tag of an IPv6 frame (the label hides its ethertype)
TT_DSCP = 56  # CS7: the IPv4 counterpart of priority 7, for the header that has no priority field


def class_dscp(priority: int) -> int:
    """The DSCP that marks frames of ``priority`` inside the fabric where the header has no priority field: the
    class selector of the same number (CS7 for time-triggered frames, CS3 and CS2 for SR classes A and B).

    >>> class_dscp(7) == TT_DSCP, class_dscp(3)
    (True, 24)
    """
    return priority << 3


class CodecRules(Protocol):
    name: str
    capacity: int
    max_port: int
    rewrites_source_mac: bool

    def encapsulate(self, encoded: tuple[int, ...], first_port: int, ipv6: bool = False) -> tuple[Action, ...]:
        """Write the header (of an IPv6 frame with ``ipv6``: a header that hides the ethertype says so)."""
        ...

    def decode_steps(self) -> list[tuple[Match, tuple[Action, ...]]]: ...

    def exhausted(self) -> tuple[Match, tuple[Action, ...]]: ...

    def exhausted_ipv6(self) -> tuple[Match, tuple[Action, ...]] | None:
        """The exhausted header of an IPv6 frame, where its strip differs (an entry above ``exhausted``)."""
        ...

    def last_step(self, port: int, ipv6: bool = False) -> Match:
        """A header whose one port left is ``port``: what arrives at the switch of an SR-unaware function."""
        ...

    def forged(self) -> list[Match]: ...

    def marker(self, priority: int = TT_PCP) -> dict[str, int | tuple[int, int]]:
        """Match fields that tell a frame of ``priority`` (time-triggered, or an SR class) inside the fabric, on
        every hop."""
        ...

    def mark(self, actions: tuple[Action, ...], priority: int = TT_PCP) -> tuple[Action, ...]:
        """``encapsulate``'s actions with the frame marked as of ``priority``."""
        ...


class NibbleRules:
    name = "mac-nibble"
    capacity = MAX_HOPS
    max_port = 15
    rewrites_source_mac = True

    def __init__(self) -> None:
        self.codec = MacNibbleCodec()

    def encapsulate(self, encoded: tuple[int, ...], first_port: int, ipv6: bool = False) -> tuple[Action, ...]:
        header = self.codec.encode(encoded)  # the ethertype stays where it is: IPv6 needs nothing more
        return SetField("eth_src", header.eth_src), Output(first_port)

    def decode_steps(self) -> list[tuple[Match, tuple[Action, ...]]]:
        steps: list[tuple[Match, tuple[Action, ...]]] = []
        for count in range(1, MAX_HOPS + 1):
            steps.append(
                (
                    match(eth_src=(count << COUNT_SHIFT, NIBBLE_MASK)),
                    (LoadBits("eth_src", COUNT_SHIFT, 4, count - 1), OutputBits("eth_src", 4 * (count - 1), 4)),
                )
            )
        return steps

    def exhausted(self) -> tuple[Match, tuple[Action, ...]]:
        return match(eth_src=(0, NIBBLE_MASK)), ()

    def exhausted_ipv6(self) -> tuple[Match, tuple[Action, ...]] | None:
        return None

    def last_step(self, port: int, ipv6: bool = False) -> Match:
        return match(eth_src=(1 << COUNT_SHIFT | port, NIBBLE_MASK | 0xF))

    def forged(self) -> list[Match]:
        # A hop count of 1..15 in the top nibble: four masked entries cover every non-zero value.
        return [
            match(eth_src=(0x8 << COUNT_SHIFT, 0x8 << COUNT_SHIFT)),
            match(eth_src=(0x4 << COUNT_SHIFT, 0xC << COUNT_SHIFT)),
            match(eth_src=(0x2 << COUNT_SHIFT, 0xE << COUNT_SHIFT)),
            match(eth_src=(0x1 << COUNT_SHIFT, 0xF << COUNT_SHIFT)),
        ]

    def marker(self, priority: int = TT_PCP) -> dict[str, int | tuple[int, int]]:
        # The source MAC is all header: the mark rides in the IPv4 DSCP, which no hop rewrites.
        return {"eth_type": IPV4_ETHERTYPE, "ip_dscp": class_dscp(priority)}

    def mark(self, actions: tuple[Action, ...], priority: int = TT_PCP) -> tuple[Action, ...]:
        return (SetField("ip_dscp", class_dscp(priority)), *actions)


class MplsRules:
    name = "mac-vlan-mpls"
    capacity = MacVlanMplsCodec.capacity
    max_port = 255
    rewrites_source_mac = False

    def __init__(self) -> None:
        self.codec = MacVlanMplsCodec()

    def encapsulate(self, encoded: tuple[int, ...], first_port: int, ipv6: bool = False) -> tuple[Action, ...]:
        header = self.codec.encode(encoded)
        (label,) = header.labels  # pathlets never exceed the one-label capacity
        return (
            PushVlan(0x8100),
            SetField("vlan_vid", header.vlan_vid | VLAN_PRESENT),
            # The label hides the ethertype that popping it must restore: the tag's priority 1 marks IPv6. (Not
            # the label's traffic class: Open vSwitch's set_mpls_ttl at a transit switch rewrites the whole
            # label stack entry from whichever frame made its cached flow, so a mark there does not last.)
            *((SetField("vlan_pcp", IPV6_PCP),) if ipv6 else ()),
            PushMpls(MPLS_ETHERTYPE),
            SetField("mpls_label", label),
            SetMplsTtl(header.ttl),
            SetField("eth_dst", header.eth_dst),
            Output(first_port),
        )

    def _output_slot(self, slot: int) -> tuple[Action, ...]:
        pieces = slot_location(slot)
        names = {"eth_dst": "eth_dst", "vlan_vid": "vlan_tci", "mpls_label": "mpls_label"}
        if len(pieces) == 1:
            field, ofs, width = pieces[0]
            return (OutputBits(names[field], ofs, width),)
        # The slot straddles two fields: gather its bits in a register first.
        actions: list[Action] = []
        high = SLOT_BITS
        for field, ofs, width in pieces:
            high -= width
            actions.append(MoveBits(names[field], ofs, "reg0", high, width))
        actions.append(OutputBits("reg0", 0, SLOT_BITS))
        return tuple(actions)

    def decode_steps(self) -> list[tuple[Match, tuple[Action, ...]]]:
        steps: list[tuple[Match, tuple[Action, ...]]] = []
        for ttl in range(1, self.capacity + 1):
            steps.append(
                (
                    match(eth_type=MPLS_ETHERTYPE, mpls_ttl=ttl),
                    (SetMplsTtl(ttl - 1), *self._output_slot(ttl)),
                )
            )
        return steps

    def exhausted(self) -> tuple[Match, tuple[Action, ...]]:
        # Open vSwitch refuses pop_vlan unless the match says a tag is present.
        exhausted = match(eth_type=MPLS_ETHERTYPE, mpls_ttl=0, vlan_vid=(VLAN_PRESENT, VLAN_PRESENT))
        return exhausted, (PopVlan(), PopMpls(IPV4_ETHERTYPE))

    def exhausted_ipv6(self) -> tuple[Match, tuple[Action, ...]] | None:
        exhausted = match(eth_type=MPLS_ETHERTYPE, mpls_ttl=0, vlan_pcp=IPV6_PCP, vlan_vid=(VLAN_PRESENT, VLAN_PRESENT))
        return exhausted, (PopVlan(), PopMpls(IPV6_ETHERTYPE))

    def last_step(self, port: int, ipv6: bool = False) -> Match:
        ((field, ofs, width),) = slot_location(1)  # the first slot lies in one field (the destination MAC)
        return match(eth_type=MPLS_ETHERTYPE, mpls_ttl=1, vlan_vid=(VLAN_PRESENT, VLAN_PRESENT),
                     **({"vlan_pcp": IPV6_PCP} if ipv6 else {}), **{field: (port << ofs, ((1 << width) - 1) << ofs)})

    def forged(self) -> list[Match]:
        return [match(eth_type=MPLS_ETHERTYPE), match(vlan_vid=(VLAN_PRESENT, VLAN_PRESENT))]

    def marker(self, priority: int = TT_PCP) -> dict[str, int | tuple[int, int]]:
        # The pushed tag's priority bits: decode reads the VID bits only, so they survive every hop.
        return {"vlan_vid": (VLAN_PRESENT, VLAN_PRESENT), "vlan_pcp": priority}

    def mark(self, actions: tuple[Action, ...], priority: int = TT_PCP) -> tuple[Action, ...]:
        at = next(i for i, a in enumerate(actions) if isinstance(a, SetField) and a.field == "vlan_vid")
        return (*actions[: at + 1], SetField("vlan_pcp", priority), *actions[at + 1 :])


def rules_for(codec: str) -> CodecRules:
    from srfabric.errors import SrfabricError

    if codec == "mac-nibble":
        return NibbleRules()
    if codec == "mac-vlan-mpls":
        return MplsRules()
    raise SrfabricError("codec", f"unknown codec {codec!r}; choose mac-nibble or mac-vlan-mpls")
