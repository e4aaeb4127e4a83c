"""srfabric inside OpenStack Neutron: networking-sfc and ML2 drivers that hand Neutron's changes to srfabric
through a journal kept in Neutron's own database."""
