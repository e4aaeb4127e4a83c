"""The kernel lab: run a command on a Debian kernel that has taprio, etf and openvswitch.ko.

This machine's own kernel may lack them; the lab boots Debian's
``linux-image-amd64`` under ``qemu-system-x86_64 -accel tcg`` with this
machine's root file system read-only over virtio-9p under a tmpfs overlay, so
the guest has the host's userland (the project's venv, OVS, Mininet, iperf3).
"""
