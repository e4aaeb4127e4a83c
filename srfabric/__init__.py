"""srfabric: source-routed service chains and time-sensitive flows on SDN fabrics."""

__version__ = "0.1.0"
