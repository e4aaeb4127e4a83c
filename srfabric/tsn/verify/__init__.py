"""Independent checks of schedules, written without the solvers' code."""
