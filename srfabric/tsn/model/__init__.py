"""The time-sensitive model: networks, streams, slots, schedules, the no-wait timing, paths."""
