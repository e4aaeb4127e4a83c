"""Gate schedules to TSN bridges over NETCONF (ncclient, SSH): 802.1Qcw documents, candidate datastore,
confirmed commit."""
