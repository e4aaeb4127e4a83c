"""The switches a testbed can be built of, in a module of its own: the command line's parser names them without
loading the testbed (and Mininet)."""

SWITCH_KINDS = ("ovs", "xdp")  # Open vSwitch, or srfabric's XDP programs
