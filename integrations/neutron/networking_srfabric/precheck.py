"""The drivers' precommit check: before Neutron commits a change, srfabric is asked whether it would take it
(the same write with ``?dry_run=true``: checked against the chains it runs now, nothing sent to a switch). A
change srfabric would refuse (a path the header cannot encode, a symmetric chain through a function that rewrites
addresses, a chain the SR proxy cannot tell from another, a resource still in use, ...) is refused inside
Neutron's transaction with srfabric's own words, so the user gets the 400 or 409 from Neutron and no journal row
is written.

When srfabric cannot tell now, the change goes on and the journal carries it: srfabric is away, or it lacks a
resource the change names (404: an earlier change still in the journal). A refusal found only when the row is
sent is then marked failed in the journal, with srfabric's reason.

>>> answers = {"POST": (400, {"NeutronError": {"type": "SfcBadRequest", "message": "port pair p rewrites"}})}
>>> refusal(lambda method, path, body: answers[method], "port_chain", "create", {"id": "c"})
(400, 'port pair p rewrites')
>>> refusal(lambda method, path, body: (404, {}), "port_chain", "update", {"id": "c"}) is None
True
"""

from __future__ import annotations

import http.client

from networking_srfabric.sender import PATHS, Call, body, message

REFUSALS = (400, 409)  # what srfabric refuses outright; any other answer lets the journal carry the change


def refusal(call: Call, kind: str, operation: str, resource: dict[str, object]) -> tuple[int, str] | None:
    """(status, srfabric's message) when srfabric would refuse ``operation`` of ``resource``; None otherwise."""
    collection = PATHS[kind]
    member = f"{collection}/{resource['id']}"
    try:
        if operation == "create":
            status, answer = call("POST", f"{collection}?dry_run=true", body(kind, "create", resource))
        elif operation == "update":
            status, answer = call("PUT", f"{member}?dry_run=true", body(kind, "update", resource))
        else:
            status, answer = call("DELETE", f"{member}?dry_run=true", None)
    except (OSError, http.client.HTTPException):  # away: the journal keeps the change until it is back
        return None
    if status not in REFUSALS:
        return None
    return status, message(answer) or f"HTTP {status}"
