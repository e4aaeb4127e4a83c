"""A published module rewritten for netconfd 2.13 (yuma123), which does not expand a ``uses`` that sits in an
``augment`` inside another ``uses`` (``ieee802-dot1q-psfp`` has such: its stream gates' cycle times, base times
and gate lists; netconfd then names ``numerator``, ``seconds`` and ``gate-control-entry`` unknown elements).
Each such ``uses`` is replaced by its grouping's statements, its ``refine`` and ``augment`` applied, the
grouping's own names given the prefix the module imports its module under. What it cannot rewrite faithfully
(a ``when`` or ``if-feature`` on such a ``uses`` or its ``augment``, a prefix inside an XPath expression of
another module's grouping, a grouping with its own groupings or typedefs) is refused, naming it. For the pinned
modules the compiled schema is unchanged: the tests compare ``yanglint -f info`` of the published set with the
rewritten one. A module without such a ``uses`` is left as it is (``None``).

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

import re
from collections.abc import Mapping

from srfabric.bridge.yang_text import Statement, parse, to_text
from srfabric.errors import ModelError

__all__ = ["inlined", "parse", "to_text"]

BUILTIN = frozenset({"binary", "bits", "boolean", "decimal64", "empty", "enumeration", "identityref",
                     "instance-identifier", "int8", "int16", "int32", "int64", "leafref", "string", "uint8",
                     "uint16", "uint32", "uint64", "union"})
NAMED = frozenset({"type", "base", "uses", "if-feature"})  # statements whose argument names a module's definition
LEFT_OUT = frozenset({"description", "reference", "status"})  # a grouping's own, not its data
XPATH = frozenset({"must", "when", "path"})  # arguments whose prefixes are not rewritten
LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")  # an XPath expression's string literals, whose colons name nothing
PREFIXED = re.compile(r"[A-Za-z_][\w.-]*:[A-Za-z_]")
ADDED = frozenset({"must", "if-feature"})  # a refine's statements added to the node's
REPLACED = frozenset({"description", "reference", "config", "default", "mandatory", "presence", "min-elements",
                      "max-elements"})  # and those that replace the node's
DATA = frozenset({"container", "leaf", "leaf-list", "list", "choice", "case", "anydata", "anyxml", "action",
                  "notification", "input", "output"})
NAME = re.compile(r"([A-Za-z_][\w.-]*:)?[A-Za-z_][\w.-]*")


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
    where = f"yang uses {uses.value}"
    _refuse(uses, ("when", "if-feature"), where)
    prefix, _, name = uses.value.rpartition(":")
    source = module if prefix in ("", _prefix(module)) else imported.get(_module_of(module, prefix), None)
    if source is None:
        raise ModelError(where, f"its module (prefix {prefix}) is not among those given")
    grouping = next((g for g in source.all("grouping") if g.value == name), None)
    if grouping is None:
        raise ModelError(where, f"{source.value} has no grouping {name} at its top level")
    for inner in grouping.walk():  # names scoped inside the grouping are not rewritten
        _refuse(inner, ("grouping", "typedef"), where)
    body = [child.copied() for child in grouping.children or [] if child.keyword not in LEFT_OUT]
    if source is not module:
        for statement in body:
            _qualify(statement, source, module)
    body = _expanded(body, module, imported)  # a refine or augment may name a node a nested uses brings
    for refine in uses.all("refine"):
        _refined(_target(body, refine), refine)
    for augment in uses.all("augment"):
        _refuse(augment, ("when", "if-feature"), f"{where} augment {augment.value}")  # they bind the added nodes
        target = _target(body, augment)
        target.children = (target.children or []) + [c for c in augment.children or [] if c.keyword not in LEFT_OUT]
    return body


def _refuse(statement: Statement, keywords: tuple[str, ...], where: str) -> None:
    for keyword in keywords:
        if statement.all(keyword):
            raise ModelError(where, f"has a {keyword}, which this rewriting does not keep")


def _qualify(statement: Statement, source: Statement, module: Statement) -> None:
    """Each name ``statement`` holds from ``source`` (its own, or another module's under ``source``'s prefix)
    given the prefix ``module`` imports that module under. ``ModelError`` for a name this cannot rewrite: a
    prefix in an XPath expression, an identity as a default, an ``if-feature`` expression, an extension."""
    for inner in statement.walk():
        where = f"yang {inner.keyword} {inner.value}"
        if ":" in inner.keyword:
            raise ModelError(where, f"is an extension in a grouping of {source.value}: not rewritten")
        if inner.keyword in XPATH and PREFIXED.search(LITERAL.sub("", inner.value)):
            raise ModelError(where, f"names another module's nodes in a grouping of {source.value}: not rewritten")
        if inner.all("default") and _may_name(inner):
            raise ModelError(where, f"its default may name an identity of {source.value}'s: not rewritten")
        if inner.keyword not in NAMED or (inner.keyword == "type" and inner.value in BUILTIN):
            continue
        if not NAME.fullmatch(inner.value):
            raise ModelError(where, "is an expression, not a name: not rewritten")
        prefix, _, name = inner.value.rpartition(":")
        home = source.value if prefix in ("", _prefix(source)) else _module_of(source, prefix)
        mine = _prefix(module) if home == module.value else _import_prefix(module, home)
        inner.argument = f"{mine}:{name}"


def _may_name(leaf: Statement) -> bool:
    """Whether a default of ``leaf`` may be a name resolved in the grouping's module: its type is an identityref,
    an instance-identifier, or a typedef this does not look into."""
    types = leaf.all("type")
    return bool(types) and (types[0].value in ("identityref", "instance-identifier")
                            or types[0].value not in BUILTIN)


def _refined(node: Statement, refine: Statement) -> None:
    """``refine``'s statements onto ``node`` (RFC 7950 7.13.2): a ``must`` or ``if-feature`` is added, any other
    replaces the one ``node`` has; ``ModelError`` for one this does not apply."""
    node.children = node.children or []
    for change in refine.children or []:
        if change.keyword not in ADDED | REPLACED or (change.keyword == "default" and node.keyword == "leaf-list"):
            raise ModelError(f"yang refine {refine.value}", f"its {change.keyword} is not one this rewriting applies")
        if change.keyword in REPLACED:
            node.children = [c for c in node.children if c.keyword != change.keyword]
        node.children.append(change.copied())


def _target(body: list[Statement], where: Statement) -> Statement:
    """The node a ``refine`` or ``augment`` inside a ``uses`` names (a descendant path from the grouping)."""
    found: Statement | None = None
    children = body
    for step in where.value.split("/"):
        name = step.rpartition(":")[2]
        found = next((c for c in children if c.keyword in DATA and c.value == name), None)
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
