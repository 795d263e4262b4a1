"""Node log dirs written through a real ``SegmentedLog``, for the Spark source tests: the Raft log
(``__cluster_metadata-0``, its high watermark in its own ``high-watermark-checkpoint``) or topic partitions in
Kafka's log-dir layout (``<topic>-<partition>/``, high watermarks in the log dir's ``replication-offset-checkpoint``)."""

from __future__ import annotations

import os
import uuid

from kraftwire.log.checkpoint import format_offset_checkpoint, parse_offset_checkpoint
from kraftwire.log.loader import HIGH_WATERMARK_CHECKPOINT
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.log.segmented import SegmentedLog
from kraftwire.records import CONTROL_LEADER_CHANGE, RecordBatchBuilder, control_key

TOPIC_DIR = "__cluster_metadata-0"
T0 = 1_700_000_000_000


def record_value(offset_hint: int, size: int = 40) -> bytes:
    return (f"v{offset_hint:08d}-".encode() * (size // 10 + 1))[:size]


def write_node_log(root: str, node_id: int, *, batches: int = 60, per_batch: int = 5, segment_bytes: int = 4096,
                   high_watermark: int | None = None, epochs=(1, 2), diverge_from: int | None = None,
                   salt: bytes = b"X", topic_dir: str = TOPIC_DIR, diverge_epoch: int | None = None) -> dict:
    """A node's metadata log dir with ``batches`` data batches (``per_batch`` records each) plus one LeaderChange
    control batch at the start of every epoch; small segments so there are several. Data batches from index
    ``diverge_from`` on carry values starting with ``salt`` (a replica that took a different history), in leader epoch
    ``diverge_epoch`` when given (a deposed leader's appends are in its own epoch). ``topic_dir``
    other than ``__cluster_metadata-0``: a topic partition (``<topic>-<partition>``) whose high watermark goes into the
    log dir's ``replication-offset-checkpoint`` (other partitions' entries kept). Returns what was written:
    {"expected": [(offset, epoch, ts, key, value, headers, is_control, control_type)], "dir": partition dir, "hw"}."""
    os.makedirs(root, exist_ok=True)
    write_meta_properties(root, MetaProperties(cluster_id="c" * 22, node_id=node_id, directory_id=uuid.UUID(int=node_id)))
    pdir = os.path.join(root, topic_dir)
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
            data_epoch = epoch
            if diverge_from is not None and diverge_epoch is not None and i >= diverge_from:
                data_epoch = diverge_epoch
                rows = [(o, data_epoch, *rest) for o, _e, *rest in rows]
            log.append_as_leader(b.build(), data_epoch)
            expected.extend(rows)
            i += 1
    log.flush()
    hw = log.end_offset() if high_watermark is None else high_watermark
    log.update_high_watermark(hw)
    log.close()
    if topic_dir != TOPIC_DIR:
        os.unlink(os.path.join(pdir, HIGH_WATERMARK_CHECKPOINT))
        topic, _, part = topic_dir.rpartition("-")
        path = os.path.join(root, "replication-offset-checkpoint")
        entries = parse_offset_checkpoint(open(path).read()) if os.path.exists(path) else {}
        entries[(topic, int(part))] = hw
        with open(path, "w") as f:
            f.write(format_offset_checkpoint(entries))
    return {"expected": expected, "dir": pdir, "root": root, "hw": hw}
