"""The shape the code keeps: no private name imported across modules, no import cycle, files and controller
classes small, and every kind of action carried by every back end (the type checker proves the dispatch
exhaustive; this proves each kind survives the wire)."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import networkx as nx
import pytest

from srfabric.rules import entries as e
from srfabric.rules.entries import Action
from srfabric.rules.openflow.ofbind import bind_action
from srfabric.rules.openflow.readback import action_from_ofp
from srfabric.southbound.ofctl_text import action_text

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "srfabric"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[ast.ImportFrom]:
    return [node for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("srfabric")]


def test_no_module_imports_a_private_name_from_another() -> None:
    found = [f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{alias.name}"
             for folder in (PACKAGE, ROOT / "tests") for path in sorted(folder.rglob("*.py"))
             for node in imports(path) for alias in node.names if alias.name.startswith("_")]
    assert found == []


def test_no_import_cycle() -> None:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in modules.items():
        for node in imports(path):
            assert node.module is not None
            for target in (node.module, *(f"{node.module}.{alias.name}" for alias in node.names)):
                if target in modules and target != name:
                    graph.add_edge(name, target)
    assert [sorted(cycle) for cycle in nx.strongly_connected_components(graph) if len(cycle) > 1] == []


def test_no_function_in_the_product_is_over_60_lines() -> None:
    long = [f"{path.relative_to(ROOT)}:{node.name} ({node.end_lineno - node.lineno + 1})"
            for path in sorted(PACKAGE.rglob("*.py")) for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno
            and node.end_lineno - node.lineno + 1 > 60]
    assert long == []


def test_no_folder_in_the_product_holds_over_20_modules() -> None:
    crowded = [f"{folder.relative_to(ROOT)} ({count})" for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")})
               if "migrations" not in folder.parts
               and (count := sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")) > 20]
    assert crowded == []


def test_files_and_controller_classes_stay_small() -> None:
    big = [f"{path.relative_to(ROOT)} ({lines})" for path in sorted(PACKAGE.rglob("*.py"))
           if (lines := len(path.read_text().splitlines())) > 400]
    assert big == []
    classes = [f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1})"
               for path in sorted((PACKAGE / "controller").glob("*.py"))
               for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.ClassDef) and node.end_lineno and node.end_lineno - node.lineno + 1 > 250]
    assert classes == []


ONE_OF_EACH: list[Action] = [e.Output(3), e.OutputBits("eth_src", 4, 4), e.LoadBits("eth_src", 44, 4, 2),
                             e.MoveBits("eth_src", 0, "reg0", 8, 4), e.SetField("eth_dst", 0x0A), e.PushVlan(),
                             e.PopVlan(), e.PushMpls(), e.PopMpls(), e.SetMplsTtl(7), e.ToController(), e.SetQueue(6),
                             e.Group(9)]


INSTRUCTION_ONLY = {e.Meter}  # an entry's first action, sent as OpenFlow 1.3's meter instruction (test_ofbind)


def test_the_sample_holds_every_kind_of_action() -> None:
    assert {type(action) for action in ONE_OF_EACH} | INSTRUCTION_ONLY == set(typing.get_args(Action))


@pytest.mark.parametrize("action", ONE_OF_EACH, ids=lambda action: type(action).__name__)
def test_every_kind_of_action_survives_the_wire_and_has_a_text(action: Action) -> None:
    from os_ken.ofproto import ofproto_v1_3_parser as parser


    bound = bind_action(action)
    buf = bytearray()
    bound.serialize(buf, 0)
    assert action_from_ofp(parser.OFPAction.parser(bytes(buf), 0)) == action
    assert action_text(action)
