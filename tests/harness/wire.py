"""Reading what a connection wrote: ``answered_ids(out)`` is the correlation id of each size-prefixed answer in
``out``, in the order they were written (the tests of answer ordering compare it with the requests')."""

from __future__ import annotations

import struct


def answered_ids(out: bytes) -> list[int]:
    ids, pos = [], 0
    while pos < len(out):
        (size,) = struct.unpack_from(">i", out, pos)
        ids.append(struct.unpack_from(">i", out, pos + 4)[0])
        pos += 4 + size
    return ids
