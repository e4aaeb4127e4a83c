"""Per-stream filtering and policing (802.1Qci) and the shapers beside the gates: plans as data."""
