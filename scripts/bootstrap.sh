#!/usr/bin/env bash
# Install everything srfabric needs on Debian, as root. Safe to run again: each step checks first.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  openvswitch-switch mininet iperf3 d-itg ethtool iputils-ping iproute2 tcpdump
  clang llvm libbpf-dev bpftool python3-venv python3-scapy make gcc
  # Python's headers: srfabric's C scheduling loop is a module of the venv's Python.
  python3-dev
  # Firewall VNFs of the lab: iptables (legacy backend, as in the study) and nftables.
  iptables nftables
  # The REST API's tests run the same suite against PostgreSQL, in a cluster the test makes.
  postgresql
  # The web view's browser test: Debian's Chromium, headless, driven by Selenium through chromedriver.
  chromium chromium-driver
  # A kernel with taprio for QEMU: the rendered gate control lists are checked against it.
  linux-image-amd64 qemu-system-x86 busybox-static
  # gPTP (IEEE 802.1AS) on bridges and end stations: ptp4l, and pmc to read a bridge's sync state.
  linuxptp
  # The bridge side of --gates netconf: Debian's NETCONF server (yuma123) and its headers for srfabric's SIL
  # library, OpenSSH for the NETCONF sessions, and lxml for ncclient (the controller's NETCONF client).
  netconfd libyuma-dev openssh-server openssh-client python3-lxml
  # yanglint: every 802.1Qcw document srfabric emits is validated against the pinned IEEE modules (../shared/yang).
  libyang2-tools
  # OpenStack Neutron's database for the driver tests (its migrations are MySQL-only).
  mariadb-server
  # The monitoring test: Debian's Prometheus scrapes srfabric's /metrics.
  prometheus
)
VENV=.venv

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

# Debian's mininet module lives in /usr/bin/python3's site-packages, so the venv sees system packages.
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
stamp="$VENV/.installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ] \
    || [ tools/pyproject.toml -nt "$stamp" ]; then
  "$VENV/bin/pip" install -q --upgrade pip
  # srfabric, and its tools (tools/: benchmarks, labs, testbeds, the kernel lab), a package of their own outside
  # the runtime wheel whose commands join srfabric's.
  "$VENV/bin/pip" install -q -c constraints.txt -e ".[dev]" -e tools
  touch "$stamp"
fi

# tsnkit, whose simulator checks exported TSN schedules, pins its own dependencies and needs scipy, which it does
# not declare: it gets a virtualenv of its own.
TSNKIT_VENV=.venv-tsnkit
if [ ! -f "$TSNKIT_VENV/.installed" ] || [ tsnkit-constraints.txt -nt "$TSNKIT_VENV/.installed" ]; then
  [ -x "$TSNKIT_VENV/bin/python" ] || /usr/bin/python3 -m venv "$TSNKIT_VENV"
  "$TSNKIT_VENV/bin/pip" install -q -c tsnkit-constraints.txt tsnkit scipy
  touch "$TSNKIT_VENV/.installed"
fi

# OpenStack Neutron 29 with networking-sfc 23, Keystone 30 and srfabric's drivers (integrations/neutron): a venv of its own,
# since Neutron pins a dependency set of its own.
NEUTRON_VENV=.venv-neutron
if [ ! -f "$NEUTRON_VENV/.installed" ] || [ integrations/neutron/constraints.txt -nt "$NEUTRON_VENV/.installed" ] \
    || [ integrations/neutron/pyproject.toml -nt "$NEUTRON_VENV/.installed" ]; then
  [ -x "$NEUTRON_VENV/bin/python" ] || /usr/bin/python3 -m venv "$NEUTRON_VENV"
  "$NEUTRON_VENV/bin/pip" install -q -c integrations/neutron/constraints.txt neutron networking-sfc keystone \
    python-openstackclient python-neutronclient PyMySQL
  "$NEUTRON_VENV/bin/pip" install -q --no-deps -e integrations/neutron
  touch "$NEUTRON_VENV/.installed"
fi

# faucet 1.10, a peer under `bench capacity`: it pins os-ken 3.1 and a prometheus-client of its own, so it gets a
# virtualenv of its own.
FAUCET_VENV=.venv-faucet
if [ ! -f "$FAUCET_VENV/.installed" ] || [ faucet-constraints.txt -nt "$FAUCET_VENV/.installed" ]; then
  [ -x "$FAUCET_VENV/bin/python" ] || /usr/bin/python3 -m venv "$FAUCET_VENV"
  "$FAUCET_VENV/bin/pip" install -q -c faucet-constraints.txt faucet
  touch "$FAUCET_VENV/.installed"
fi

# MkDocs with the Material theme builds the documentation site (make docs): a venv of its own, pinned.
DOCS_VENV=.venv-docs
if [ ! -f "$DOCS_VENV/.installed" ] || [ docs-constraints.txt -nt "$DOCS_VENV/.installed" ]; then
  [ -x "$DOCS_VENV/bin/python" ] || /usr/bin/python3 -m venv "$DOCS_VENV"
  "$DOCS_VENV/bin/pip" install -q -c docs-constraints.txt mkdocs-material
  touch "$DOCS_VENV/.installed"
fi

# Open vSwitch runs in userspace here (no kernel module); start it when it is not running.
if ! ovs-vsctl --timeout=5 show >/dev/null 2>&1; then
  /usr/share/openvswitch/scripts/ovs-ctl start --system-id=random
fi

# A peer under `bench capacity`: os-ken 1.4.0's simple_switch_13, the last release that ships it, unchanged, run by
# the venv's os-ken (its own dependencies need an eventlet that Python 3.11 cannot import): the package only.
PEERS=build/peers/os-ken-1.4.0
if [ ! -f "$PEERS/os_ken/app/simple_switch_13.py" ]; then
  "$VENV/bin/pip" install -q --no-deps --target "$PEERS" os-ken==1.4.0
fi

# The no-wait TSN scheduler's placement loop in C, a module for the venv's Python (srfabric falls back to its
# Python loop without it).
make -s -C native PYTHON="$PWD/$VENV/bin/python"

# netconfd's SIL library of `srfabric bridge serve` (the bridge side of --gates netconf).
make -s -C bridge

# The XDP data plane: compile the eBPF programs (make skips objects that are up to date) and mount bpffs.
make -s -C bpf
if ! grep -qs " /sys/fs/bpf bpf " /proc/mounts; then
  mount -t bpf bpf /sys/fs/bpf
fi
