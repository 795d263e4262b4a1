"""Driving a connection without a socket: ``Transport`` records what a connection writes, ``request_frame`` encodes
a request as it arrives, and ``answered_ids(out)`` is the correlation id of each size-prefixed answer in ``out``, in
the order they were written (the tests of answer ordering compare it with the requests')."""

from __future__ import annotations

import asyncio
import struct

from kraftwire.protocol.framing import encode_request


class Transport(asyncio.Transport):
    """A transport that keeps what is written in ``out``."""

    def __init__(self):
        super().__init__()
        self.out = bytearray()

    def write(self, data):
        self.out += bytes(data)

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default

    def get_write_buffer_size(self):
        return 0

    def close(self):
        pass


def request_frame(body, version: int, cid: int) -> bytes:
    """``body`` as a size-prefixed request frame."""
    return b"".join(bytes(c) for c in encode_request(body, version, cid))


def answered_ids(out: bytes) -> list[int]:
    ids, pos = [], 0
    while pos < len(out):
        (size,) = struct.unpack_from(">i", out, pos)
        ids.append(struct.unpack_from(">i", out, pos + 4)[0])
        pos += 4 + size
    return ids
