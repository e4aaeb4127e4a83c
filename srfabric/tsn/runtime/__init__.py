"""Streams on the running fabric: the live planner, decided changes, the bridges' clocks."""
