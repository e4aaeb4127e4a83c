"""A network namespace of its own for the controller: a veth pair to the root namespace (where the switches and
the bridges' NETCONF servers are), so the controller reaches them over TCP only and cannot run ``tc`` on their
ports. Made and removed by its remembered names."""

from __future__ import annotations

import subprocess
from types import TracebackType

NAMESPACE, OUTSIDE, INSIDE = "srf-ctl", "srfctl0", "srfctl1"
OUTSIDE_IP, INSIDE_IP = "10.254.254.1", "10.254.254.2"


def _ip(*words: str, check: bool = True) -> None:
    subprocess.run(["ip", *words], check=check, capture_output=True, timeout=30)


class ControllerNamespace:
    """``with ControllerNamespace() as ns``: the controller runs under ``ip netns exec srf-ctl`` at
    ``INSIDE_IP``; the root namespace is ``OUTSIDE_IP`` to it."""

    name, address, peer = NAMESPACE, INSIDE_IP, OUTSIDE_IP

    def __enter__(self) -> ControllerNamespace:
        self.remove()  # a run killed before its clean-up left them
        try:
            _ip("netns", "add", NAMESPACE)
            _ip("link", "add", OUTSIDE, "type", "veth", "peer", "name", INSIDE)
            _ip("link", "set", INSIDE, "netns", NAMESPACE)
            _ip("addr", "add", f"{OUTSIDE_IP}/30", "dev", OUTSIDE)
            _ip("link", "set", OUTSIDE, "up")
            for words in (("addr", "add", f"{INSIDE_IP}/30", "dev", INSIDE), ("link", "set", INSIDE, "up"),
                          ("link", "set", "lo", "up")):
                _ip("netns", "exec", NAMESPACE, "ip", *words)
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.remove()

    @staticmethod
    def remove() -> None:
        _ip("link", "del", OUTSIDE, check=False)
        _ip("netns", "del", NAMESPACE, check=False)
