"""The published modules rewritten for netconfd (``srfabric.bridge.yang_inline``): ``ieee802-dot1q-psfp`` is the
one the pinned set needs rewritten, and its schema as ``yanglint`` compiles it (every node, type, ``must`` and
description, ``-f info``) is the published one's; every module reads and prints back as the same statements; text
that is not YANG, or a ``uses`` the rewriting cannot keep, is named."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from srfabric.bridge.server import MODULES, module_folder
from srfabric.bridge.yang_inline import inlined, parse, to_text
from srfabric.errors import ModelError
from tests.unit.tsn.test_yang_documents import YANG

pytestmark = pytest.mark.timeout(120)


def compiled(folder: Path) -> str:
    modules = [str(folder / f"{name}.yang") for name in ("ieee802-dot1q-psfp-bridge", "ieee802-dot1q-bridge")]
    done = subprocess.run(["yanglint", "-p", str(folder), "-f", "info", *modules], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_only_psfp_is_rewritten_and_its_compiled_schema_is_the_published_ones(tmp_path: Path) -> None:
    folder = module_folder(YANG, tmp_path / "bridge")
    rewritten = sorted(path.stem for path in folder.iterdir() if not path.is_symlink())
    assert rewritten == ["ieee802-dot1q-psfp"]
    published = tmp_path / "published"
    published.mkdir()
    for name in MODULES:
        (published / f"{name}.yang").symlink_to(sorted(YANG.glob(f"{name}@*.yang"))[-1])
    assert compiled(folder) == compiled(published)
    text = (folder / "ieee802-dot1q-psfp.yang").read_text()
    assert "uses ieee802:rational-grouping" not in text and "leaf numerator" in text


@pytest.mark.parametrize("path", sorted(YANG.glob("*.yang")), ids=lambda p: p.name)
def test_every_pinned_module_prints_back_as_the_same_statements(path: Path) -> None:
    module = parse(path.read_text())
    assert parse(to_text(module)) == module


@pytest.mark.parametrize(("text", "named"), [
    ('module m { description "open; }', "not closed"),
    ("module m { leaf a { type uint8 } }", "not ended"),
    ("module m { leaf a;", "not closed"),
    ("module m { } leaf b;", "after the module"),
    ("{ }", "keyword expected"),
])
def test_text_that_is_not_yang_is_named(text: str, named: str) -> None:
    with pytest.raises(ModelError, match=named):
        parse(text)


@pytest.mark.parametrize(("inner", "named"), [
    ("uses g { when 'x'; }", "when"),
    ("uses nope:g;", "prefix nope"),
    ("uses missing;", "no grouping missing"),
    ("uses g { refine absent { must 'x'; } }", "no node absent"),
])
def test_a_uses_the_rewriting_cannot_keep_is_named(inner: str, named: str) -> None:
    module = parse(f'module m {{ prefix m; grouping g {{ leaf n {{ type uint8; }} }} grouping p {{ uses q {{ '
                   f'augment "c" {{ {inner} }} }} }} grouping q {{ container c; }} }}')
    with pytest.raises(ModelError, match=named):
        inlined(module, {})
