"""TSN code with sockets or subprocesses: talkers, listeners, the taprio check under QEMU."""
