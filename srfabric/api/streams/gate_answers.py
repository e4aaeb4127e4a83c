"""What the API answers when a stream change's entries or gates did not go out: 409 when a switch or a
bridge refused (the reason names it), 503 when a bridge did not answer (retry later), 400 when the switches did
not take the entries. Nothing of the change stays in any of them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from srfabric.api.errors import bad_request, in_use, unavailable
from srfabric.controller.stream_install import GatesRefused, GatesUnavailable, NotInstalled


@contextmanager
def gate_answers() -> Iterator[None]:
    try:
        yield
    except GatesRefused as error:
        raise in_use("StreamGatesRefused", str(error)) from None
    except GatesUnavailable as error:
        raise unavailable("StreamGatesUnavailable", str(error)) from None
    except NotInstalled as error:
        raise bad_request(str(error), "StreamNotInstalled") from None
