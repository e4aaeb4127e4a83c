"""``/metrics`` in Prometheus' text format (prometheus_client), in the manner of faucet's exporter: what an
operator watches and alerts on. The figures are read from the controller and the API's state when Prometheus
scrapes, so nothing on the switches' path counts for it.

Exported (``srfabric_`` first):
- ``switches_connected``; ``flow_mods_sent_total`` by switch and by entry kind (group-mods included, kind
  ``group``); ``packet_ins_total``; ``switch_connections_refused_total`` by reason;
- ``hosts_refused_total`` by switch and port (ARP past ``--max-hosts-per-port``); ``lldp_refused_total`` by
  reason (signed LLDP stale or replayed);
- ``reactive_setup_seconds``: a histogram of reactive flow setups, from the packet-in read to the packet-out
  written (over the last 100,000 setups, the controller's record);
- ``sync_seconds``: a histogram of syncs that sent anything, from the plan to the last switch's barrier reply
  (over the last 10,000);
- ``port_chains``, ``streams``, ``unrouted`` (what the controller could not route now, chains and streams);
- ``gate_schedule_changes_total``; ``leader_generation`` (with a controller pair);
- ``gptp_synced`` and ``gptp_offset_nanoseconds`` by bridge, when srfabric watches gPTP;
- ``frer_rx_passed_pkts`` ... ``frer_rx_resets``: each admitted stream's sequence-recovery counters (802.1CB) by
  stream (its id) and interface, as its eliminator last reported them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from srfabric.api.service import SfcService
    from srfabric.controller.core import ControllerCore

# Reactive setup: from a fraction of a millisecond to a second.
SETUP_BUCKETS_S = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1, 1.0)
# A sync: one switch's few entries to a whole fabric's tables.
SYNC_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0)


def histogram(name: str, doc: str, samples_s: list[float], buckets: tuple[float, ...]) -> HistogramMetricFamily:
    """A histogram family from raw samples (seconds)."""
    counts, total = [], 0
    for bound in buckets:
        total = sum(1 for sample in samples_s if sample <= bound)
        counts.append((str(bound), total))
    counts.append(("+Inf", len(samples_s)))
    return HistogramMetricFamily(name, doc, buckets=counts, sum_value=sum(samples_s))


class FabricCollector(Collector):
    def __init__(self, service: SfcService) -> None:
        self.service = service

    def collect(self) -> Iterator[Metric]:
        service, controller = self.service, self.service.controller
        names = {dpid: switch.name for dpid, switch in controller.fabric.switches.items()}
        connected = GaugeMetricFamily("srfabric_switches_connected", "Switches connected over OpenFlow")
        connected.add_metric([], len(controller.switches))
        yield connected
        sent = CounterMetricFamily("srfabric_flow_mods_sent", "Flow-mods and group-mods sent, by switch",
                                   labels=["switch"])
        for dpid, count in sorted(controller.flow_mods.items()):
            sent.add_metric([names.get(dpid, f"{dpid:#x}")], count)
        yield sent
        kinds = CounterMetricFamily("srfabric_flow_mods_by_kind", "Flow-mods and group-mods sent, by switch and "
                                    "entry kind", labels=["switch", "kind"])
        for (dpid, kind), count in sorted(controller.flow_mod_kinds.items()):
            kinds.add_metric([names.get(dpid, f"{dpid:#x}"), kind], count)
        yield kinds
        packet_ins = CounterMetricFamily("srfabric_packet_ins", "Packet-ins read from the switches")
        packet_ins.add_metric([], controller.channels.packet_ins)
        yield packet_ins
        refused = CounterMetricFamily("srfabric_switch_connections_refused", "Switch connections that ended before "
                                      "the switch was taken, by why", labels=["reason"])
        for reason, count in sorted(controller.server.refused.items()):
            refused.add_metric([reason], count)
        yield refused
        yield from learning_refusals(controller.core, names)
        setups = [(s.sent_ns - s.received_ns) / 1e9 for s in list(controller.setups)]
        yield histogram("srfabric_reactive_setup_seconds", "Reactive setup, packet-in read to packet-out written",
                        setups, SETUP_BUCKETS_S)
        yield histogram("srfabric_sync_seconds", "Syncs that sent anything, plan to the last barrier reply",
                        list(controller.sync_seconds), SYNC_BUCKETS_S)
        for name, doc, value in (
                ("srfabric_port_chains", "Port chains the API holds", len(service.snapshot["port_chains"])),
                ("srfabric_streams", "Time-sensitive streams admitted", len(service.snapshot["streams"])),
                ("srfabric_unrouted", "Chains and streams the controller cannot route now",
                 len(controller.problems))):
            gauge = GaugeMetricFamily(name, doc)
            gauge.add_metric([], value)
            yield gauge
        changes = CounterMetricFamily("srfabric_gate_schedule_changes", "Gate schedules sent (all gated ports at "
                                      "one base time each)")
        changes.add_metric([], service.streams.gate_changes)
        yield changes
        if service.leadership is not None and service.leadership.generation is not None:
            generation = GaugeMetricFamily("srfabric_leader_generation", "The leader's generation (controller pair)")
            generation.add_metric([], service.leadership.generation)
            yield generation
        if service.streams.clocks is not None:
            synced = GaugeMetricFamily("srfabric_gptp_synced", "1 while the bridge follows its grandmaster within "
                                       "the bound", labels=["bridge"])
            offset = GaugeMetricFamily("srfabric_gptp_offset_nanoseconds", "The bridge's offset from its "
                                       "grandmaster", labels=["bridge"])
            for bridge, state in sorted(service.streams.clocks.states.items()):
                synced.add_metric([bridge], 1 if state.synced else 0)
                if state.offset_ns is not None:
                    offset.add_metric([bridge], state.offset_ns)
            yield synced
            yield offset
        yield from frer_counters(service)
        yield from psfp_counters(service)


def learning_refusals(core: ControllerCore, names: dict[int, str]) -> Iterator[Metric]:
    """What host learning and link discovery refused: ARP past a port's hosts' cap, LLDP stale or replayed."""
    hosts = CounterMetricFamily("srfabric_hosts_refused", "ARP refused on a port that taught its cap of hosts",
                                labels=["switch", "port"])
    for (dpid, port), count in sorted(core.hosts.refused.items()):
        hosts.add_metric([names.get(dpid, f"{dpid:#x}"), str(port)], count)
    yield hosts
    lldp = CounterMetricFamily("srfabric_lldp_refused", "Signed LLDP refused, by why (stale, replayed)",
                               labels=["reason"])
    for reason, count in sorted(core.links.refused.items()):
        lldp.add_metric([reason], count)
    yield lldp


def frer_counters(service: SfcService) -> Iterator[Metric]:
    """The eliminators' counters of the admitted streams, one family per ``ieee802-dot1cb-frer`` leaf."""
    from srfabric.api.streams.frer_counters import stream_ends
    from srfabric.tsn.model.frer import COUNTERS

    snapshot = service.snapshot
    ends = stream_ends(list(snapshot["streams"].values()), snapshot["ports"])
    families = {leaf: CounterMetricFamily(f"srfabric_frer_{leaf.replace('-', '_')}", f"802.1CB sequence recovery: "
                                          f"{leaf}, by stream and the eliminator's interface",
                                          labels=["stream", "interface"]) for leaf in COUNTERS.values()}
    for (interface, stream), counts in service.streams.frer.totals(ends).items():
        for leaf, family in families.items():
            family.add_metric([stream.ident, interface], counts[leaf])  # ids: names need not be unique
    yield from families.values()


def psfp_counters(service: SfcService) -> Iterator[Metric]:
    """The edges' per-stream policing counters, one family per ``ieee802-dot1q-psfp`` stream filter leaf."""
    from srfabric.tsn.protect.policing import COUNTERS

    names = {record["stream_id"]: record["id"] for record in service.snapshot["streams"].values()}
    families = {leaf: CounterMetricFamily(f"srfabric_psfp_{leaf.removesuffix('-count').replace('-', '_')}",
                                          f"802.1Qci per-stream filtering and policing: {leaf}, by edge and stream",
                                          labels=["bridge", "stream"]) for leaf in COUNTERS}
    book = service.streams.psfp
    for bridge in sorted(book.reports):
        for handle, counts in sorted(book.counters(bridge).items()):
            for leaf, family in families.items():
                family.add_metric([bridge, names.get(handle, str(handle))], counts[leaf])
    yield from families.values()
