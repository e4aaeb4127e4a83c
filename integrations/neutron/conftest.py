"""The package's modules that need Neutron are checked in its own venv (tests/integration/neutron); where Neutron
is not installed, their doctests are not collected."""

import importlib.util

NEEDS_NEUTRON = ["networking_srfabric/drivers.py", "networking_srfabric/config.py", "networking_srfabric/worker.py",
                 "networking_srfabric/wsgi.py", "networking_srfabric/stack.py", "networking_srfabric/keystone_wsgi.py",
                 "networking_srfabric/identity.py", "networking_srfabric/sync_command.py"]
collect_ignore = [] if importlib.util.find_spec("neutron_lib") else NEEDS_NEUTRON
