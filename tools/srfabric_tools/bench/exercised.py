"""Which files a committed run exercised, so the results index can compare only those with today's code: a run
that takes hours may then stand for a later commit exactly when none of its files changed.

A run's files are found from its command line (``summary["command"]``):

* its entry module: ``srfabric bench NAME`` runs ``tools/srfabric_tools/bench/<module>.py``
  (``BENCH_ENTRIES``), ``srfabric lab NAME`` (or ``all``, from the run's folder) runs
  ``tools/srfabric_tools/lab/experiments/<name>.py`` under ``tools/srfabric_tools/lab/run.py``, and the TSN
  experiments (``tsn-*``) run in the kernel lab, so ``tools/srfabric_tools/kernel_lab/run.py`` too; ``python
  FILE`` runs FILE;
* every srfabric or srfabric_tools module those import, at any depth and from anywhere in a file (imports inside
  functions count), with each package's ``__init__.py`` and the non-Python files of its folder (the web view's assets);
* the sources outside Python those modules run (``ASSETS``: the BPF programs, the C loop, Neutron's drivers,
  a peer's pins), the command-line files that hold the options' defaults, and the Python pins.

The Makefile and ``scripts/`` install things and are not counted. A command not recognised gives ``None``: the
index then compares the whole code tree.
"""

from __future__ import annotations

import ast
import functools
import re
import shlex
from pathlib import Path
from typing import Any

BENCH_ENTRIES = {"capacity": "capacity", "dataplane": "dataplane", "deploy": "deploy", "tsn": "tsn",
                 "tsnkit": "tsnkit_compare", "hostile": "hostile", "reconnect": "reconnect", "neutron": "neutron",
                 "failover": "failover", "capacity-ovs": "capacity_ovs_report", "datapaths": "datapaths",
                 "capacity-tables": "capacity_tables", "scale": "scale", "soak": "soak"}
ALWAYS = ("pyproject.toml", "constraints.txt")
# The command line: parsed and dispatched here, with the options' defaults. Counted as files: what they import
# lazily is every other benchmark.
COMMAND_LINE = ("srfabric/__main__.py", "srfabric/cli/__init__.py", "tools/srfabric_tools/cli.py",
                "tools/srfabric_tools/bench/cli.py", "tools/srfabric_tools/lab/cli.py")
PACKAGE_ROOTS = ("srfabric/", "tools/srfabric_tools/")  # the tools' package lives in tools/
ASSETS = {"srfabric/xdp/": ("bpf",), "srfabric/tsn/schedulers/nowait/native.py": ("native",),
          "tools/srfabric_tools/testbed/neutron_stack.py": ("integrations/neutron",),
          "tools/srfabric_tools/bench/tsnkit_runner.py": ("tsnkit-constraints.txt",),
          "tools/srfabric_tools/bench/capacity_faucet.py": ("faucet-constraints.txt",)}


