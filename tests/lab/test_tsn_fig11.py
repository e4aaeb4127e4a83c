"""``srfabric lab tsn-fig11``'s quick form on the live fabric: the best effort's re-route is one flow-mod at
its talker's edge, the re-schedule none at all, the probe arrives in every phase, and a 90 % duty cycle
takes most of the 50 % one's gate wait away."""

from __future__ import annotations

from pathlib import Path

from srfabric_tools.lab.core import Settings
from srfabric_tools.lab.run import lookup, run_experiment


def test_re_route_and_re_schedule_through_the_api_while_the_probe_runs(kernel_ovs: None, tmp_path: Path) -> None:
    summary, folder = run_experiment(lookup("tsn-fig11"), Settings(1, 2.0, True), tmp_path, show=False)
    by_metric = {r["metric"]: r["median"] for r in summary["points"]}
    assert all(by_metric[f"phase{n}_frames"] > 1000 for n in (1, 2, 3)), by_metric
    assert by_metric["phase3_mean_us"] < by_metric["phase1_mean_us"] / 2, by_metric  # modelled: 125 -> 5 µs wait
    calls = {call["call"]: call for call in summary["api_calls"]}
    assert calls["reroute best-effort"]["entries"] == {"s1": 1}
    assert calls["reschedule 90"]["entries"] == {} and calls["reschedule 90"]["gated_ports"] == 3
    assert (folder / "tsn-fig11.png").stat().st_size > 0
