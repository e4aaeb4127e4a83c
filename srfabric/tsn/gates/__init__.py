"""Gate control lists (802.1Qbv) as data, and their taprio and YANG renderings."""
