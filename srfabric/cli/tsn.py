"""``srfabric tsn ...``: schedule time-triggered streams and render gate control lists."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from srfabric.errors import ModelError
from srfabric.tsn.formats.files import network_from_json, read_json, read_text, streams_from_json
from srfabric.tsn.formats.tsnkit import TSNKIT_GRID_NS
from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.schedule import Schedule, schedule_from_json
from srfabric.tsn.model.slots import DEFAULT_DIAMETER, WIRE_OVERHEAD_BYTES, SlotModel, plan, shortest_diameter
from srfabric.tsn.model.timed import TimedProblem, TimedSchedule
from srfabric.tsn.schedulers.options import SchedulerOptions
from srfabric.tsn.schedulers.registry import METHODS


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Register ``tsn schedule``, ``tsn gcl``, ``tsn methods`` and ``tsn generate``."""
    tsn = commands.add_parser("tsn", help="time-triggered streams: routes, slots and gate control lists")
    sub = tsn.add_subparsers(dest="tsn_command", required=True)

    schedule = sub.add_parser("schedule", help="compute routes and slots (TSSDN S/UR, S/PR, S/FR, incremental, batch) "
                                               "or per-link transmission times (nowait)")
    _problem_args(schedule)
    schedule.add_argument("--json", action="store_true", help="print the schedule as one JSON object")
    schedule.add_argument("--tsnkit-out", metavar="DIR", help="also write tsnkit's GCL/OFFSET/ROUTE/QUEUE CSVs here")

    gcl = sub.add_parser("gcl", help="gate control lists of a schedule, as taprio commands or 802.1Qcw YANG")
    _problem_args(gcl)
    gcl.add_argument("--schedule", metavar="FILE", help="a schedule from 'tsn schedule --json' (else computed)")
    gcl.add_argument("--format", choices=("taprio", "yang"), default="taprio")
    gcl.add_argument("--guard-bytes", type=int, default=1500, help="largest best-effort frame (guard band)")
    gcl.add_argument("--base-time-ns", type=int, default=0)
    gcl.add_argument("--include-hosts", action="store_true", help="also gate the hosts' egress ports")
    gcl.add_argument("--check", action="store_true", help="run the taprio commands in a kernel booted under QEMU")

    sub.add_parser("methods", help="the scheduling methods: model, exact or heuristic, where each is the default, "
                                   "when to pick it (a Markdown table)")

    generate = sub.add_parser("generate", help="write a random topology and flows like the paper's evaluation")
    generate.add_argument("--model", choices=("er", "rrg", "ba", "waxman"), default="er")
    generate.add_argument("--switches", type=int, default=6)
    generate.add_argument("--hosts", type=int, default=24)
    generate.add_argument("--links", type=int, default=38, help="er/waxman: total links, host links included")
    generate.add_argument("--degree", type=int, default=3, help="rrg: switch degree; ba: links per new switch")
    generate.add_argument("--flows", type=int, default=50)
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--out", default=".", help="directory for topology.json and flows.json")


def _problem_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topology", required=True, help="topology JSON, or tsnkit's topology CSV (*.csv)")
    parser.add_argument("--flows", required=True, help="flows JSON, or tsnkit's stream CSV (*.csv)")
    parser.add_argument("--method", choices=list(METHODS), default="spr",
                        help="; ".join(f"{m.name}: {m.pick_when}" for m in METHODS.values()))
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--slots", type=int, help="number of slots per base period")
    size.add_argument("--base-period-ns", type=int, help="base period (default: gcd of the flows' periods)")
    parser.add_argument("--diameter", type=int, help="longest path in links; sizes the slot (default: the longest "
                                                      "of the flows' shortest paths)")
    forwarding = parser.add_mutually_exclusive_group()
    forwarding.add_argument("--store-and-forward", action="store_true",
                            help="slot sized for store-and-forward switches (the default for tsnkit's CSV input)")
    forwarding.add_argument("--cut-through", action="store_true",
                            help="slot sized for cut-through switches (the default for JSON input)")
    parser.add_argument("--grid-ns", type=int, help="every slot boundary on this grid (default: 100 ns for tsnkit's "
                                                    "CSV input, whose simulator steps in 100 ns; else 1)")
    parser.add_argument("--no-phases", action="store_true", help="as the paper: every stream owns its slot each cycle")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per solver call")
    parser.add_argument("--gap", type=float, default=0.0, help="relative optimality gap to stop at")
    parser.add_argument("--seed", type=int, default=0, help="S/FR's path draw and the solver's seed")
    parser.add_argument("--path-cap", type=int, default=32, help="S/PR: shortest paths per flow")
    parser.add_argument("--k-paths", type=int, default=4, help="incremental and batch: candidate paths per flow")
    parser.add_argument("--sur-form", choices=("flow", "product"), default="flow")
    parser.add_argument("--overhead-bytes", type=int,
                        help="nowait: bytes on the wire besides each frame's size (default: 0 for tsnkit's CSV "
                             f"input, else {WIRE_OVERHEAD_BYTES})")


