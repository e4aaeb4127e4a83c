"""taprio through tc, with a fake runner and interface folder: refusals name the port and leave nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from srfabric.errors import ModelError
from srfabric.southbound.taprio import TaprioGates
from srfabric.tsn.gates.gcl import ClassShaper, GateEntry, PortGcl


def interfaces(root: Path, queues: dict[str, int]) -> Path:
    for name, count in queues.items():
        for index in range(count):
            (root / name / "queues" / f"tx-{index}").mkdir(parents=True)
    return root


def gcl(port: str) -> PortGcl:
    return PortGcl(port.split("-")[0], "x", port, 1000, 0, [GateEntry(2, 300), GateEntry(1, 700)])


def test_a_port_without_queues_is_refused_before_any_command(tmp_path: Path) -> None:
    ran: list[list[str]] = []
    gates = TaprioGates(lambda argv, stdin: (ran.append(argv), (0, ""))[1], interfaces(tmp_path, {"s1-eth1": 8,
                                                                                                "s2-eth1": 1}))
    with pytest.raises(ModelError, match="port s2-eth1: has 1 transmit queue"):
        gates.apply([gcl("s1-eth1"), gcl("s2-eth1")])
    assert ran == []


def test_one_batch_installs_every_port_and_frees_the_ones_left(tmp_path: Path) -> None:
    batches: list[list[str]] = []

    def runner(argv: list[str], stdin: str | None) -> tuple[int, str]:
        assert argv == ["tc", "-force", "-batch", "-"] and stdin is not None
        batches.append(stdin.splitlines())
        return 0, ""

    gates = TaprioGates(runner, interfaces(tmp_path, {"s1-eth1": 8, "s2-eth1": 8}))
    gates.apply([gcl("s1-eth1"), gcl("s2-eth1")])
    moved = PortGcl("s2", "x", "s2-eth1", 1000, 4000, [GateEntry(2, 300), GateEntry(1, 700)])  # a new base time
    gates.apply([moved])
    gates.apply([moved])  # the very list it runs: nothing to send
    assert [[line.split()[:4] for line in batch] for batch in batches] == [
        [["qdisc", "replace", "dev", "s1-eth1"], ["qdisc", "replace", "dev", "s2-eth1"]],
        [["qdisc", "replace", "dev", "s2-eth1"], ["qdisc", "del", "dev", "s1-eth1"]]]
    assert "sched-entry S 02 300 sched-entry S 01 700" in batches[0][0]
    assert sorted(gates.ports) == ["s2-eth1"]


def test_a_port_running_its_list_already_is_left_alone(tmp_path: Path) -> None:
    batches: list[list[str]] = []
    gates = TaprioGates(lambda argv, stdin: (batches.append((stdin or "").splitlines()), (0, ""))[1],
                        interfaces(tmp_path, {"s1-eth1": 8, "s2-eth1": 8}))
    gates.apply([gcl("s1-eth1"), gcl("s2-eth1")])
    wider = PortGcl("s2", "x", "s2-eth1", 1000, 0, [GateEntry(2, 400), GateEntry(1, 600)])
    gates.apply([gcl("s1-eth1"), wider])
    assert [[line.split()[3] for line in batch] for batch in batches] == [["s1-eth1", "s2-eth1"], ["s2-eth1"]]
    assert gates.ports == {"s1-eth1": gcl("s1-eth1"), "s2-eth1": wider}


def test_a_refusal_half_way_is_named_and_the_next_change_frees_what_did_get_installed(tmp_path: Path) -> None:
    batches: list[list[str]] = []

    def runner(argv: list[str], stdin: str | None) -> tuple[int, str]:
        lines = (stdin or "").splitlines()
        batches.append(lines)
        failed = [n for n, line in enumerate(lines, start=1) if "s3-eth1" in line and "replace" in line]
        return (1, "".join(f"Error: Specified qdisc kind is unknown.\nCommand failed -:{n}\n" for n in failed)) \
            if failed else (0, "")

    gates = TaprioGates(runner, interfaces(tmp_path, {"s1-eth1": 8, "s2-eth1": 8, "s3-eth1": 8}))
    with pytest.raises(ModelError, match="port s3-eth1: this kernel has no taprio"):
        gates.apply([gcl("s1-eth1"), gcl("s2-eth1"), gcl("s3-eth1")])
    gates.apply([])  # put back the state before: no gates
    assert sorted(line.split()[3] for line in batches[-1] if line.startswith("qdisc del")) == ["s1-eth1", "s2-eth1"]
    assert gates.ports == {}


def test_a_host_without_tc_is_refused_by_name(tmp_path: Path) -> None:
    gates = TaprioGates(lambda argv, stdin: (127, "tc: not found"), tmp_path)
    with pytest.raises(ModelError, match="--gates: taprio gates need tc"):
        gates.ready()


def test_a_port_with_shapers_gets_its_taprio_again_after_their_qdiscs(tmp_path: Path) -> None:
    """Grafting the classes' qdiscs under taprio stops its gate list from stepping (Linux 6.1 cancels the timer);
    the taprio sent again after them restarts it, and so does the port's next list once the shapers are gone."""
    batches: list[list[str]] = []
    gates = TaprioGates(lambda argv, stdin: (batches.append((stdin or "").splitlines()), (0, ""))[1],
                        interfaces(tmp_path, {"s1-eth1": 8}))
    (tmp_path / "s1-eth1" / "speed").write_text("10000\n")  # a veth's: the send slope is taken against it
    shaped = PortGcl("s1", "x", "s1-eth1", 1000, 0, [GateEntry(2, 300), GateEntry(1, 700)],
                     shapers=(ClassShaper(3, 15488, -984512, 500, -1492),))
    gates.apply([shaped])
    gates.apply([gcl("s1-eth1")])
    for batch in batches:
        assert "taprio" in batch[0] and batch[-1] == batch[0], batch
    assert any("cbs idleslope 15488 sendslope -9984512 " in line for line in batches[0])
    assert any(line.endswith("parent 100:1 pfifo") for line in batches[1])  # the default child back
