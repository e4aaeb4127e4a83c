"""srfabric's log lines: plain text, or one JSON object per line (``srfabric serve --log-json``) for a log
pipeline. A security-relevant event (a refused or replaced switch connection, a request without a valid token, a
take-over) is logged with ``security_event``: a WARNING whose ``event`` field names it, with its details as fields.

>>> import io
>>> stream = io.StringIO()
>>> handler = logging.StreamHandler(stream)
>>> handler.setFormatter(JsonFormatter())
>>> log = logging.getLogger("srfabric.example")
>>> log.addHandler(handler)
>>> security_event(log, "switch_replaced", "switch 0x1: a second connection", dpid="0x1", peer="10.0.0.9:4242")
>>> record = json.loads(stream.getvalue())
>>> record["event"], record["dpid"], record["level"], record["message"]
('switch_replaced', '0x1', 'WARNING', 'switch 0x1: a second connection')
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

PLAIN = "%(levelname)s %(name)s: %(message)s"
STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, and any fields of the event."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        document.update({key: value for key, value in vars(record).items() if key not in STANDARD})
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document, default=str)


def configure(as_json: bool) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if as_json else logging.Formatter(PLAIN))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


def security_event(log: logging.Logger, event: str, message: str, **fields: Any) -> None:
    log.warning(message, extra={"event": event, **fields})
