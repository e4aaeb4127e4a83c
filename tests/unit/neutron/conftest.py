"""The real ``srfabric serve`` fixture, for every test of the drivers."""

from tests.unit.neutron.test_sender import serve  # noqa: F401  (a fixture)
