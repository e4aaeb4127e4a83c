"""YANG documents as NETCONF XML: what srfabric sends to a bridge and reads from it."""
