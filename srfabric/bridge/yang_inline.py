"""A published module rewritten for netconfd 2.13 (yuma123), which does not expand a ``uses`` that sits in an
``augment`` inside another ``uses`` (``ieee802-dot1q-psfp`` has such: its stream gates' cycle times, base times
and gate lists; netconfd then names ``numerator``, ``seconds`` and ``gate-control-entry`` unknown elements).
Each such ``uses`` is replaced by its grouping's statements, its ``refine`` and ``augment`` applied, the
grouping's own names given the prefix the module imports its module under. The schema tree is unchanged: the
tests compare ``yanglint``'s tree of the published module set with that of the rewritten one. A module without
such a ``uses`` is left as it is (``None``).

Examples
--------
>>> types = parse('module t { prefix t; typedef h { type uint8; } grouping g { leaf n { type h; } } }')
>>> module = parse('module m { prefix m; import t { prefix tt; } grouping p { uses q { augment "c" { '
...                'uses tt:g; } } } grouping q { container c; } }')
>>> print(to_text(inlined(module, {"t": types}).all("grouping")[0]), end="")
grouping p {
  uses q {
    augment "c" {
      leaf n {
        type tt:h;
      }
    }
  }
}
>>> inlined(types, {}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping

from srfabric.bridge.yang_text import Statement, parse, to_text
from srfabric.errors import ModelError

__all__ = ["inlined", "parse", "to_text"]

BUILTIN = frozenset({"binary", "bits", "boolean", "decimal64", "empty", "enumeration", "identityref",
                     "instance-identifier", "int8", "int16", "int32", "int64", "leafref", "string", "uint8",
                     "uint16", "uint32", "uint64", "union"})
NAMED = frozenset({"type", "base", "uses", "if-feature"})  # statements whose argument names a module's definition
LEFT_OUT = frozenset({"description", "reference", "status", "grouping", "typedef"})  # a grouping's own, not its data


def inlined(module: Statement, imported: Mapping[str, Statement]) -> Statement | None:
    """``module`` with each ``uses`` inside an ``augment`` of a ``uses`` replaced by what it stands for;
    ``imported`` holds the modules it imports, by name. ``None`` when it has no such ``uses``."""
    rewritten = module.copied()
    changed = False
    for uses in [s for s in rewritten.walk() if s.keyword == "uses"]:
        for augment in uses.all("augment"):
            if any(s.keyword == "uses" for s in augment.walk()):
                augment.children = _expanded(augment.children or [], rewritten, imported)
                changed = True
    return rewritten if changed else None


def _expanded(statements: list[Statement], module: Statement, imported: Mapping[str, Statement]) -> list[Statement]:
    """``statements`` with every ``uses`` among them, at any depth, replaced by its grouping's statements."""
    out: list[Statement] = []
    for statement in statements:
        if statement.keyword == "uses":
            out.extend(_expanded(_instance(statement, module, imported), module, imported))
            continue
        if statement.children is not None:
            statement.children = _expanded(statement.children, module, imported)
        out.append(statement)
    return out


def _instance(uses: Statement, module: Statement, imported: Mapping[str, Statement]) -> list[Statement]:
    """The grouping ``uses`` names, as ``module`` sees it: its statements with the ``uses``'s refinements."""
    for unsupported in ("when", "if-feature"):
        if uses.all(unsupported):
            raise ModelError(f"yang uses {uses.value}", f"has a {unsupported}, which this rewriting does not keep")
    prefix, _, name = uses.value.rpartition(":")
    source = module if prefix in ("", _prefix(module)) else imported.get(_module_of(module, prefix), None)
    if source is None:
        raise ModelError(f"yang uses {uses.value}", f"its module (prefix {prefix}) is not among those given")
    grouping = next((g for g in source.all("grouping") if g.value == name), None)
    if grouping is None:
        raise ModelError(f"yang uses {uses.value}", f"{source.value} has no grouping {name}")
    body = [child.copied() for child in grouping.children or [] if child.keyword not in LEFT_OUT]
    if source is not module:
        for statement in body:
            _qualify(statement, source, module)
    for refine in uses.all("refine"):
        _refined(_target(body, refine), refine)
    for augment in uses.all("augment"):
        target = _target(body, augment)
        target.children = (target.children or []) + [c for c in augment.children or [] if c.keyword not in LEFT_OUT]
    return body


def _qualify(statement: Statement, source: Statement, module: Statement) -> None:
    """Each name ``statement`` holds from ``source`` (its own, or another module's under ``source``'s prefix)
    given the prefix ``module`` imports that module under."""
    for inner in statement.walk():
        if inner.keyword not in NAMED or (inner.keyword == "type" and inner.value in BUILTIN):
            continue
        prefix, _, name = inner.value.rpartition(":")
        home = source.value if prefix in ("", _prefix(source)) else _module_of(source, prefix)
        mine = _prefix(module) if home == module.value else _import_prefix(module, home)
        inner.argument = f"{mine}:{name}"


def _refined(node: Statement, refine: Statement) -> None:
    """``refine``'s statements onto ``node``: a ``must`` is added, any other replaces the one ``node`` has."""
    node.children = node.children or []
    for change in refine.children or []:
        if change.keyword not in ("must", "description", "reference"):
            node.children = [c for c in node.children if c.keyword != change.keyword]
        if change.keyword not in ("description", "reference"):
            node.children.append(change.copied())


def _target(body: list[Statement], where: Statement) -> Statement:
    """The node a ``refine`` or ``augment`` inside a ``uses`` names (a descendant path from the grouping)."""
    found: Statement | None = None
    children = body
    for step in where.value.split("/"):
        name = step.rpartition(":")[2]
        found = next((c for c in children if c.argument is not None and c.value == name
                      and c.keyword not in ("must", "type", "description", "when")), None)
        if found is None:
            raise ModelError(f"yang {where.keyword} {where.value}", f"no node {name} in the grouping")
        children = found.children or []
    assert found is not None  # a path has at least one step
    return found


def _prefix(module: Statement) -> str:
    return module.find("prefix").value


def _module_of(module: Statement, prefix: str) -> str:
    for imported in module.all("import"):
        if imported.find("prefix").value == prefix:
            return imported.value
    raise ModelError(f"yang module {module.value}", f"imports nothing under the prefix {prefix}")


def _import_prefix(module: Statement, name: str) -> str:
    for imported in module.all("import"):
        if imported.value == name:
            return imported.find("prefix").value
    raise ModelError(f"yang module {module.value}", f"does not import {name}, whose names an inlined grouping uses")
