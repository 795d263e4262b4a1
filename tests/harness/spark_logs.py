"""Node log dirs written through a real ``SegmentedLog``, for the Spark source tests."""

from __future__ import annotations

import os
import uuid

from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.log.segmented import SegmentedLog
from kraftwire.records import CONTROL_LEADER_CHANGE, RecordBatchBuilder, control_key

TOPIC_DIR = "__cluster_metadata-0"
T0 = 1_700_000_000_000


def record_value(offset_hint: int, size: int = 40) -> bytes:
    return (f"v{offset_hint:08d}-".encode() * (size // 10 + 1))[:size]


def write_node_log(root: str, node_id: int, *, batches: int = 60, per_batch: int = 5, segment_bytes: int = 4096,
                   high_watermark: int | None = None, epochs=(1, 2), diverge_from: int | None = None,
                   salt: bytes = b"X") -> dict:
    """A node's metadata log dir with ``batches`` data batches (``per_batch`` records each) plus one LeaderChange
    control batch at the start of every epoch; small segments so there are several. Data batches from index
    ``diverge_from`` on carry values starting with ``salt`` (a replica that took a different history). Returns what was written:
    {"expected": [(offset, epoch, ts, key, value, headers, is_control, control_type)], "dir": partition dir, "hw"}."""
    os.makedirs(root, exist_ok=True)
    write_meta_properties(root, MetaProperties(cluster_id="c" * 22, node_id=node_id, directory_id=uuid.UUID(int=node_id)))
    pdir = os.path.join(root, TOPIC_DIR)
    log = SegmentedLog(pdir, segment_bytes=segment_bytes, index_interval_bytes=256, clock_ms=lambda: T0)
    expected = []
    per_epoch = batches // len(epochs)
    i = 0
    for e_i, epoch in enumerate(epochs):
        b = RecordBatchBuilder(is_control=True)
        b.append(control_key(CONTROL_LEADER_CHANGE), b"\x00\x00\x00\x00\x00\x01", timestamp=T0 + i)
        base = log.end_offset()
        log.append_as_leader(b.build(), epoch)
        expected.append((base, epoch, T0 + i, control_key(CONTROL_LEADER_CHANGE), b"\x00\x00\x00\x00\x00\x01", [],
                         True, CONTROL_LEADER_CHANGE))
        n = per_epoch if e_i < len(epochs) - 1 else batches - per_epoch * (len(epochs) - 1)
        for _ in range(n):
            b = RecordBatchBuilder()
            base = log.end_offset()
            rows = []
            for k in range(per_batch):
                off = base + k
                key = None if off % 7 == 0 else f"k{off}".encode()
                value = record_value(off)
                if diverge_from is not None and i >= diverge_from:
                    value = salt + value[1:]
                headers = [("h", f"{off}".encode())] if off % 3 == 0 else []
                ts = T0 + 1000 * i + k
                b.append(key, value, headers=headers, timestamp=ts)
                rows.append((off, epoch, ts, key, value, headers, False, -1))
            log.append_as_leader(b.build(), epoch)
            expected.extend(rows)
            i += 1
    log.flush()
    hw = log.end_offset() if high_watermark is None else high_watermark
    log.update_high_watermark(hw)
    log.close()
    return {"expected": expected, "dir": pdir, "root": root, "hw": hw}
