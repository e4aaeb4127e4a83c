"""The soak times convergence per episode of overlapping faults, from the undo of the last of them."""

from __future__ import annotations

import contextlib
import threading

import pytest

from srfabric_tools.bench.soak_episodes import Episodes
from srfabric_tools.bench.soak_faults import Done
from srfabric_tools.bench.soak_plan import Fault

pytestmark = pytest.mark.timeout(30)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fault(kind: str, at_s: float) -> Done:
    return Done(Fault(at_s, kind, "s1-s2" if kind == "link" else "", 1.0))


def watched(episodes: Episodes) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=episodes.watch, args=(stop,), daemon=True)
    thread.start()
    return stop, thread


def test_overlapping_faults_are_timed_from_the_last_undo() -> None:
    clock, synced = Clock(), threading.Event()
    reads: list[float] = []

    def in_sync() -> bool:
        reads.append(clock.now)
        if synced.is_set():
            clock.now += 0.3  # the read-back that finds it whole ends 0.3 s after the last undo
            return True
        return False

    episodes = Episodes(in_sync, clock)
    first, second = fault("link", 1.0), fault("bridge", 2.0)
    stop, thread = watched(episodes)
    episodes.begin(first)
    clock.now = 2.0
    episodes.begin(second)
    clock.now = 3.0
    episodes.end(first)  # the bridge is still gone: nothing is read back yet
    assert not reads
    clock.now = 9.0
    synced.set()
    episodes.end(second)
    assert episodes.settled(10)
    stop.set()
    thread.join(5)
    [episode] = episodes.done
    assert (len(episode.faults), episode.converged_s, episode.interrupted) == (2, pytest.approx(0.3), 0)
    assert first.converged_s == pytest.approx(6.3) and second.converged_s == pytest.approx(0.3)


def test_a_fault_done_while_converging_extends_the_episode() -> None:
    clock = Clock()
    answers = iter([False, False, True])
    episodes = Episodes(lambda: next(answers, True), clock)
    first, second = fault("leader_kill", 1.0), fault("link", 2.0)
    episodes.begin(first)
    episodes.end(first)
    begun = threading.Event()

    def in_sync() -> bool:  # the first read-back is not in sync, and meanwhile a fault is done
        if not begun.is_set():
            begun.set()
            episodes.begin(second)
            clock.now = 5.0
            episodes.end(second)
            return False
        return next(answers, True)

    episodes.in_sync = in_sync
    stop, thread = watched(episodes)
    assert episodes.settled(10)
    stop.set()
    thread.join(5)
    [episode] = episodes.done
    assert (len(episode.faults), episode.interrupted, episode.quiet_at) == (2, 1, 5.0)


def test_an_episode_that_never_converges_times_out() -> None:
    clock = Clock()

    def in_sync() -> bool:
        clock.now += 31.0
        return False

    episodes = Episodes(in_sync, clock)
    only = fault("function", 1.0)
    episodes.begin(only)
    episodes.end(only)
    stop, thread = watched(episodes)
    assert episodes.settled(10)
    stop.set()
    thread.join(5)
    assert episodes.done[0].converged_s is None and only.converged_s is None


def test_a_fault_on_the_leader_that_finds_none_waits_for_one_and_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """An overlapping fault may depose the leader between the wait for one and the fault: it is tried again."""
    from types import SimpleNamespace

    from srfabric_tools.bench import soak
    from srfabric_tools.bench.soak_faults import NoLeader

    tries: list[str] = []

    class Runner:
        def do(self, fault: Fault) -> None:
            tries.append(fault.kind)
            if len(tries) < 3:
                raise NoLeader("soak", "no instance leads")

    waits: list[float] = []
    monkeypatch.setattr(soak, "wait_for_leader", lambda servers, timeout_s: waits.append(timeout_s))
    lab = SimpleNamespace(lock=threading.Lock(), servers=[], runner=Runner(),
                          _lab=lambda fault: contextlib.nullcontext())
    soak.Soak._do(lab, Fault(1.0, "leader_kill", "", 1.0))  # type: ignore[arg-type]
    assert tries == ["leader_kill"] * 3 and len(waits) == 3
    monkeypatch.setattr(soak, "LEADER_WAIT_S", -1.0)  # past the wait: the fault is not done, and says why
    tries.clear()
    with pytest.raises(NoLeader):
        soak.Soak._do(lab, Fault(1.0, "api_stop", "", 1.0))  # type: ignore[arg-type]