def load_inputs(topology: str, flows: str) -> tuple[Network, list[Stream]]:
    """Read the topology and flow files, JSON or tsnkit CSV by extension."""
    from srfabric.tsn.formats import tsnkit

    if topology.endswith(".csv"):
        network = tsnkit.network_from_tsnkit(read_text(topology, "topology"))
    else:
        network = network_from_json(read_json(topology, "topology"))
    if flows.endswith(".csv"):
        streams = tsnkit.streams_from_tsnkit(read_text(flows, "flows"))
    else:
        streams = streams_from_json(read_json(flows, "flows"))
    return network, streams


def grid_ns(args: argparse.Namespace, from_tsnkit: bool) -> int:
    """The time grid: ``--grid-ns``, else tsnkit's 100 ns for tsnkit's input or output (its simulator releases
    frames on that grid only), else 1 ns; a grid off tsnkit's with ``--tsnkit-out`` is refused by name."""
    to_tsnkit = getattr(args, "tsnkit_out", None) is not None
    if args.grid_ns is None:
        return TSNKIT_GRID_NS if from_tsnkit or to_tsnkit else 1
    if to_tsnkit and args.grid_ns % TSNKIT_GRID_NS:
        raise ModelError("grid-ns", f"{args.grid_ns} ns is off tsnkit's {TSNKIT_GRID_NS} ns grid, which "
                                    f"--tsnkit-out needs (its simulator would never release those frames)")
    return int(args.grid_ns)


def slot_model(args: argparse.Namespace, network: Network, streams: list[Stream]) -> SlotModel:
    """The slot model the options ask for; tsnkit's input gets tsnkit's timing model (store-and-forward on a
    100 ns grid) unless told otherwise."""
    from_tsnkit = args.topology.endswith(".csv")
    if args.diameter is not None and args.diameter < 1:
        raise ModelError("diameter", f"must be >= 1, got {args.diameter}")
    diameter = args.diameter if args.diameter is not None else shortest_diameter(network, streams)
    store_and_forward = args.store_and_forward or (from_tsnkit and not args.cut_through)
    grid = grid_ns(args, from_tsnkit)
    return SlotModel(diameter=diameter, store_and_forward=store_and_forward, grid_ns=grid)


def timed_problem(args: argparse.Namespace, network: Network, streams: list[Stream]) -> TimedProblem:
    """The fine-grained problem the options ask for; tsnkit's input gets tsnkit's model (100 ns grid, sizes
    as they are on the wire)."""
    from_tsnkit = args.topology.endswith(".csv")
    if args.diameter is not None and args.diameter < 1:
        raise ModelError("diameter", f"must be >= 1, got {args.diameter}")
    hops = args.diameter if args.diameter is not None else max(DEFAULT_DIAMETER, shortest_diameter(network, streams))
    grid = grid_ns(args, from_tsnkit)
    overhead = args.overhead_bytes if args.overhead_bytes is not None else 0 if from_tsnkit else WIRE_OVERHEAD_BYTES
    return TimedProblem.build(network, streams, grid, overhead, hops)


