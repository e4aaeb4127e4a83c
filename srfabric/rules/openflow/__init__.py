"""OpenFlow 1.3 messages as data: entries bound to os-ken messages, and the hand-packed hot path."""
