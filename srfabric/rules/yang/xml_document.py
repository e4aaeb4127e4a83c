"""RFC 7951 JSON documents (as :func:`srfabric.tsn.gates.render.to_yang` writes them) as NETCONF XML: a member
named ``module:name`` starts that module's namespace, a list repeats its element, an identity value
(``module:identity``) gets its module's prefix declared where it is used.

Examples
--------
>>> print(to_xml({"ietf-interfaces:interfaces": {"interface": [{"name": "s1-eth1", "enabled": True}]}}))
<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><interface><name>s1-eth1</name>...
>>> print(to_xml({"ietf-interfaces:interfaces": {"interface": [{"type": "iana-if-type:ethernetCsmacd"}]}}))
<interfaces ...><interface><type xmlns:ianaift="urn:...:iana-if-type">ianaift:ethernetCsmacd</type></interface>...
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from srfabric.errors import ModelError

# The modules srfabric's documents use: namespace, and the prefix their identities are written with.
MODULES: dict[str, tuple[str, str]] = {
    "ietf-interfaces": ("urn:ietf:params:xml:ns:yang:ietf-interfaces", "if"),
    "iana-if-type": ("urn:ietf:params:xml:ns:yang:iana-if-type", "ianaift"),
    "ieee802-dot1q-bridge": ("urn:ieee:std:802.1Q:yang:ieee802-dot1q-bridge", "dot1q"),
    "ieee802-dot1q-sched": ("urn:ieee:std:802.1Q:yang:ieee802-dot1q-sched", "sched"),
    "ieee802-dot1q-sched-bridge": ("urn:ieee:std:802.1Q:yang:ieee802-dot1q-sched-bridge", "sched-bridge"),
    "ieee802-dot1q-psfp": ("urn:ieee:std:802.1Q:yang:ieee802-dot1q-psfp", "psfp"),
    "ieee802-dot1q-psfp-bridge": ("urn:ieee:std:802.1Q:yang:ieee802-dot1q-psfp-bridge", "psfp-bridge"),
    "ieee802-dot1cb-stream-identification": ("urn:ieee:std:802.1Q:yang:ieee802-dot1cb-stream-identification",
                                             "dot1cb-sid"),
}
NETCONF_BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
OPERATION = "ietf-netconf:operation"
OPERATIONS = frozenset({"merge", "replace", "create", "delete", "remove"})


def namespace(module: str) -> str:
    """The XML namespace of a module srfabric writes; ``ModelError`` for one it does not know."""
    if module not in MODULES:
        raise ModelError("module", f"{module!r} is not one of the modules srfabric writes: {sorted(MODULES)}")
    return MODULES[module][0]


def to_xml(document: dict[str, Any], replace: frozenset[str] = frozenset()) -> str:
    """Every top-level member of ``document`` as XML elements, one after the other; a node named in ``replace``
    carries NETCONF's ``operation="replace"`` (an edit's list replaces the one held, not merged into it by
    index), and a node whose ``"@"`` member asks for an operation carries that one instead (``_operation``)."""
    return "".join(_member(name, value, None, replace) for name, value in document.items())


def to_config(document: dict[str, Any], replace: frozenset[str] = frozenset()) -> str:
    """``document`` inside the ``<config>`` element an ``<edit-config>`` carries.

    >>> print(to_config({"ietf-interfaces:interfaces": {"interface": [{"name": "p"}]}}, frozenset({"interface"})))
    <config ...><interfaces ...><interface xmlns:nc="..." nc:operation="replace"><name>p</name></interface>...
    """
    return f'<config xmlns="{NETCONF_BASE}">{to_xml(document, replace)}</config>'


def _member(name: str, value: Any, module: str | None, replace: frozenset[str]) -> str:
    if isinstance(value, list):
        return "".join(_member(name, item, module, replace) for item in value)
    own, _, local = name.rpartition(":")
    attributes = ""
    if own and own != module:
        attributes, module = f' xmlns="{namespace(own)}"', own
    operation = _operation(value) or ("replace" if local in replace else None)
    if operation is not None:
        attributes += f' xmlns:nc="{NETCONF_BASE}" nc:operation="{operation}"'
    if isinstance(value, dict):
        body = "".join(_member(child, item, module, replace) for child, item in value.items() if child != "@")
    else:
        text, declared = _scalar(value)
        attributes += declared
        body = escape(text)
    return f"<{local}{attributes}>{body}</{local}>"


def _operation(value: Any) -> str | None:
    """The NETCONF operation a node's metadata asks for (RFC 7952's ``"@"`` member, as libyang writes it).

    >>> print(to_xml({"ietf-interfaces:interfaces": {"interface": [{"@": {OPERATION: "remove"}, "name": "p"}]}}))
    <interfaces ...><interface xmlns:nc="..." nc:operation="remove"><name>p</name></interface></interfaces>
    """
    if not isinstance(value, dict) or "@" not in value:
        return None
    operation = value["@"].get(OPERATION) if isinstance(value["@"], dict) else None
    if operation not in OPERATIONS:
        raise ModelError(f"@ {OPERATION}", f"{operation!r} is not one of {', '.join(sorted(OPERATIONS))}")
    return str(operation)


def _scalar(value: Any) -> tuple[str, str]:
    """A leaf's text, and the namespace declaration an identity value needs."""
    if isinstance(value, bool):
        return ("true" if value else "false"), ""
    if isinstance(value, int):
        return str(value), ""
    text = str(value)
    module, colon, identity = text.partition(":")
    if colon and module in MODULES:
        uri, prefix = MODULES[module]
        return f"{prefix}:{identity}", f' xmlns:{prefix}="{uri}"'
    return text, ""
