"""The soak's pure parts: a seed's faults, and how its checkers judge what the receiver, the functions and the
instances reported (no fabric)."""

from __future__ import annotations

from srfabric_tools.bench.soak import growth_of, violations
from srfabric_tools.bench.soak_load import SoakChain, gaps_of, misdelivered
from srfabric_tools.bench.soak_plan import KINDS, Gap, Targets, Window, plan, unexplained

TARGETS = Targets(links=("s1-s2", "s2-s3"), functions=("v1", "v2"), bridges=("s2",))


def test_a_seed_gives_the_same_overlapping_faults_and_another_seed_others() -> None:
    faults = plan(5, 600.0, TARGETS)
    assert faults == plan(5, 600.0, TARGETS) != plan(6, 600.0, TARGETS)
    assert {f.kind for f in faults} == set(KINDS)  # ten minutes draw every kind
    assert all(3.0 < f.at_s < 600.0 and 1.0 <= f.hold_s <= 5.0 for f in faults)
    assert any(b.at_s < a.at_s + a.hold_s for a, b in zip(faults, faults[1:], strict=False))  # some overlap
    assert {f.target for f in faults if f.kind == "link"} <= set(TARGETS.links)


def test_loss_is_explained_only_inside_a_repair_window() -> None:
    window = Window(10.0, 12.0)
    inside, straddling, outside = Gap(1, 5, 9, 10.1, 11.0), Gap(1, 20, 40, 11.5, 12.9), Gap(1, 50, 51, 20.0, 20.2)
    assert unexplained([inside, straddling, outside], [window]) == [straddling, outside]


def test_gaps_are_read_from_the_receiver_and_the_lost_tail_counts() -> None:
    sent = {"start": 100.0, "sent": {"5000": 10, "5001": 10}}
    received = {"gaps": [[5000, 3, 4, 100.2, 100.5]], "want": {"5000": 10, "5001": 7},
                "last": {"5000": 100.9, "5001": 100.6}}
    gaps = gaps_of(sent, received, 60.0)
    assert [(g.port, g.first, g.last, round(g.after_s, 1), round(g.before_s, 1)) for g in gaps] == [
        (5000, 3, 4, 0.2, 0.5), (5001, 7, 9, 0.6, 60.0)]
    assert sum(g.frames for g in gaps) == 5


def test_a_frame_outside_its_chain_or_out_of_order_is_misdelivered() -> None:
    chains = [SoakChain(5000, ("v2", "v1", "v3"))]
    before = {"v1": {"flows": {"forward": {"udp:5000": {"packets": 0, "from_mark_2": 0}}}}}
    after = {
        "v2": {"flows": {"forward": {"udp:5000": {"packets": 10, "from_mark_0": 10}}}},  # first: from the edge
        "v1": {"flows": {"forward": {"udp:5000": {"packets": 12, "from_mark_2": 10, "from_mark_3": 2}}}},
        "v3": {"flows": {"forward": {"udp:5000": {"packets": 10, "from_mark_1": 10}},
                         "reverse": {"udp:5000": {"packets": 1}}}},  # on its egress port
        "v4": {"flows": {"forward": {"udp:5000": {"packets": 3, "from_mark_1": 3}, "udp:9": {"packets": 5}}}},
    }
    assert misdelivered(before, after, chains) == {"v1": 2, "v3": 1, "v4": 3}


def test_a_best_effort_frame_at_any_function_is_misdelivered_and_unaware_functions_are_checked_too() -> None:
    functions = ("v1", "v2", "v3", "v4", "v5", "v6")
    chains = [SoakChain(5000, ("v5", "v1"))]
    after = {
        "v5": {"flows": {"forward": {"udp:5000": {"packets": 10, "from_mark_0": 10}}}},
        "v1": {"flows": {"forward": {"udp:5000": {"packets": 10, "from_mark_5": 10}}}},  # after v5 (mark 5)
        "v6": {"flows": {"forward": {"udp:32000": {"packets": 2, "from_mark_0": 2}}}},  # a best-effort flow
    }
    assert misdelivered({}, after, chains, functions, best_effort=(32000,)) == {"v6": 2}


def test_growth_is_judged_after_warm_up_on_the_longest_lived_instance() -> None:
    samples = [{"t": t, "pid": 7, "rss_kib": 1000 if t < 40 else 1100, "fds": 30} for t in range(48)]
    samples += [{"t": t, "pid": 8, "rss_kib": 9999, "fds": 99} for t in range(5)]  # restarted late: too short
    assert round(growth_of(samples, "rss_kib") or 0, 3) == 0.1 and growth_of(samples, "fds") == 0.0
    assert growth_of(samples[:11], "rss_kib") is None


def test_a_clean_run_has_no_violation_and_each_finding_is_named() -> None:
    clean = {"misdelivered": 0, "unexplained_frames": 0, "lost_writes": 0, "tracebacks": 0,
             "convergence_timeouts": 0, "final_convergence_s": 0.4, "fault_errors": []}
    assert violations(clean) == []
    assert violations({**clean, "lost_writes": 2, "tracebacks": 1}) == [
        "2 acknowledged writes lost", "1 tracebacks in the instances' logs"]


def test_the_quick_forms_seed_draws_every_kind_of_fault() -> None:  # (the issue: a 2-minute quick form)
    from srfabric_tools.bench.cli import QUICK_SOAK_MINUTES
    from srfabric_tools.bench.soak import FAULTS_UNTIL, UNAWARE
    from srfabric_tools.testbed.api_chains import FUNCTIONS
    from srfabric_tools.testbed.api_lab import line_spec

    spec = line_spec(len(FUNCTIONS + UNAWARE))  # the soak's lab
    targets = Targets(tuple(f"{link.a}-{link.b}" for link in spec.links), tuple(spec.functions),
                      tuple(spec.switches))
    faults = plan(6, QUICK_SOAK_MINUTES * 60 * FAULTS_UNTIL, targets)  # make test's seed (test_bench_soak)
    assert {f.kind for f in faults} == set(KINDS)
