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


def test_every_pinned_module_printed_back_compiles_to_the_same_schema(tmp_path: Path) -> None:
    printed = tmp_path / "printed"
    printed.mkdir()
    published = sorted(YANG.glob("*.yang"))
    for path in published:
        text = to_text(parse(path.read_text()))
        assert to_text(parse(text)) == text
        (printed / path.name).write_text(text)
    for path in published:
        assert info(path, YANG) == info(printed / path.name, printed), path.name


def info(path: Path, folder: Path) -> str:
    done = subprocess.run(["yanglint", "-p", str(folder), "-f", "info", str(path)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("text", "named"), [
    ('module m { description "open; }', "not closed"),
    ("module m { leaf a { type uint8 } }", "not ended"),
    ("module m { leaf a;", "not closed"),
    ("module m { } leaf b;", "after the module"),
    ("{ }", "keyword expected"),
    ("module m { reference http://a; }", "comment sequence"),
    ('module m { d "a" "b"; }', "more than one argument"),
    ("module m { /* open }", "comment opened at offset 11 is not closed"),
    ('module m {\n\tdescription "a\n\t\t  b"; }', "follows a tab"),
])
def test_text_that_is_not_yang_is_named(text: str, named: str) -> None:
    with pytest.raises(ModelError, match=named):
        parse(text)


@pytest.mark.parametrize(("inner", "named"), [
    ("uses g { when 'x'; }", "when"),
    ("uses nope:g;", "prefix nope"),
    ("uses missing;", "no grouping missing"),
    ("uses g { refine absent { must 'x'; } }", "no node absent"),
    ("uses g { refine n { units s; } }", "its units is not one"),
    ("uses g { augment n { when 'x'; leaf z { type uint8; } } }", "augment n.*when"),
    ("uses nested;", "has a typedef"),
    ("uses tt:xpath;", "names another module's nodes"),
    ("uses tt:feature;", "is an expression"),
    ("uses tt:identity-default;", "default may name an identity"),
    ("uses tt:extended;", "is an extension"),
    ("uses tt:deep;", "has a typedef"),
])
def test_a_uses_the_rewriting_cannot_keep_is_named(inner: str, named: str) -> None:
    with pytest.raises(ModelError, match=named):
        inlined(parse(MODULE.format(inner=inner)), {"t": parse(OTHER)})


MODULE = """module m {{ prefix m; import t {{ prefix tt; }}
  grouping g {{ leaf n {{ type uint8; }} list l {{ key "index"; leaf index {{ type uint8; }} }} }}
  grouping nested {{ typedef h {{ type uint8; }} leaf n {{ type h; }} }}
  grouping p {{ uses q {{ augment "c" {{ {inner} }} }} }}
  grouping q {{ container c; }} }}"""
OTHER = """module t { prefix t; feature f; feature f2; identity base-id;
  grouping xpath { leaf x { type uint8; must "../t:y"; } }
  grouping feature { leaf x { if-feature "f or f2"; type uint8; } }
  grouping typed { leaf x { type identityref { base base-id; } } uses more; }
  grouping more { leaf y { if-feature f; type uint8; must "../x = 'a:b'"; } }
  grouping identity-default { leaf x { type identityref { base base-id; } default base-id; } }
  grouping extended { leaf x { type uint8; ext:note "x"; } }
  grouping deep { container k { typedef loc { type uint8; } leaf y { type loc; } } } }"""


def test_a_refine_adds_musts_and_features_and_replaces_the_rest_on_the_node_it_names_not_a_key() -> None:
    refine = ("uses g { refine l/index { must 'x'; if-feature tt:f; description 'new'; } "
              "refine n { mandatory true; description 'n'; } }")
    rewritten = inlined(parse(MODULE.format(inner=refine)), {"t": parse(OTHER)})
    assert rewritten is not None
    container = next(s for s in rewritten.walk() if s.keyword == "augment")
    leaf_n, listed = container.children or []
    assert [(c.keyword, c.value) for c in listed.find("leaf").children or []] == [
        ("type", "uint8"), ("must", "x"), ("if-feature", "tt:f"), ("description", "new")]
    assert listed.find("key").value == "index" and leaf_n.find("mandatory").value == "true"


def test_another_modules_grouping_comes_with_its_names_under_the_prefixes_the_module_imports() -> None:
    rewritten = inlined(parse(MODULE.format(inner="uses tt:typed;")), {"t": parse(OTHER)})
    assert rewritten is not None
    text = to_text(rewritten)
    assert "base tt:base-id;" in text and "if-feature tt:f;" in text and "leaf y" in text



def test_a_moved_argument_keeps_its_text_and_a_single_quoted_string_stays_as_written() -> None:
    module = parse("module m {\n      description \"a\n                   b\";\n      reference 'c\n   d';\n"
                   "      default +; }")
    printed = to_text(module)
    assert 'description "a\n               b";' in printed  # moved 4 columns left with its quote
    assert "reference 'c\n   d';" in printed and "default +;" in printed
