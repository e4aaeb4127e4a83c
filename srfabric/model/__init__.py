"""Pure data: the fabric (switches, links, hosts, service functions) and chains."""

from srfabric.model.chain import Chain, FlowClassifier
from srfabric.model.fabric import Endpoint, Fabric, Host, ServiceFunction, Switch

__all__ = ["Chain", "Endpoint", "Fabric", "FlowClassifier", "Host", "ServiceFunction", "Switch"]
