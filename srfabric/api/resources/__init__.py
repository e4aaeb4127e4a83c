"""networking-sfc's resource kinds: their schemas, their checks, what every kind's checks share, and their
translation into srfabric's model and views."""