def compute(args: argparse.Namespace) -> Schedule | TimedSchedule:
    """Build the problem the method's model needs (slots, or per-link times) and run the method."""
    from srfabric.tsn.model.solve_options import SolveOptions
    from srfabric.tsn.schedulers.options import SchedulerOptions
    from srfabric.tsn.schedulers.registry import METHODS, schedule

    network, streams = load_inputs(args.topology, args.flows)
    options = SchedulerOptions(
        solve=SolveOptions(time_limit_s=args.time_limit, mip_gap=args.gap, seed=args.seed),
        path_cap=args.path_cap, k_paths=args.k_paths, sur_form=args.sur_form,
    )
    _check_options(options)
    if METHODS[args.method].model == "timed":
        return schedule(timed_problem(args, network, streams), args.method, options)
    model = slot_model(args, network, streams)
    problem = plan(network, streams, args.slots, args.base_period_ns, model, phases=not args.no_phases)
    return schedule(problem, args.method, options)


def _check_options(options: SchedulerOptions) -> None:
    """The options' own check, with the errors named as the command line spells the flags."""
    flags = {"time_limit_s": "time-limit", "mip_gap": "gap", "k_paths": "k-paths", "path_cap": "path-cap",
             "sur_form": "sur-form"}
    try:
        options.check()
    except ModelError as error:
        raise ModelError(flags.get(error.field, error.field), error.message) from None


def run(args: argparse.Namespace) -> int:
    """Dispatch ``srfabric tsn <command>``."""
    if args.tsn_command == "schedule":
        return _schedule(args)
    if args.tsn_command == "gcl":
        return _gcl(args)
    if args.tsn_command == "methods":
        from srfabric.tsn.schedulers.registry import methods_table

        print(methods_table())
        return 0
    return _generate(args)


def _schedule(args: argparse.Namespace) -> int:
    from srfabric.tsn.schedulers.registry import METHODS
    from srfabric.tsn.verify.slot import verify
    from srfabric.tsn.verify.timed import verify_timed

    if METHODS[args.method].model == "slot":
        import highspy  # noqa: F401 - loaded before the clock starts: its load is not the solver's time
    result = compute(args)
    problems = verify_timed(result) if isinstance(result, TimedSchedule) else verify(result)
    if problems:  # A solver bug, not bad input: say so plainly rather than print a wrong schedule.
        raise ModelError("schedule", "the verifier rejected the result: " + "; ".join(problems[:3]))
    if args.tsnkit_out:
        from srfabric.tsn.formats.tsnkit import write_tsnkit

        write_tsnkit(result, args.tsnkit_out)
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    if isinstance(result, TimedSchedule):
        _print_timed(result)
        return 0
    from rich.console import Console
    from rich.table import Table

    problem = result.problem
    table = Table(title=f"{result.method}: {len(result.assignments)} of {len(problem.streams)} flows scheduled")
    for column in ("flow", "slot", "phase", "offset ns", "path"):
        table.add_column(column)
    for assignment in result.assignments:
        table.add_row(assignment.stream, str(assignment.slot), str(assignment.phase),
                      str(result.offset_ns(assignment)), " → ".join(assignment.path))
    console = Console()
    console.print(table)
    console.print(
        f"{problem.slots} slots of {problem.slot_ns} ns in a base period of {problem.base_period_ns} ns "
        f"({problem.cycles} per hyperperiod); "
        f"build {result.build_s * 1000:.1f} ms, solve {result.solve_s * 1000:.1f} ms, "
        f"status {result.status}; unscheduled: {', '.join(result.unscheduled) or 'none'}"
    )
    for name in result.unscheduled:
        if name in result.reasons:
            console.print(f"  {name}: {result.reasons[name]}")
    return 0


def _print_timed(result: TimedSchedule) -> None:
    from rich.console import Console
    from rich.table import Table

    problem = result.problem
    streams = {s.id: s for s in problem.streams}
    table = Table(title=f"{result.method}: {len(result.assignments)} of {len(problem.streams)} flows scheduled")
    for column in ("flow", "period ns", "offset ns", "latency ns", "path"):
        table.add_column(column)
    for a in result.assignments:
        stream = streams[a.stream]
        table.add_row(a.stream, str(stream.period_ns), str(a.offset_ns), str(problem.latency_ns(stream, a.path)),
                      " → ".join(a.path))
    console = Console()
    console.print(table)
    console.print(f"hyperperiod {problem.hyperperiod_ns} ns on a {problem.grid_ns} ns grid; solve "
                  f"{result.solve_s * 1000:.1f} ms; unscheduled: {', '.join(sorted(result.reasons)) or 'none'}")
    for name, reason in sorted(result.reasons.items()):
        console.print(f"  {name}: {reason}")


