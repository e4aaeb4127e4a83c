"""A MariaDB server of the stack's own (Debian's ``mariadb-server`` binaries): its data, socket and pid in one
folder, listening on loopback only, root without a password over that socket and loopback. Neutron 29's
migrations need MySQL or MariaDB (on PostgreSQL they stop at ``ALTER TABLE tags CONVERT TO CHARACTER SET
utf8mb4``), and Keystone shares the server."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def start(folder: Path, port: int, wait_s: float = 60.0) -> int:
    """Initialise ``folder`` once, start the server on ``port``, and return its pid once it answers."""
    data = folder / "data"
    if not data.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mariadb-install-db", "--user=root", f"--datadir={data}", "--skip-test-db",
                        "--auth-root-authentication-method=normal"], check=True, capture_output=True, timeout=120)
    log = open(folder / "mariadb.log", "ab")  # noqa: SIM115 - the server keeps writing it after we return
    server = subprocess.Popen(
        ["mariadbd", "--user=root", f"--datadir={data}", f"--socket={folder}/sock", f"--port={port}",
         "--bind-address=127.0.0.1", f"--pid-file={folder}/mariadb.pid", "--skip-name-resolve",
         "--max-connections=500"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + wait_s
    while sql(folder, "SELECT 1").returncode != 0:
        if server.poll() is not None:
            raise SystemExit(f"mariadb: exited with {server.returncode}; see {folder / 'mariadb.log'}")
        if time.monotonic() > deadline:
            server.terminate()
            raise SystemExit(f"mariadb: no answer within {wait_s} s; see {folder / 'mariadb.log'}")
        time.sleep(0.2)
    return server.pid


def sql(folder: Path, statement: str) -> subprocess.CompletedProcess[str]:
    """One statement as root over the server's socket."""
    return subprocess.run(["mariadb", f"--socket={folder}/sock", "-uroot", "-e", statement], capture_output=True,
                          text=True, timeout=60)


def create_database(folder: Path, name: str) -> None:
    done = sql(folder, f"CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4")
    if done.returncode != 0:
        raise SystemExit(f"mariadb: cannot create database {name}: {done.stderr.strip()}")


def grant(folder: Path, user: str, password: str, database: str) -> None:
    """``user`` may use ``database`` over TCP from loopback with ``password``."""
    done = sql(folder, f"CREATE USER IF NOT EXISTS '{user}'@'127.0.0.1' IDENTIFIED BY '{password}'; "
                       f"GRANT ALL PRIVILEGES ON `{database}`.* TO '{user}'@'127.0.0.1'")
    if done.returncode != 0:
        raise SystemExit(f"mariadb: cannot grant {database} to {user}: {done.stderr.strip()}")
