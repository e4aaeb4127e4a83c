"""Every result file the README cites is in the repository (a fresh clone has it), and every image it shows."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_cited_result_and_image_exists_in_the_checkout() -> None:
    readme = (ROOT / "README.md").read_text()
    cited = set(re.findall(r"docs/results/[A-Za-z0-9_./-]*[A-Za-z0-9_]", readme))
    cited |= {m for m in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme) if "://" not in m}
    assert cited, "the README cites no results"
    missing = sorted(path for path in cited if not (ROOT / path).exists())
    assert not missing, f"cited in README.md but not in the repository: {missing}"
