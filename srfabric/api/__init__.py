"""The northbound REST API: networking-sfc's resources on srfabric's controller (``srfabric serve``)."""
