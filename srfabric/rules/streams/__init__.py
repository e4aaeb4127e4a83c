"""The time-sensitive streams' rules: a stream's entry at its talker's edge (``steering``), the 802.1CB
replication group of a redundant one (``frer``), the queue of the time-triggered class (``time_triggered``), and
each stream's part kept per fabric version (``placements``)."""
