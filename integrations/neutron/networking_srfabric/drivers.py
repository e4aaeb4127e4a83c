"""networking-sfc's SFC and flow-classifier drivers and an ML2 mechanism driver named ``srfabric``: each change
is recorded in the journal inside Neutron's own transaction (its precommit) and the worker is woken after the
commit (its postcommit), as networking-odl does. The ML2 driver binds the ports that name a fabric switch and
port in their ``binding:profile``, and shows them in the binding's details."""

from __future__ import annotations

import abc
import logging
from typing import Any

from networking_sfc.services.flowclassifier.drivers import base as fc_base
from networking_sfc.services.sfc.drivers import base as sfc_base
from neutron_lib import exceptions as n_exc
from neutron_lib.api.definitions import portbindings
from neutron_lib.db import api as db_api
from neutron_lib.plugins.ml2 import api as ml2

from networking_srfabric import binding
from networking_srfabric.config import options
from networking_srfabric.journal import record, unsent
from networking_srfabric.precheck import refusal
from networking_srfabric.sender import CHANGED, http_call
from networking_srfabric.worker import worker

LOG = logging.getLogger(__name__)


class SrfabricRefuses(n_exc.BadRequest):
    message = "srfabric refuses this change: %(reason)s"


class SrfabricConflict(n_exc.Conflict):
    message = "srfabric refuses this change: %(reason)s"


def _journal(context: Any, kind: str, operation: str) -> None:
    """One row for ``context.current``, in the transaction the change is in, once srfabric said it would take
    the change (``precheck``); an update's row names the fields it changed (srfabric, as Neutron, refuses some
    fields in an update even unchanged: a chain's in a graph)."""
    current = dict(context.current)
    original = getattr(context, "original", None)
    if operation == "update" and original:
        current[CHANGED] = sorted(name for name, value in current.items() if original.get(name) != value)
    conf = options()
    # Neutron's own ports (DHCP, routers) need no asking; a delete Neutron allows (it checks what is in use
    # itself) is srfabric's to follow.
    if kind != "port" and operation != "delete" and conf.precommit_check:
        refused = refusal(http_call(conf.url, conf.token, conf.check_timeout), kind, operation, current)
        if refused is not None and refused[0] == 409 and unsent(context._plugin_context.session.connection()):
            # srfabric is behind: the conflict may be with what an unsent row removes (a chain deleted, its
            # classifier taken again at once). The journal carries the change; srfabric judges it in order.
            refused = None
        if refused is not None:
            LOG.info("srfabric refuses %s %s %s: %s", operation, kind, current["id"], refused[1])
            raise (SrfabricConflict if refused[0] == 409 else SrfabricRefuses)(reason=refused[1])
    record(context._plugin_context.session.connection(), kind, current["id"], operation, current)


def _wake() -> None:
    worker(db_api.CONTEXT_WRITER.get_engine()).wake()


class SrfabricSfcDriver(sfc_base.SfcDriverBase):
    """Port chains, port pairs, port pair groups and service graphs, journaled for srfabric."""

    def initialize(self) -> None:
        worker(db_api.CONTEXT_WRITER.get_engine())

    # networking-sfc's legacy calls: the work is in the precommit and postcommit hooks below.
    def create_port_chain(self, context: Any) -> None: ...
    def update_port_chain(self, context: Any) -> None: ...
    def delete_port_chain(self, context: Any) -> None: ...
    def create_port_pair(self, context: Any) -> None: ...
    def update_port_pair(self, context: Any) -> None: ...
    def delete_port_pair(self, context: Any) -> None: ...
    def create_port_pair_group(self, context: Any) -> None: ...
    def update_port_pair_group(self, context: Any) -> None: ...
    def delete_port_pair_group(self, context: Any) -> None: ...


class SrfabricFlowClassifierDriver(fc_base.FlowClassifierDriverBase):
    """Flow classifiers, journaled for srfabric."""

    def initialize(self) -> None:
        worker(db_api.CONTEXT_WRITER.get_engine())

    def create_flow_classifier(self, context: Any) -> None: ...
    def update_flow_classifier(self, context: Any) -> None: ...
    def delete_flow_classifier(self, context: Any) -> None: ...


def _hooks(cls: type, kinds: tuple[str, ...]) -> None:
    """Every kind's create/update/delete precommit records the change; every postcommit wakes the worker."""
    for kind in kinds:
        for operation in ("create", "update", "delete"):
            setattr(cls, f"{operation}_{kind}_precommit",
                    lambda self, context, k=kind, o=operation: _journal(context, k, o))
            setattr(cls, f"{operation}_{kind}_postcommit", lambda self, context: _wake())


_hooks(SrfabricSfcDriver, ("port_chain", "port_pair", "port_pair_group", "service_graph"))
_hooks(SrfabricFlowClassifierDriver, ("flow_classifier",))
abc.update_abstractmethods(SrfabricSfcDriver)  # the hooks set above implement abstract ones
abc.update_abstractmethods(SrfabricFlowClassifierDriver)


class SrfabricMechanismDriver(ml2.MechanismDriver):
    """Neutron's ports, journaled for srfabric; binds those on a fabric switch port (``binding``)."""

    def initialize(self) -> None:
        worker(db_api.CONTEXT_WRITER.get_engine())

    @property
    def connectivity(self) -> str:
        """Layer 2: a service function's ports carry no address of their own, and Neutron binds an address-less
        port only with a driver of L2 connectivity."""
        return str(portbindings.CONNECTIVITY_L2)

    def bind_port(self, context: Any) -> None:
        port = context.current
        where = binding.attachment(port, None)
        if where is None:  # a host's port: where srfabric learned its MAC
            conf = options()
            where = binding.attachment(port, binding.learned_fabric(http_call(conf.url, conf.token,
                                                                              conf.check_timeout)))
        if where is None:
            return  # not on the fabric (or not learned yet): another driver may bind it
        for segment in context.segments_to_bind:
            context.set_binding(segment[ml2.ID], "other", {"srfabric_switch": where[0], "srfabric_port": where[1]},
                                status="ACTIVE")
            return


_hooks(SrfabricMechanismDriver, ("port",))
