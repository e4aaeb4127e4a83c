"""One NETCONF session to one bridge (ncclient over SSH), with every failure turned into an error naming the
bridge: ``Unavailable`` when it cannot be reached or does not answer in time, ``ModelError`` when it answers
with a refusal (an ``<rpc-error>``: its tag and message)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import ncclient.transport.session as ncclient_session
from ncclient import NCClientError, manager
from ncclient.operations import RPCError, TimeoutExpiredError

from srfabric.errors import ModelError, Unavailable
from srfabric.model.management import BridgeAccess
from srfabric.rules.yang.sched_tables import PortTable, port_tables

# ncclient's session thread sends a queued request only when its select() wakes, every TICK seconds (0.1 by
# default), which adds up to 100 ms to every request; 2 ms keeps a request's wait short for little CPU.
ncclient_session.TICK = 0.002

log = logging.getLogger(__name__)
T = TypeVar("T")
TABLES = ('<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><interface><name/><bridge-port '
          'xmlns="urn:ieee:std:802.1Q:yang:ieee802-dot1q-bridge"><gate-parameter-table '
          'xmlns="urn:ieee:std:802.1Q:yang:ieee802-dot1q-sched-bridge"/></bridge-port></interface></interfaces>')


class BridgeSession:
    """A bridge's session, opened on first use and again after it broke."""

    def __init__(self, access: BridgeAccess, connect: Callable[..., Any] = manager.connect) -> None:
        self.access = access
        self._connect = connect
        self._manager: Any = None

    @property
    def name(self) -> str:
        return self.access.name

    def _session(self) -> Any:
        if self._manager is None or not self._manager.connected:
            access = self.access
            self._manager = self._connect(
                host=access.host, port=access.port, username=access.username, password=access.password,
                key_filename=access.key_file, hostkey_verify=False, allow_agent=access.key_file is None,
                look_for_keys=False, timeout=access.timeout_s)
            self._manager.timeout = access.timeout_s
        return self._manager

    def call(self, what: str, action: Callable[[Any], T]) -> T:
        """``action`` on the open session; errors name the bridge and ``what`` was asked."""
        where = f"bridge {self.name}"
        try:
            return action(self._session())
        except RPCError as error:
            raise ModelError(where, f"{what} refused: {refusal(error)}") from None
        except (NCClientError, OSError, EOFError, ValueError) as error:  # ValueError: a name no resolver takes
            self.close()
            reason = str(error).strip() or type(error).__name__
            if isinstance(error, TimeoutExpiredError) or "timed out" in reason:
                raise Unavailable(where, f"{what}: no answer within {self.access.timeout_s:g} s") from None
            raise Unavailable(where, f"{what}: unreachable at {self.access.host}:{self.access.port} "
                                     f"({reason[:200]})") from None

    def edit_and_commit(self, config: str, token: str, confirm_timeout_s: int) -> None:
        """The edit into the candidate, then a confirmed commit that rolls back unless confirmed with ``token``."""
        def both(session: Any) -> None:
            session.discard_changes()
            session.edit_config(target="candidate", config=config)
            session.commit(confirmed=True, timeout=str(confirm_timeout_s), persist=token)
        self.call("edit and confirmed commit", both)

    def confirm(self, token: str) -> None:
        self.call("confirming commit", lambda session: session.commit(persist_id=token))

    def cancel(self, token: str) -> None:
        self.call("cancel-commit", lambda session: session.cancel_commit(persist_id=token))

    def discard(self) -> None:
        self.call("discard-changes", lambda session: session.discard_changes())

    def tables(self) -> dict[str, PortTable]:
        """Every port's gate-parameter-table, configuration and state."""
        reply = self.call("get", lambda session: session.get(filter=("subtree", TABLES)).data_xml)
        return port_tables(reply, self.name)

    def close(self) -> None:
        if self._manager is not None:
            try:
                self._manager.close_session()
            except Exception:  # noqa: BLE001 - a broken session closes as it can
                log.debug("session to %s closed uncleanly", self.name)
            self._manager = None


def refusal(error: RPCError) -> str:
    """An ``<rpc-error>`` reply in one line: the first error's tag, then each distinct message (a reply with
    several errors is one ``RPCError`` holding them, without a tag of its own)."""
    errors = getattr(error, "errors", None) or [error]
    tag = getattr(errors[0], "_tag", None) or "error"
    messages = list(dict.fromkeys(" ".join((getattr(e, "_message", None) or "").split()) for e in errors))
    shown = "; ".join(m for m in messages if m) or "(no message)"
    more = f" ({len(errors)} errors)" if len(errors) > 1 else ""
    return f"{tag}{more}: {shown}"[:400]
