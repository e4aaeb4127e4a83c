"""Adapters that carry rules as data to real switches."""
