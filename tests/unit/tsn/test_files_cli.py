"""Input files (JSON and tsnkit CSV), the slot model, tsnkit export and the ``srfabric tsn`` commands."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from srfabric.cli import main
from srfabric.errors import ModelError
from srfabric.tsn.formats.files import network_from_json, network_to_json, streams_from_json, streams_to_json
from srfabric.tsn.formats.generators import erdos_renyi, random_streams, waxman
from srfabric.tsn.formats.tsnkit import network_from_tsnkit, schedule_to_tsnkit, streams_from_tsnkit
from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.slots import SlotModel, plan
from srfabric.tsn.schedulers.registry import schedule_slots as schedule

from .cases import dumbbell

TOPOLOGY = {
    "nodes": [{"id": "h1", "kind": "host"}, {"id": "s1", "kind": "switch"}, {"id": "h2", "kind": "host"}],
    "links": [{"a": "h1", "b": "s1", "rate_bps": 1_000_000_000}, {"a": "s1", "b": "h2", "rate_bps": 1_000_000_000}],
}
FLOWS = {"flows": [{"id": "f1", "src": "h1", "dst": "h2", "period_ns": 1_000_000, "size_bytes": 1500}]}


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: t["nodes"][0].update(kind="router"), "nodes[0].kind: must be one of host, switch"),
        (lambda t: t["links"][1].update(rate_bps=-1), "links[1].rate_bps: must be an integer > 0"),
        (lambda t: t["links"][0].update(b="s9"), "links[0]: node 's9' is not in nodes"),
        (lambda t: t["links"].append({"a": "h1", "b": "h2"}), "links[2]: two hosts cannot be linked"),
        (lambda t: t["nodes"].append({"id": "h1", "kind": "host"}), "nodes[3].id: 'h1' is used twice"),
        (lambda t: t["links"][0].pop("a"), "links[0].a: is required"),
    ],
)
def test_topology_errors_name_the_field(mutate, message: str) -> None:
    document = json.loads(json.dumps(TOPOLOGY))
    mutate(document)
    with pytest.raises(ModelError, match=message.replace("[", r"\[").replace("]", r"\]")):
        network_from_json(document)


def test_json_round_trip() -> None:
    network = network_from_json(TOPOLOGY)
    assert network_to_json(network_from_json(network_to_json(network))) == network_to_json(network)
    streams = streams_from_json(FLOWS)
    assert streams_from_json(streams_to_json(streams)) == streams


def test_slot_model_matches_the_papers_fifty_slots() -> None:
    network = network_from_json(TOPOLOGY)
    problem = plan(network, streams_from_json(FLOWS))
    assert problem.slot_ns == 12_336 + 8 * 1050 and problem.slots == 48
    store = plan(network, streams_from_json(FLOWS), model=SlotModel(store_and_forward=True))
    assert store.slots == 1_000_000 // (8 * (12_336 + 1050))
    with pytest.raises(ModelError, match="slots: 60 slots of 16666 ns do not fit"):
        plan(network, streams_from_json(FLOWS), slots=60)
    odd = [Stream("f1", "h1", "h2", period_ns=1_500_000)]
    with pytest.raises(ModelError, match=r"flows\[0\].period_ns: 1500000 is not a multiple of the base period"):
        plan(network, odd, base_period_ns=1_000_000)


def test_tsnkit_import() -> None:
    rows = ["link,q_num,rate,t_proc,t_prop"]
    for u, v in ((0, 3), (1, 3), (3, 4), (2, 4)):
        rows += [f'"({u}, {v})",8,1,2000,0', f'"({v}, {u})",8,1,2000,0']
    network = network_from_tsnkit("\n".join(rows) + "\n")
    assert network.hosts == ["0", "1", "2"] and network.switches == ["3", "4"]
    assert network.links[0].rate_bps == 1_000_000_000 and network.links[0].t_proc_ns == 2000
    streams = streams_from_tsnkit("stream,src,dst,size,period,deadline,jitter\n0,0,[2],50,2000000,2000000,2000000\n")
    assert streams == [Stream("0", "0", "2", 2_000_000, 50, 2_000_000, 2_000_000)]
    with pytest.raises(ModelError, match=r"streams\[0\].dst: must list exactly one node"):
        streams_from_tsnkit('stream,src,dst,size,period,deadline,jitter\n0,0,"[1, 2]",50,2000000,2000000,2000000\n')
    with pytest.raises(ModelError, match="topology: header must be"):
        network_from_tsnkit("a,b\n1,2\n")


def test_tsnkit_export_lists_routes_offsets_and_windows() -> None:
    network = dumbbell(2)
    streams = [Stream("F1", "A1", "B1", period_ns=1_000_000), Stream("F2", "A2", "B2", period_ns=2_000_000)]
    result = schedule(plan(network, streams, slots=4), "spr")
    files = schedule_to_tsnkit(result)
    number = {name: index for index, name in enumerate(network.kinds)}
    routes = list(csv.DictReader(io.StringIO(files["ROUTE"])))
    assert {r["stream"] for r in routes} == {"0", "1"}  # F1 and F2, numbered in file order
    assert [r["link"] for r in routes if r["stream"] == "0"] == [
        str((number[u], number[v])) for u, v in (("A1", "S1"), ("S1", "S2"), ("S2", "B1"))
    ]
    offsets = list(csv.DictReader(io.StringIO(files["OFFSET"])))
    first = [o for o in offsets if o["stream"] == "0"]
    assert len(first) == 2 and first[0]["offset"] == first[1]["offset"]  # two frames in the 2 ms cycle, same offset
    assert int(first[0]["offset"]) < 1_000_000
    windows = list(csv.DictReader(io.StringIO(files["GCL"])))
    assert windows and all(w["cycle"] == "2000000" and int(w["end"]) > int(w["start"]) for w in windows)
    assert files["QUEUE"].startswith("stream,frame,link,queue\n")


def test_generators_are_seeded_and_sized() -> None:
    one, two = erdos_renyi(6, 24, 38, seed=5), erdos_renyi(6, 24, 38, seed=5)
    assert network_to_json(one) == network_to_json(two) and len(one.links) == 38
    big = waxman(10, 200, links=256, seed=0)
    assert len(big.links) == 256 and len(big.switches) == 10
    assert random_streams(one, 10, seed=2) == random_streams(two, 10, seed=2)
    with pytest.raises(ModelError, match="links: 6 switches take 5..15 links"):
        erdos_renyi(6, 24, 50)


def _files(tmp_path: Path) -> tuple[str, str]:
    topology, flows = tmp_path / "topo.json", tmp_path / "flows.json"
    topology.write_text(json.dumps(TOPOLOGY))
    flows.write_text(json.dumps(FLOWS))
    return str(topology), str(flows)


def test_schedule_command_prints_the_documented_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topology, flows = _files(tmp_path)
    out = tmp_path / "kit"
    assert main(["tsn", "schedule", "--topology", topology, "--flows", flows, "--method", "sur", "--json",
                 "--tsnkit-out", str(out)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert {"method", "slots", "slot_ns", "base_period_ns", "build_s", "solve_s", "scheduled", "unscheduled"} <= set(
        document
    )
    assert document["scheduled"] == [{"id": "f1", "slot": 0, "phase": 0, "path": ["h1", "s1", "h2"], "offset_ns": 0}]
    assert sorted(p.name for p in out.iterdir()) == [
        "srfabric-GCL.csv", "srfabric-OFFSET.csv", "srfabric-QUEUE.csv", "srfabric-ROUTE.csv", "srfabric-ids.csv",
        "srfabric-task.csv"
    ]


def test_gcl_command_from_a_saved_schedule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topology, flows = _files(tmp_path)
    main(["tsn", "schedule", "--topology", topology, "--flows", flows, "--slots", "4", "--json"])
    saved = tmp_path / "schedule.json"
    saved.write_text(capsys.readouterr().out)
    assert main(["tsn", "gcl", "--topology", topology, "--flows", flows, "--schedule", str(saved)]) == 0
    commands = capsys.readouterr().out.splitlines()
    assert commands == [next(c for c in commands if "dev s1-eth2 " in c)]
    assert main(["tsn", "gcl", "--topology", topology, "--flows", flows, "--format", "yang"]) == 0
    assert "ieee802-dot1q-sched-bridge:gate-parameter-table" in capsys.readouterr().out


def test_bad_input_is_one_line_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topology, flows = _files(tmp_path)
    (tmp_path / "bad.json").write_text('{"flows": [{"id": "x", "src": "h1", "dst": "nowhere"}]}')
    assert main(["tsn", "schedule", "--topology", topology, "--flows", str(tmp_path / "bad.json")]) == 2
    assert capsys.readouterr().err == "srfabric: flows[0].dst: 'nowhere' is not a host of the topology\n"
    assert main(["tsn", "schedule", "--topology", str(tmp_path / "missing.json"), "--flows", flows]) == 2
    assert "topology: cannot read" in capsys.readouterr().err
    assert main(["tsn", "schedule", "--topology", topology, "--flows", flows, "--time-limit", "0"]) == 2
    assert capsys.readouterr().err == "srfabric: time-limit: must be > 0, got 0.0\n"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: streams_from_json({"flows": [5]}), r"flows\[0\]: must be an object"),
        (lambda: network_from_tsnkit('link,q_num,rate,t_proc,t_prop\n"(0, 1)",8,nan,0,0\n'),
         r"topology\[0\].rate: must be a finite number"),
        (lambda: streams_from_tsnkit("stream,src,dst,size,period,deadline,jitter\n0,0,['a'],50,2000,2000,2000\n"),
         r"streams\[0\].dst: must hold a node number"),
        (lambda: plan(network_from_json({"nodes": [{"id": "h1", "kind": "host"}], "links": []}),
                      [Stream("f", "h1", "h1")]), r"flows\[0\].dst: must differ from src"),
    ],
)
def test_more_bad_inputs_name_the_field(call, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        call()


def test_a_saved_schedule_must_match_the_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topology, flows = _files(tmp_path)
    main(["tsn", "schedule", "--topology", topology, "--flows", flows, "--slots", "4", "--json"])
    document = json.loads(capsys.readouterr().out)
    saved = tmp_path / "schedule.json"
    saved.write_text(json.dumps(document | {"slot_ns": 1}))
    assert main(["tsn", "gcl", "--topology", topology, "--flows", flows, "--schedule", str(saved)]) == 2
    assert "schedule.slot_ns: 1 does not match these files (250000)" in capsys.readouterr().err
    document["scheduled"][0]["slot"] = 9
    saved.write_text(json.dumps(document))
    assert main(["tsn", "gcl", "--topology", topology, "--flows", flows, "--schedule", str(saved)]) == 2
    assert "f1: slot 9 is outside 0..3" in capsys.readouterr().err


def test_long_gate_entries_are_split_into_32_bit_intervals() -> None:
    from srfabric.tsn.gates.gcl import GateEntry, PortGcl
    from srfabric.tsn.gates.render import parse_taprio, to_taprio

    gcl = PortGcl("s1", "h1", "s1-eth1", 5_000_000_000, 0, [GateEntry(1, 4_999_000_000), GateEntry(2, 1_000_000)])
    back = parse_taprio(to_taprio(gcl))
    assert [e.duration_ns for e in back.entries] == [2**32 - 1, 4_999_000_000 - (2**32 - 1), 1_000_000]


def test_tsnkit_out_puts_every_time_on_tsnkit_s_grid_and_refuses_a_grid_off_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topology, flows = _files(tmp_path)
    out = tmp_path / "kit"
    assert main(["tsn", "schedule", "--topology", topology, "--flows", flows, "--method", "sur", "--json",
                 "--tsnkit-out", str(out)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["slot_ns"] % 100 == 0 and document["base_period_ns"] % 100 == 0
    offsets = (out / "srfabric-OFFSET.csv").read_text().splitlines()[1:]
    assert offsets and all(int(float(line.split(",")[-1])) % 100 == 0 for line in offsets)
    assert main(["tsn", "schedule", "--topology", topology, "--flows", flows, "--method", "sur", "--grid-ns", "30",
                 "--tsnkit-out", str(out)]) == 2
    assert "grid-ns: 30 ns is off tsnkit's 100 ns grid" in capsys.readouterr().err
