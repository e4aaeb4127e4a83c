"""Run one lab experiment: build, measure with progress, tear down, write CSV, JSON, commands and a PNG."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric_tools.bench.output import machine, provenance, run_folder, write_csv, write_json, write_runs
from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.netlab import NetLab


def registry(kernel_lab: bool = False) -> dict[str, Experiment]:
    """Every experiment, in the order ``lab all`` runs them; with ``kernel_lab`` also those that need a
    kernel with taprio and openvswitch.ko (``all`` leaves them out)."""
    from srfabric_tools.lab.experiments import (
        calibration,
        firewall,
        ns_chain,
        ovs_chain,
        sfc_throughput,
        shaper,
        sr_proxy,
        sr_vs_rules,
        tsn_fig9,
        tsn_fig10,
        tsn_fig11,
        tsn_fig12,
        tsn_frer,
        tsn_netconf_changes,
        tsn_protect,
        tsn_tables23,
    )

    modules = (calibration, ovs_chain, ns_chain, firewall, shaper, sfc_throughput, sr_vs_rules, sr_proxy)
    experiments = {m.EXPERIMENT.name: m.EXPERIMENT for m in modules}
    if kernel_lab:
        for module in (tsn_fig9, tsn_fig10, tsn_fig11, tsn_fig12, tsn_tables23, tsn_frer, tsn_protect):
            experiments[module.EXPERIMENT.name] = module.EXPERIMENT
        # The gates over NETCONF, the controller in a namespace of its own (and the changes' local reference).
        for variant in (tsn_fig9.NETCONF, tsn_fig11.NETCONF, tsn_fig11.NO_PTP, tsn_fig11.GPTP,
                        tsn_netconf_changes.EXPERIMENT, tsn_netconf_changes.TAPRIO, tsn_netconf_changes.TAPRIO_GPTP,
                        tsn_netconf_changes.NO_PTP):
            experiments[variant.name] = variant
    return experiments


def lookup(name: str) -> Experiment:
    experiments = registry(kernel_lab=True)
    if name not in experiments:
        raise ModelError("experiment", f"{name!r} is unknown; choose one of {', '.join(experiments)} or all")
    return experiments[name]


def run_experiment(experiment: Experiment, settings: Settings, root: str | Path, show: bool = True
                   ) -> tuple[dict[str, Any], Path]:
    """Measure every point of ``experiment`` and write its results folder."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    folder = run_folder(root, experiment.name)
    measured_on = machine()  # the commit as the run began
    begin = time.monotonic()
    with Progress(TextColumn(f"[bold]{experiment.name}[/]"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.description}"), disable=not show, transient=True) as progress:
        task = progress.add_task("building", total=experiment.count(settings))
        with NetLab() as lab:
            ctx = Context(lab, settings, lambda label: progress.update(task, advance=1, description=label))
            try:
                experiment.measure(ctx)
            finally:
                (folder / "commands.txt").write_text("\n".join(lab.commands) + "\n")
    rows = [point.row() for point in ctx.points]
    summary = {
        "experiment": experiment.name,
        "title": experiment.title,
        "paper": experiment.paper,
        "settings": {"reps": settings.reps, "seconds": settings.seconds, "quick": settings.quick},
        **provenance(measured_on, f"srfabric lab {experiment.name}"),
        "elapsed_s": round(time.monotonic() - begin, 1),
        "points": rows,
        **ctx.extra,
    }
    summary["comparison"] = experiment.compare(rows, ctx.extra)
    write_csv(folder / "points.csv", rows)
    write_runs(folder / "runs.csv", [{**p.params, "metric": p.metric, "run": i, "value": v}
                                     for p in ctx.points for i, v in enumerate(p.runs)], measured_on)
    write_json(folder / "summary.json", summary)
    experiment.plot(rows, ctx.extra, folder / f"{experiment.name}.png")
    return summary, folder


def print_summary(summary: dict[str, Any], folder: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    rows = summary["points"]
    table = Table(title=f"{summary['experiment']}: {summary['title']}")
    columns = list(rows[0]) if rows else []
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()))
    console.print(table)
    settings = summary["settings"]
    console.print(f"{settings['reps']} x {settings['seconds']:g} s per point; machine: {summary['machine']['cpus']} "
                  f"cores, kernel {summary['machine']['kernel']}; {summary['elapsed_s']} s")
    console.print(f"paper: {summary['paper']}")
    for line in summary["comparison"]:
        console.print(f"ours: {line}")
    console.print(f"results: {folder}")


def json_summary(summary: dict[str, Any]) -> str:
    keep = {k: v for k, v in summary.items() if k in ("experiment", "points", "fit", "settings", "machine",
                                                        "comparison", "folder")}
    return json.dumps(keep)
