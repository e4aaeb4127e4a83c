"""Benchmarks: each prints figures and writes CSV, JSON and a PNG plot."""
