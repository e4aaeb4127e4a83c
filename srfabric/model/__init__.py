"""Pure data: the fabric (switches, links, hosts, service functions) and chains."""

from srfabric.model.chain import Alternative, Chain, FlowClassifier
from srfabric.model.fabric import Endpoint, Fabric, Host, ServiceFunction, Switch

__all__ = ["Alternative", "Chain", "Endpoint", "Fabric", "FlowClassifier", "Host", "ServiceFunction", "Switch"]
