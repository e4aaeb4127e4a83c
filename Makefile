# srfabric: `make demo` runs the main job, `make test` runs every test. Both bootstrap first.
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: bootstrap demo neutron-demo test unit integration lint typecheck docs results bench-ab clean

bootstrap:
	bash scripts/bootstrap.sh

demo: bootstrap
	$(VENV)/bin/srfabric demo

# srfabric under OpenStack: MariaDB, Keystone, Neutron with networking-sfc, a Mininet fabric, a chain made with
# the openstack client. `make neutron-demo KEEP=1` leaves it running until Ctrl-C.
neutron-demo: bootstrap
	$(VENV)/bin/srfabric neutron-demo $(if $(KEEP),--keep)

test: bootstrap lint typecheck docs
	$(PY) -m pytest -q -p no:cacheprovider --durations=30

unit: bootstrap
	$(PY) -m pytest -q -p no:cacheprovider -m "not integration and not system"

integration: bootstrap
	$(PY) -m pytest -q -p no:cacheprovider -m integration

lint: bootstrap
	$(VENV)/bin/ruff check srfabric tools tests integrations
	$(VENV)/bin/lint-imports

typecheck: bootstrap
	$(VENV)/bin/mypy

# The documentation site (MkDocs, Material theme) into build/site; --strict: a broken link fails the build. The
# results index is committed (`srfabric bench index --out docs/results`); a test fails when it is stale.
docs: bootstrap
	NO_MKDOCS_2_WARNING=1 .venv-docs/bin/mkdocs build --strict --quiet

# Every committed result again at this commit (root; about five hours on two cores), then the results index: the
# host benchmarks (faucet and os-ken run inside `bench capacity`, os-ken on real Open vSwitch in `bench
# capacity-ovs`), the service-chain lab, each TSN experiment in the kernel lab with the repetitions its committed
# runs used, and `bench datapaths` there (Open vSwitch's kernel datapath beside XDP). `make results QUICK=1`:
# smoke runs of all of them into build/results instead.
RESULTS := $(if $(QUICK),build/results,docs/results)
TSN_LAB := "tsn-fig9 --reps 3 --seconds 5" "tsn-tables23 --reps 2 --seconds 5" "tsn-fig10 --reps 3 --seconds 4" \
	"tsn-fig11 --reps 2 --seconds 8" "tsn-fig12 --reps 2 --seconds 8" "tsn-frer" \
	"tsn-fig9-netconf --reps 3 --seconds 5" "tsn-fig11-netconf --reps 2 --seconds 8" "tsn-netconf-changes --reps 1" \
	"tsn-protect --reps 3 --seconds 20"
results: bootstrap
	mkdir -p $(RESULTS)
	for bench in dataplane capacity capacity-ovs capacity-tables deploy tsn tsnkit hostile reconnect neutron netconf; do \
	  $(VENV)/bin/srfabric bench $$bench $(if $(QUICK),--quick) --out $(RESULTS) || exit 1; done
	$(VENV)/bin/srfabric bench failover --part all $(if $(QUICK),--quick) --out $(RESULTS)
	$(VENV)/bin/srfabric bench failover --frer $(if $(QUICK),--quick) --out $(RESULTS)
	$(VENV)/bin/srfabric lab all $(if $(QUICK),--quick) --out $(RESULTS)
	for run in $(TSN_LAB); do set -- $$run; name=$$1; shift; \
	  $(VENV)/bin/srfabric kernel-lab run --timeout 7000 --ovs --share $(CURDIR)/$(RESULTS) -- \
	    $(VENV)/bin/srfabric lab $$name $(if $(QUICK),--quick,$$*) --out $(CURDIR)/$(RESULTS) || exit 1; done
	$(VENV)/bin/srfabric kernel-lab run --timeout 7000 --ovs --share $(CURDIR)/$(RESULTS) -- \
	  $(VENV)/bin/srfabric bench datapaths $(if $(QUICK),--quick) --out $(CURDIR)/$(RESULTS)
	$(VENV)/bin/srfabric bench index --out $(RESULTS)

# The regression guard: this checkout against BASE (a commit), the quick forms of the controller's capacity and
# of S/FR and S/PR, run alternately ROUNDS times; fails when a series is over BASE beyond its spread.
bench-ab: bootstrap
	$(if $(BASE),,$(error make bench-ab needs BASE=<commit>))
	$(VENV)/bin/srfabric bench ab --base $(BASE) --rounds $(or $(ROUNDS),6) --out build/results

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
