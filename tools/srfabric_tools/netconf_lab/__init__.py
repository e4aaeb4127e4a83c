"""TSN bridges gated over NETCONF on one machine: several ``srfabric bridge serve`` (Debian's netconfd, srfabric's
SIL and agent, a private sshd each), for the tests and ``srfabric bench netconf``."""
