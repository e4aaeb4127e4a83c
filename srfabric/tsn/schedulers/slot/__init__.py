"""Slot methods (TSSDN): S/UR, S/PR, S/FR, incremental and batch admission, their solvers."""
