"""Every result file the README and the documentation pages cite is in the repository (a fresh clone has it), and
every image they show."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_cited_result_and_image_exists_in_the_checkout() -> None:
    missing, cited = [], 0
    for page in PAGES:
        text = page.read_text()
        for path in set(re.findall(r"docs/results/[A-Za-z0-9_./-]*[A-Za-z0-9_]", text)):
            cited += 1
            if not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {path}")
        for image in set(re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)):
            if "://" not in image and not (page.parent / image).exists():
                missing.append(f"{page.relative_to(ROOT)}: {image}")
    assert cited, "no page cites a result"
    assert not missing, f"cited but not in the repository: {missing}"
