# srfabric: `make demo` runs the main job, `make test` runs every test. Both bootstrap first.
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: bootstrap demo neutron-demo test unit integration lint typecheck clean

bootstrap:
	bash scripts/bootstrap.sh

demo: bootstrap
	$(VENV)/bin/srfabric demo

# srfabric under OpenStack: MariaDB, Keystone, Neutron with networking-sfc, a Mininet fabric, a chain made with
# the openstack client. `make neutron-demo KEEP=1` leaves it running until Ctrl-C.
neutron-demo: bootstrap
	$(VENV)/bin/srfabric neutron-demo $(if $(KEEP),--keep)

test: bootstrap lint typecheck
	$(PY) -m pytest -q -p no:cacheprovider --durations=30

unit: bootstrap
	$(PY) -m pytest -q -p no:cacheprovider -m "not integration and not system"

integration: bootstrap
	$(PY) -m pytest -q -p no:cacheprovider -m integration

lint: bootstrap
	$(VENV)/bin/ruff check srfabric tests integrations

typecheck: bootstrap
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
