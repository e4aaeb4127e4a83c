"""The XDP data plane: eBPF programs (``bpf/``), their map layouts, loader and test runner."""