def entry_files(command: str, folder: str) -> list[str] | None:
    """The files a run's command starts in; ``folder`` is the run's folder under the results root (``lab all``
    names no experiment, its folder does).

    >>> entry_files("srfabric bench failover --frer --out docs/results", "failover-frer/x")
    ['tools/srfabric_tools/bench/failover_frer.py']
    >>> entry_files("srfabric lab all --out r", "sr-proxy/x")
    ['tools/srfabric_tools/lab/run.py', 'tools/srfabric_tools/lab/experiments/sr_proxy.py']
    >>> entry_files("srfabric lab tsn-fig9 --reps 3", "tsn-fig9/x")[-1]
    'tools/srfabric_tools/kernel_lab/run.py'
    >>> entry_files("for i in 1..12: ...", "refactor-ab/x") is None
    True
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:2] == ["srfabric", "bench"] and len(words) > 2 and words[2] in BENCH_ENTRIES:
        module = "failover_frer" if words[2] == "failover" and "--frer" in words else BENCH_ENTRIES[words[2]]
        return [f"tools/srfabric_tools/bench/{module}.py"]
    if words[:2] == ["srfabric", "lab"] and len(words) > 2:
        name = folder.split("/")[0] if words[2] == "all" else words[2]
        files = ["tools/srfabric_tools/lab/run.py",
                 f"tools/srfabric_tools/lab/experiments/{name.replace('-', '_')}.py"]
        return files + (["tools/srfabric_tools/kernel_lab/run.py"] if name.startswith("tsn-") else [])
    if len(words) > 1 and Path(words[0]).name.startswith("python") and words[1].endswith(".py"):
        return [words[1]]
    return None


def imported_modules(source: str, package: str) -> set[str]:
    """The srfabric modules ``source`` imports anywhere (``package``: its own, for relative imports) or starts
    in a process of its own (``python -m srfabric.x``, a sibling ``name.py`` run as a script); a ``from X import
    y`` names both X and X.y, since y may be a module.

    >>> sorted(imported_modules("import os\\nfrom srfabric.model import topo\\ndef f():\\n"
    ...                         "    import srfabric.xdp.agent\\n", "srfabric_tools.bench"))
    ['srfabric.model', 'srfabric.model.topo', 'srfabric.xdp.agent']
    >>> sorted(imported_modules("RUN = ['-m', 'srfabric_tools.bench.new_flows']\\nP = 'runner.py'",
    ...                         "srfabric_tools.bench"))
    ['srfabric_tools.bench.new_flows', 'srfabric_tools.bench.runner']
    """
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.fullmatch(r"srfabric(_tools)?(\.[A-Za-z_]\w*)+", node.value):
                found.add(node.value)
            elif re.fullmatch(r"[A-Za-z_]\w*\.py", node.value):
                found.add(f"{package}.{node.value[:-3]}")
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] in ("srfabric", "srfabric_tools")}


def module_file(repo: Path, module: str) -> str | None:
    """``module``'s file relative to ``repo`` (a package's ``__init__.py``), or None if it is not a module."""
    path = Path(*module.split("."))
    if module.split(".")[0] == "srfabric_tools":
        path = Path("tools") / path
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if (repo / candidate).is_file():
            return candidate.as_posix()
    return None


@functools.cache  # many runs share their entry files; the index clears it for each build
def closure(repo: Path, entries: tuple[str, ...]) -> frozenset[str]:
    """``entries`` and every srfabric file they import, at any depth, with each package's ``__init__.py``."""
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in seen or not (repo / name).is_file():
            continue
        seen.add(name)
        parts = Path(name).with_suffix("").parts
        package = ".".join(parts[1:-1] if parts[0] == "tools" else parts[:-1])
        for depth in range(1, len(parts)):  # importing a.b.c runs a/__init__ and a/b/__init__ first
            todo.append(Path(*parts[:depth], "__init__.py").as_posix())
        try:
            source = (repo / name).read_text()
            modules = imported_modules(source, package)
        except (OSError, SyntaxError, ValueError):
            continue
        todo += [found for module in modules if (found := module_file(repo, module)) is not None]
    return frozenset(seen)


def exercised_paths(summary: dict[str, Any], folder: str, repo: Path) -> list[str] | None:
    """The paths (files and folders, relative to ``repo``) whose change would change what the run measured, or
    None when its command is not one this module knows."""
    entries = entry_files(str(summary.get("command") or ""), folder)
    if entries is None:
        return None
    files = closure(repo, tuple(entries))
    paths = files | set(ALWAYS) | {entry for entry in entries if not (repo / entry).is_file()}
    paths |= set(COMMAND_LINE) if entries[0].startswith(PACKAGE_ROOTS) else set()
    for name in files:
        paths |= {asset for prefix, assets in ASSETS.items() if name.startswith(prefix) for asset in assets}
        if name.startswith(PACKAGE_ROOTS):
            paths |= package_data(repo / Path(name).parent, repo)
    return sorted(paths)


def package_data(folder: Path, repo: Path) -> set[str]:
    """The files other than Python in ``folder`` and in its subfolders that are not packages (a web view's
    assets, a migration template), relative to ``repo``."""
    found = set()
    for path in folder.iterdir():
        if path.is_file() and path.suffix not in (".py", ".pyc"):
            found.add(path.relative_to(repo).as_posix())
        elif path.is_dir() and path.name != "__pycache__" and not (path / "__init__.py").exists():
            found |= {inner.relative_to(repo).as_posix() for inner in path.rglob("*")
                      if inner.is_file() and "__pycache__" not in inner.parts}
    return found
