"""A byte range of a segment file to send as it is (``sendfile``), for the consumer Fetch fast path.

A ``FileRegion`` holds its own duplicate of the segment's file descriptor, so retention or a truncation that closes
and deletes the segment cannot turn it into another file's bytes; whoever sends it (``InboundConnection``) closes
it (or dropping the last reference does). It has a length (the framing counts it) but no bytes: ``read()`` gives them where ``sendfile`` cannot be used
(TLS, or a loop without it).
"""

from __future__ import annotations

import os

from kraftwire.protocol.wire_types import ExternalBytes

__all__ = ["FileRegion"]


class FileRegion(ExternalBytes):
    __slots__ = ("fd", "position", "length", "first_offset")

    def __init__(self, fd: int, position: int, length: int, first_offset: int) -> None:
        self.fd = os.dup(fd)
        self.position = position
        self.length = length
        self.first_offset = first_offset

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"FileRegion(fd={self.fd}, position={self.position}, length={self.length})"

    def read(self) -> bytes:
        data = os.pread(self.fd, self.length, self.position)
        if len(data) != self.length:
            raise OSError(f"the segment file is shorter than the region ({len(data)} of {self.length} bytes)")
        return data

    def open(self):
        """A binary file object over a second duplicate of the descriptor (``loop.sendfile`` wants one)."""
        return os.fdopen(os.dup(self.fd), "rb", buffering=0)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        # an answer dropped unsent (a parked fetch answered again later, a closed connection) frees its descriptor
        try:
            self.close()
        except OSError:
            pass
