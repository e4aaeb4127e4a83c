"""srfabric's tools: benchmarks, lab experiments, Mininet testbeds, the QEMU kernel lab and the demos.

They are a package of their own (``tools/pyproject.toml``), outside srfabric's runtime wheel: they drive the
product from outside, and nothing in ``srfabric`` imports them. Their commands join ``srfabric``'s command line
through the ``srfabric.commands`` entry point (:mod:`srfabric_tools.cli`).
"""
