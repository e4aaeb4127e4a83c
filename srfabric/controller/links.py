"""Links and ports as the switches report them: LLDP both ways makes a fabric link, LLDP that stops or a
carrier that goes takes it down, and a service function whose port loses its carrier leaves its group's load
balancing. Each handler changes the fabric and says (``Effects``) whether the tables need a sync. Pure: no I/O.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Collection

from srfabric.controller.config import ControllerConfig
from srfabric.controller.flows import Link, ReactiveFlows
from srfabric.controller.outbox import Effects
from srfabric.controller.packets import parse_lldp
from srfabric.errors import DecodingError
from srfabric.model.fabric import Fabric, ServiceFunction

log = logging.getLogger("srfabric.controller.controller")  # one logger for the controller's own story


class LinkWatch:
    """When LLDP last arrived on each port, and the ports waiting for it."""

    def __init__(self, fabric: Fabric, config: ControllerConfig, flows: ReactiveFlows) -> None:
        self.fabric = fabric
        self.config = config
        self.flows = flows
        self.seen: dict[Link, int] = {}  # switch port -> when LLDP last arrived on it (clock ns)
        self.ticks: deque[int] = deque(maxlen=max(config.lldp_missed, 0) + 1)  # the last aging rounds (clock ns)
        self.aged: dict[frozenset[Link], int] = {}  # links taken down for silence -> when
        # Ends of links taken down for silence: not fabric ports, but no host is learned on them and nothing is
        # flooded out of them (a link that still carries frames one way would teach hosts in the wrong place),
        # until LLDP both ways brings the link back or the carrier goes down.
        self.quarantine: set[Link] = set()
        self.dormant_up: dict[Link, int] = {}  # a dormant link's port -> when its carrier came back
        self.down_ports: set[Link] = set()  # service functions' ports whose carrier is down
        self.newest: dict[Link, int] = {}  # the sending port of signed LLDP -> the send time last taken from it
        self.refused: Counter[str] = Counter()  # LLDP refused as stale or replayed

    def _fresh(self, peer: Link, sent_ns: int) -> None:
        """Refuse (``DecodingError``, counted by reason) a signed frame older than the link's aging allows, with
        two intervals' margin for a controller behind on its packet-ins, or not newer than the last one taken from
        the same port: a switch that captured one replays it late or twice."""
        config = self.config
        limit_ns = int(config.lldp_interval * (max(config.lldp_missed, 1) + 2) * 1e9)
        age_ns = config.lldp_clock() - sent_ns
        if age_ns > limit_ns or age_ns < -limit_ns:
            self.refused["stale"] += 1
            when = f"{age_ns / 1e6:.1f} ms old" if age_ns > 0 else f"{-age_ns / 1e6:.1f} ms ahead of the clock"
            raise DecodingError("lldp", f"from {peer[0]:#x}:{peer[1]}: {when}, past the {limit_ns / 1e6:g} ms that "
                                        "lldp_interval x (lldp_missed + 2) allows")
        if sent_ns <= self.newest.get(peer, -1):
            self.refused["replayed"] += 1
            raise DecodingError("lldp", f"from {peer[0]:#x}:{peer[1]}: sent at {sent_ns} ns, not after the last "
                                        "taken from that port (a replay)")
        self.newest[peer] = sent_ns

    def lldp_in(self, dpid: int, in_port: int, data: bytes) -> Effects:
        peer_dpid, peer_port, sent_ns = parse_lldp(data, self.config.lldp_key)
        peer = (peer_dpid, peer_port)
        self._fresh(peer, sent_ns)
        here = (dpid, in_port)
        fabric = self.fabric
        functions = fabric.function_ports()
        if peer[0] not in fabric.switches or here in functions or peer in functions:
            return Effects()
        if fabric.host_at(here) is not None or fabric.host_at(peer) is not None:
            return Effects()  # a port with a learned host never becomes a trusted fabric port
        self.seen[here] = self.config.clock()
        if fabric.links.get(here) == peer:
            return Effects()
        pair = frozenset((here, peer))
        aged = self.aged.get(pair)
        if aged is not None:  # it went silent in one direction: one direction heard again is not enough
            if self.seen.get(peer, -1) < aged:
                return Effects()
            del self.aged[pair]
            self.quarantine -= pair
        else:
            self.seen.pop(peer, None)  # the other direction's time starts now, not at an old sighting
        for known in (here, peer):
            self.dormant_up.pop(known, None)
        log.info("link %#x:%d - %#x:%d is up (%s)", *peer, *here, "LLDP both ways" if aged else "LLDP")
        fabric.add_link(peer, here)
        return Effects(sync=True)

    def heard_one_way(self, here: tuple[int, int]) -> bool:
        """Whether ``here`` is an end of a link that went silent and is now heard from its other end only."""
        return any(here in pair for pair in self.aged) and self.fabric.links.get(here) is None

    def age(self, now_ns: int, connected: Collection[int]) -> list[Link]:
        """Take down every link between connected switches on whose either end no LLDP arrived for
        ``lldp_missed`` rounds (a link first looked at gets the whole time); the ends taken down. Called once a
        round, just before that round's LLDP goes out."""
        missed = self.config.lldp_missed
        if missed <= 0:
            return []
        fabric = self.fabric
        # LLDP goes out at each tick: a controller whose loop stalled sent none meanwhile, so silence counts in
        # rounds sent, not in wall time (a sync that blocks for seconds must not take the fabric's links down).
        # An end is down when nothing came since the round ``missed`` rounds ago; none is before that many.
        self.ticks.append(now_ns)
        if len(self.ticks) <= missed:
            return []
        horizon = self.ticks[0]
        down = []
        for end, peer in list(fabric.links.items()):
            if end[0] not in connected or peer[0] not in connected or end not in fabric.links:
                continue  # a switch not connected sends no LLDP; its links go with its connection
            if self.seen.setdefault(end, now_ns) < horizon:
                log.warning("link %#x:%d - %#x:%d is down: no LLDP for %d intervals", *peer, *end,
                            self.config.lldp_missed)
                fabric.remove_link(end)
                self.flows.forget_over({end, peer})
                self.aged[frozenset((end, peer))] = now_ns
                self.quarantine |= {end, peer}
                for gone in (end, peer):
                    self.seen.pop(gone, None)
                down.append(end)
        for end, since in list(self.dormant_up.items()):  # carrier back, but no LLDP: not a fabric link now
            if end not in fabric.dormant:
                del self.dormant_up[end]
            elif since < horizon:
                log.warning("port %#x:%d is up without LLDP: no longer a fabric port", *end)
                fabric.remove_link(end)
                del self.dormant_up[end]
                down.append(end)
        return down

    def port_status(self, dpid: int, port: int, deleted: bool, down: bool, live: bool = True) -> Effects:
        """A port went away (its link is forgotten), lost its carrier or was set down (its link is suspended: no
        path uses it, the ports stay trusted, so the switches at its ends need no change) or is live again (a
        dormant link waits for LLDP, and is forgotten if none comes; ``age``). A report that is neither
        (Open vSwitch sends one as a port goes down, before the carrier is gone) changes nothing."""
        end = (dpid, port)
        fabric = self.fabric
        function = fabric.function_ports().get(end)
        if function is not None:  # a function's port: its pair leaves (or rejoins) its group's load balancing
            if not (deleted or down or live):
                return Effects()
            (self.down_ports.add if deleted or down else self.down_ports.discard)(end)
            up = self.ports_up(function)
            if (function.name in fabric.functions_down) == up:
                log.warning("service function %s is %s", function.name,
                            "up again" if up else "down (a port lost its carrier)")
            fabric.set_function_up(function.name, up)
            return Effects(sync=True, urgent=not up)
        peer = fabric.links.get(end)
        urgent = False
        if deleted or down:  # what the port was is open again; a wait for LLDP after an earlier return is over
            self.quarantine.discard(end)
            for known in (end, peer, fabric.dormant.get(end)):
                if known is not None:
                    self.dormant_up.pop(known, None)
            if peer is not None:
                self.flows.forget_over({end, peer})
                if not deleted:
                    log.warning("link %#x:%d - %#x:%d is down: the port lost its carrier", *end, *peer)
            (fabric.remove_link if deleted else fabric.suspend_link)(end)
            urgent = True
        elif end in fabric.dormant and live:
            if self.config.lldp_missed <= 0:
                fabric.remove_link(end)  # nothing would time out the wait for LLDP: LLDP re-adds it
            else:
                self.dormant_up.setdefault(end, self.config.clock())
        return Effects(sync=True, urgent=urgent)

    def ports_up(self, function: ServiceFunction) -> bool:
        return function.ingress not in self.down_ports and function.egress not in self.down_ports

    def switch_gone(self, dpid: int) -> None:
        """A switch's connection ended: its links go, and what its ports said while it was here is forgotten (a
        suspended link, a function port down); LLDP and port status say it again once it is back."""
        fabric = self.fabric
        lost = {end for pair in fabric.links.items() for end in pair if pair[0][0] == dpid}
        self.flows.forget_over(lost)
        for end in [end for end in fabric.links if end[0] == dpid]:
            fabric.remove_link(end)
        for end in [end for end in self.seen if end[0] == dpid]:
            del self.seen[end]
        for end in [end for end in fabric.dormant if end[0] == dpid]:
            fabric.remove_link(end)
        self.down_ports = {end for end in self.down_ports if end[0] != dpid}
        for function in fabric.functions.values():
            if self.ports_up(function):
                fabric.set_function_up(function.name, True)
        self.quarantine = {end for end in self.quarantine if end[0] != dpid}
