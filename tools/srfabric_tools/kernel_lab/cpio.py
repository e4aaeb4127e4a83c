"""A cpio archive in the kernel's ``newc`` format, the form an initramfs takes.

Examples
--------
>>> archive = newc([("init", 0o100755, b"#!/bin/sh\\n")])
>>> archive[:6], archive.endswith(b"\\0" * 4) or len(archive) % 4 == 0
(b'070701', True)
"""

from __future__ import annotations

DIRECTORY = 0o040755
REGULAR = 0o100644
EXECUTABLE = 0o100755


def newc(entries: list[tuple[str, int, bytes]]) -> bytes:
    """An archive of ``(name, mode, data)`` entries followed by the trailer."""
    out = bytearray()
    for inode, (name, mode, data) in enumerate([*entries, ("TRAILER!!!", 0, b"")], start=1):
        encoded = name.encode() + b"\0"
        fields = [inode, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0]
        out += b"070701" + b"".join(f"{value:08x}".encode() for value in fields) + encoded
        out += b"\0" * (-len(out) % 4)
        out += data
        out += b"\0" * (-len(out) % 4)
    return bytes(out)


class Tree:
    """Entries of an archive under construction; parent folders are added once, before their files."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, int, bytes]] = []
        self._folders: set[str] = set()

    def add(self, path: str, mode: int, data: bytes = b"") -> None:
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in self._folders:
                self._folders.add(folder)
                self.entries.append((folder, DIRECTORY, b""))
        self.entries.append(("/".join(parts), mode, data))

    def archive(self) -> bytes:
        return newc(self.entries)
