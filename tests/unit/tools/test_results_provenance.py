"""Every committed benchmark summary records where it came from: the commit (``+`` when the code differed), the
date, the machine (cpus, kernel) and the command line, with no exemption (runs made before summaries recorded
them are no longer in ``docs/results``; git keeps them). The commit must be one git knows, and a run made since
runs wrote their own log (``run.log``, read from git apart from the summary) must be named by it too: a commit
filled in by hand does not pass. The results index is the one its summaries make now."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from srfabric_tools.bench.index import missing_provenance

ROOT = Path(__file__).resolve().parents[3]
LOGS_SINCE = "2026-12-05T14:45:00Z"  # runs from then on write run.log (``output.run_folder``)


def committed_summaries() -> list[Path]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "docs/results"], capture_output=True, text=True,
                            check=True).stdout.split()
    return [ROOT / name for name in listed if name.endswith("summary.json")]


def test_every_committed_summary_names_its_commit_date_machine_and_command() -> None:
    summaries = committed_summaries()
    assert summaries, "no committed summary"
    lacking = {str(path.relative_to(ROOT)): missing_provenance(json.loads(path.read_text())) for path in summaries}
    assert not {name: fields for name, fields in lacking.items() if fields}


def test_every_summarys_commit_is_one_git_knows_and_its_run_log_names_it() -> None:
    unknown, unconfirmed = [], []
    for path in committed_summaries():
        summary = json.loads(path.read_text())
        commit = str(summary["machine"]["commit"]).rstrip("+")
        found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"],
                               capture_output=True).returncode == 0
        if not found:
            unknown.append(f"{path.relative_to(ROOT)}: {commit}")
        log = path.parent / "run.log"
        logged = log.exists() and f"commit {summary['machine']['commit']}\n" in log.read_text()
        if (log.exists() or str(summary["date"]) >= LOGS_SINCE) and not logged:
            unconfirmed.append(str(path.relative_to(ROOT)))
    assert not unknown, f"commits git does not know: {unknown}"
    assert not unconfirmed, f"summaries whose run.log does not name their commit: {unconfirmed}"


def test_a_run_folder_logs_the_commit_it_was_made_at(tmp_path: Path) -> None:
    from srfabric_tools.bench.output import run_folder, source_commit

    folder = run_folder(tmp_path, "x")
    assert (folder / "run.log").read_text().startswith(f"commit {source_commit()}\n")


def test_the_results_index_is_the_one_the_summaries_make() -> None:
    """``srfabric bench index --out docs/results`` after adding a run or changing code, then commit the index."""
    from srfabric_tools.bench.index import index_markdown

    committed = (ROOT / "docs" / "results" / "index.md").read_text()
    assert index_markdown(ROOT / "docs" / "results", ROOT) == committed, "docs/results/index.md is stale"


def test_a_runs_csv_row_names_the_commit_it_was_measured_at(tmp_path: Path) -> None:
    from srfabric_tools.bench.output import write_runs

    write_runs(tmp_path / "runs.csv", [{"run": 0, "value": 1.5}], {"cpus": 2, "commit": "a9b0617c0ffe"})
    assert (tmp_path / "runs.csv").read_text().splitlines() == ["commit,run,value", "a9b0617c0ffe,0,1.5"]


def test_the_index_says_whether_a_runs_code_is_todays() -> None:
    from srfabric_tools.bench.index import code_since

    repo = Path(__file__).resolve().parents[3]
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "srfabric", "bpf", "native",
                            "integrations", "scripts"], capture_output=True, text=True).stdout
    now = code_since(head, repo)
    assert now.startswith("unchanged") or dirty.strip() and re.match(r"\d+ files? changed", now)
    assert code_since(head + "+", repo).endswith("(run with local changes)")
    assert code_since("0123456789ab", repo) == "(commit unknown here)"
    assert code_since("(none)", repo) == "(no commit)"


def test_code_since_counts_only_the_files_a_run_ran(tmp_path: Path) -> None:
    from srfabric_tools.bench.exercised import exercised_paths
    from srfabric_tools.bench.index import code_since

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    files = {"srfabric/__init__.py": "", "tools/srfabric_tools/bench/__init__.py": "",
             "tools/srfabric_tools/bench/capacity.py": "def run():\n    from srfabric import routes\n"
                                           "    return ['-m', 'srfabric_tools.bench.worker']\n",
             "tools/srfabric_tools/bench/worker.py": "", "srfabric/routes.py": "", "srfabric/unrelated.py": "",
             "constraints.txt": ""}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "run")
    commit = git("rev-parse", "--short=12", "HEAD")
    summary = {"command": "srfabric bench capacity --out docs/results"}
    runs = exercised_paths(summary, "capacity/x", tmp_path)
    assert runs is not None and {"srfabric/routes.py", "tools/srfabric_tools/bench/worker.py"} <= set(runs)
    assert "srfabric/unrelated.py" not in runs
    (tmp_path / "srfabric/unrelated.py").write_text("X = 1\n")
    assert code_since(commit, tmp_path, runs) == "unchanged (1 other code file changed, not run by it)"
    (tmp_path / "tools/srfabric_tools/bench/worker.py").write_text("X = 1\n")  # started as a process: it counts
    assert code_since(commit, tmp_path, runs).startswith("1 file changed: `tools/srfabric_tools/bench/worker.py`")
    assert code_since(commit, tmp_path).endswith("(whole tree compared)")
