"""The OpenStack side (MariaDB, Keystone, Neutron with networking-sfc and srfabric's drivers) from srfabric's own
process: ``networking_srfabric.stack`` run in the Neutron venv (``.venv-neutron``, made by the bootstrap), and the
``openstack`` client as each demo user (``clouds.yaml`` in the state folder). Used by the Neutron tests, ``srfabric
bench neutron`` and ``srfabric neutron-demo``; every server is stopped by the pid the stack recorded."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric_tools.testbed.api_lab import free_port

ROOT = Path(__file__).resolve().parents[3]
NEUTRON_VENV = ROOT / ".venv-neutron"


class NeutronStack:
    """``up()`` starts the stack for the srfabric at ``srfabric_url``; ``openstack(cloud, ...)`` runs the client."""

    def __init__(self, state: Path, srfabric_url: str, token: str, auth: str = "keystone",
                 backoff_max_s: float = 2.0, stale_claim_s: float = 30.0) -> None:
        self.state, self.srfabric_url, self.token, self.auth = state, srfabric_url, token, auth
        self.backoff_max_s, self.stale_claim_s = backoff_max_s, stale_claim_s
        self.port, self.keystone_port, self.mariadb_port = free_port(), free_port(), free_port()
        self.started: dict[str, Any] = {}

    @property
    def python(self) -> Path:
        return NEUTRON_VENV / "bin" / "python"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        if not self.python.exists():
            raise SrfabricError("neutron", f"{NEUTRON_VENV} is missing: run `make bootstrap`")
        try:
            done = self._run_up()
        except BaseException:  # interrupted or timed out while it started servers: stop what it started
            self.down()
            raise
        if done.returncode != 0:
            self.down()
            raise SrfabricError("neutron", f"the stack did not come up: {(done.stderr or done.stdout)[-2000:]}")
        self.started = json.loads(done.stdout.strip().splitlines()[-1])

    def _run_up(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), "-m", "networking_srfabric.stack", "up", "--state", str(self.state), "--port",
             str(self.port), "--keystone-port", str(self.keystone_port), "--mariadb-port", str(self.mariadb_port),
             "--auth", self.auth, "--srfabric-url", self.srfabric_url, "--srfabric-token", self.token,
             "--backoff-max", str(self.backoff_max_s), "--stale-claim", str(self.stale_claim_s)],
            capture_output=True, text=True, timeout=900)

    def kill_api(self) -> None:
        """SIGKILL Neutron's API (and what it started): no chance to finish what it was doing, as in a crash."""
        import signal

        pid = int((self.state / "neutron-api.pid").read_text())
        os.killpg(pid, signal.SIGKILL)

    def restart_api(self) -> None:
        done = subprocess.run([str(self.python), "-m", "networking_srfabric.stack", "api", "--state",
                               str(self.state), "--port", str(self.port)], capture_output=True, text=True,
                              timeout=300)
        if done.returncode != 0:
            raise SrfabricError("neutron", f"the API did not come back: {(done.stderr or done.stdout)[-2000:]}")

    def down(self) -> None:
        subprocess.run([str(self.python), "-m", "networking_srfabric.stack", "down", "--state", str(self.state)],
                       capture_output=True, timeout=120, check=False)

    def run(self, cloud: str, *words: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``openstack`` as ``cloud`` (admin, alice or bob; with ``auth="noauth"`` every cloud is the admin)."""
        access = (["--os-cloud", cloud] if self.auth == "keystone"
                  else ["--os-auth-type", "none", "--os-endpoint", self.url])
        done = subprocess.run([str(NEUTRON_VENV / "bin" / "openstack"), *access, *words], capture_output=True,
                              text=True, timeout=120,
                              env={**os.environ, "OS_CLIENT_CONFIG_FILE": str(self.state / "clouds.yaml")})
        if check and done.returncode != 0:
            raise SrfabricError("openstack", f"{' '.join(words)}: {done.stderr.strip()[-1500:]}")
        return done

    def openstack(self, cloud: str, *words: str) -> Any:
        """The client's answer as JSON (``-f json`` added where the command prints one); the sfc commands' ``ID``
        is also given as ``id``."""
        shows = words[-2] in ("create", "show") or "create" in words or "list" in words
        done = self.run(cloud, *words, *(("-f", "json") if shows else ()))
        shown = json.loads(done.stdout) if done.stdout.strip() else None
        if isinstance(shown, dict) and "ID" in shown:
            shown["id"] = shown["ID"]
        return shown

    def sql(self, statement: str) -> str:
        """One statement on the stack's MariaDB, as root over its socket."""
        done = subprocess.run(["mariadb", f"--socket={self.state}/mariadb/sock", "-uroot", "-e", statement],
                              capture_output=True, text=True, timeout=60)
        return done.stdout if done.returncode == 0 else done.stderr

    def __enter__(self) -> NeutronStack:
        self.up()
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()
