"""Every scheduling method, behind one registry (:mod:`srfabric.tsn.schedulers.registry`)."""
