"""What a running ``srfabric up`` tells the other commands: its API's URL and token and its hosts' addresses,
kept in one JSON file while it runs. The API's command-line clients fall back on it when neither ``--url`` nor
``$SRFABRIC_URL`` (and ``--token`` / ``$SRFABRIC_TOKEN``) says where to go."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STATE = Path("/run/srfabric/up.json")


def read_up_state(path: Path = STATE) -> dict[str, Any]:
    """The running ``up``'s state; empty when none runs or the file cannot be read.

    >>> read_up_state(Path("/nonexistent/up.json"))
    {}
    """
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}
