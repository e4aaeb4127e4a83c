"""Time-sensitive streams: joint routing and slot scheduling (TSSDN) and 802.1Qbv gate control lists.

Layers, each usable alone: ``model`` and ``slots`` (pure data), ``paths``,
``ilp_*``, ``colouring`` and ``incremental`` (scheduling, no I/O), ``verify``,
``gcl`` and ``render`` (rules as data), ``files``/``tsnkit`` (file formats),
``taprio_check`` (runs commands in a QEMU guest) and ``cli``.
"""
