"""Debian's Prometheus scrapes a real ``srfabric serve``'s ``/metrics`` with the service token as its bearer
credential, and its query API answers srfabric's series. Both processes are started here, on free ports, and
stopped by their pids."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from srfabric_tools.procs import terminate
from srfabric_tools.testbed.api_lab import ServeProcess, free_port

pytestmark = pytest.mark.skipif(shutil.which("prometheus") is None, reason="needs Debian's prometheus (make bootstrap)")

CONFIG = """global:
  scrape_interval: 1s
scrape_configs:
  - job_name: srfabric
    metrics_path: /metrics
    authorization:
      credentials_file: {token_file}
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


def query(port: int, expression: str) -> list[dict[str, object]]:
    url = f"http://127.0.0.1:{port}/api/v1/query?query={urllib.parse.quote(expression)}"
    with urllib.request.urlopen(url, timeout=5) as answer:
        return list(json.load(answer)["data"]["result"])


def test_prometheus_scrapes_srfabric(tmp_path: Path) -> None:
    with ServeProcess(f"sqlite:///{tmp_path}/api.db") as serve:
        (tmp_path / "token").write_text(serve.token)
        (tmp_path / "prometheus.yml").write_text(CONFIG.format(token_file=tmp_path / "token", port=serve.port))
        port = free_port()
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline, found = time.monotonic() + 60, []
            while time.monotonic() < deadline:
                try:
                    found = query(port, 'up{job="srfabric"} == 1 and on() srfabric_switches_connected == 0')
                except OSError:
                    found = []
                if found:
                    break
                time.sleep(0.5)
            assert found, "Prometheus did not scrape srfabric within 60 s"
            assert query(port, "srfabric_port_chains")[0]["value"][1] == "0"  # type: ignore[index]
        finally:
            terminate(prometheus)