def _gcl(args: argparse.Namespace) -> int:
    from srfabric.tsn.gates.gcl import build_gcls, build_timed_gcls
    from srfabric.tsn.gates.render import to_taprio, to_yang

    if args.guard_bytes < 0:
        raise ModelError("guard-bytes", f"must be >= 0, got {args.guard_bytes}")
    if args.base_time_ns < 0:
        raise ModelError("base-time-ns", f"must be >= 0, got {args.base_time_ns}")
    if args.schedule and METHODS[args.method].model == "timed":
        raise ModelError("schedule", f"a saved schedule is read for the slot methods only, not {args.method}")
    result = _saved_schedule(args) if args.schedule else compute(args)
    if isinstance(result, TimedSchedule):
        gcls = build_timed_gcls(result, args.guard_bytes, args.include_hosts, base_time_ns=args.base_time_ns)
    else:
        gcls = build_gcls(result, args.guard_bytes, args.include_hosts, base_time_ns=args.base_time_ns)
    if args.format == "yang":
        print(json.dumps(to_yang(gcls), indent=1))
    else:
        for gcl in gcls:
            print(to_taprio(gcl))
    if args.check:
        try:  # the kernel lab is one of srfabric's tools, outside the runtime package
            from srfabric_tools.kernel_lab.taprio_check import check_in_qemu
        except ImportError:
            raise ModelError("check", "boots the kernel lab, one of srfabric's tools: install them "
                                      "(`pip install -e tools`, as the bootstrap does)") from None

        verdicts = check_in_qemu([(gcl.interface, to_taprio(gcl)) for gcl in gcls])
        refused = [v for v in verdicts if not v.accepted]
        print(f"taprio under QEMU: {len(verdicts) - len(refused)} of {len(gcls)} commands accepted", file=sys.stderr)
        for verdict in refused:
            print(f"  {verdict.interface}: {verdict.output.splitlines()[0] if verdict.output else ''}", file=sys.stderr)
        return 1 if refused or len(verdicts) != len(gcls) else 0
    return 0


def _saved_schedule(args: argparse.Namespace) -> Schedule:
    """A schedule printed by ``tsn schedule --json``, rebuilt on the same slots and checked again."""
    from srfabric.tsn.verify.slot import verify

    network, streams = load_inputs(args.topology, args.flows)
    document = read_json(args.schedule, "schedule")
    if not isinstance(document, dict):
        raise ModelError("schedule", "must be the JSON printed by 'srfabric tsn schedule --json'")
    for name in ("slots", "slot_ns", "base_period_ns", "cycles"):
        value = document.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelError(f"schedule.{name}", f"must be an integer >= 1, got {value!r}")
    model = slot_model(args, network, streams)
    phases = bool(document.get("phases", True))
    problem = plan(network, streams, document["slots"], document["base_period_ns"], model, phases)
    for name in ("slot_ns", "cycles"):
        if getattr(problem, name) != document[name]:
            expected = getattr(problem, name)
            raise ModelError(f"schedule.{name}", f"{document[name]} does not match these files ({expected})")
    result = schedule_from_json(problem, document)
    problems = verify(result)
    if problems:
        raise ModelError("schedule", "; ".join(problems[:3]))
    return result


def _generate(args: argparse.Namespace) -> int:
    from srfabric.tsn.formats import generators
    from srfabric.tsn.formats.files import network_to_json, streams_to_json

    if args.model == "er":
        network = generators.erdos_renyi(args.switches, args.hosts, args.links, args.seed)
    elif args.model == "rrg":
        network = generators.random_regular(args.switches, args.hosts, args.degree, args.seed)
    elif args.model == "ba":
        network = generators.barabasi_albert(args.switches, args.hosts, args.degree, args.seed)
    else:
        network = generators.waxman(args.switches, args.hosts, args.links, args.seed)
    streams = generators.random_streams(network, args.flows, args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "topology.json").write_text(json.dumps(network_to_json(network), indent=1))
    (out / "flows.json").write_text(json.dumps(streams_to_json(streams), indent=1))
    print(f"wrote {out / 'topology.json'} ({len(network.links)} links) and {out / 'flows.json'} ({len(streams)} flows)")
    return 0
