"""What the operator tells the controller, and the records it keeps of what the switches did."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from srfabric.model.fabric import Fabric, Role
from srfabric.model.flow import FiveTuple
from srfabric.rules.entries import Kind, kind_of


@dataclass
class ControllerConfig:
    """What the operator tells the controller; everything else it discovers."""

    codec: str = "mac-nibble"
    steering: str = "source-routing"  # or "hop-by-hop": per-switch chain rules, for comparison
    switch_names: dict[int, tuple[str, Role]] = field(default_factory=dict)
    host_names: dict[int, str] = field(default_factory=dict)
    lldp_interval: float = 1.0
    lldp_missed: int = 3  # a link whose LLDP stops for this many intervals is down (0: only port status says so)
    reactive: bool = False  # no default routes ahead: each new IPv4 flow from a host is set up on its first packet
    flow_idle_timeout: int = 60  # seconds: a reactive entry no packet matched for this long goes (0: never)
    tt_queue: int | None = None  # every switch puts time-triggered frames in this queue (rules/time_triggered.py)
    clock: Callable[[], int] = time.perf_counter_ns
    on_synced: Callable[[Fabric], None] | None = None  # told after each sync, e.g. to keep learned hosts and links
    # Signs the LLDP frames the controller sends (``packets.lldp_frame``): one it did not sign teaches no link.
    lldp_key: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    # Signed LLDP's send time, on a clock that only goes forward (``clock`` may be the wall clock, which can step
    # back, and would make every later frame look replayed).
    lldp_clock: Callable[[], int] = time.monotonic_ns
    # A host port with a hub or a hypervisor behind it teaches several hosts; one that teaches more than this is
    # flooding ARP from made-up addresses, each of which would cost an entry at every ingress.
    max_hosts_per_port: int = 32
    gateway: str | None = None  # the address of the host that takes IPv4 to no host of the fabric (rules/gateway.py)


@dataclass(slots=True)
class FlowSetup:
    """One reactive flow setup as the controller saw it (times from the configured clock, in ns)."""

    dpid: int
    flow: FiveTuple
    received_ns: int  # the packet-in's last byte read
    header_ns: int  # computing the path and its header (or the per-switch rules)
    sent_ns: int  # the packet-out written
    bytes_up: int  # packet-in plus any barrier replies
    bytes_down: int  # flow-mods, barrier requests and the packet-out
    packet_out_bytes: int
    switches: int  # switches that received an entry
    route_searched: bool = False  # the route was not cached: header_ns includes the shortest-path search


@dataclass
class EntryStats:
    """One installed entry as the switch reports it."""

    table: int
    priority: int
    cookie: int
    packets: int
    bytes: int

    @property
    def kind(self) -> Kind | None:
        return kind_of(self.cookie)
