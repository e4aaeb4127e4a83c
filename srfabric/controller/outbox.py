"""What the decision core hands the shell to do: messages for switches, and whether the tables need a sync.

The core decides; the shell (``controller.Controller``) owns the connections and writes. A ``Send`` is one
switch's messages, written in one go (one wake-up of the switch).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Send:
    """Messages for switch ``dpid``, in order."""

    dpid: int
    messages: tuple[Any, ...]


@dataclass(slots=True)
class Effects:
    """What one event asks for: messages to send now, a sync soon (``sync``) or at once (``urgent``: a link or a
    function went down, so no settling time)."""

    sends: list[Send] = field(default_factory=list)
    sync: bool = False
    urgent: bool = False

    def send(self, dpid: int, *messages: Any) -> None:
        self.sends.append(Send(dpid, messages))

    def merge(self, other: Effects) -> Effects:
        self.sends += other.sends
        self.sync |= other.sync
        self.urgent |= other.urgent
        return self
