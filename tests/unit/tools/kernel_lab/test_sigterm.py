"""``srfabric kernel-lab run`` stopped with SIGTERM still runs its clean-up (which stops QEMU)."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from srfabric_tools.kernel_lab import run as lab_run


def test_sigterm_exits_through_the_clean_up_and_restores_the_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    cleaned = []

    def boot_and_get_terminated(*args: Any, **kwargs: Any) -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        finally:
            cleaned.append(True)  # where run_in_lab kills QEMU

    monkeypatch.setattr(lab_run, "run_in_lab", boot_and_get_terminated)
    monkeypatch.setattr(lab_run, "lab_config", lambda *args: None)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stopped:
        lab_run.run_cli(["true"], 1024, "deterministic", [], 10.0)
    assert stopped.value.code == 128 + signal.SIGTERM and cleaned == [True]
    assert signal.getsignal(signal.SIGTERM) == before
