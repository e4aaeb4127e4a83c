"""One context manager for the testbed's pieces that have a ``start()`` and a ``stop()``."""

from __future__ import annotations

from typing import Self


class Running:
    """``with`` runs ``start()``, and ``stop()`` on leaving; a start that fails half-way is stopped too,
    so that nothing half-built (namespaces, bridges, processes) is left behind."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
