"""Emulated testbeds: Mininet with Open vSwitch in userspace, service functions, traffic."""
