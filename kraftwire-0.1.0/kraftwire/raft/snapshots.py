"""Snapshots (KIP-630): producing one from a listener's state image, and installing one downloaded from the leader.

Producing: when a listener that is a ``SnapshotSource`` has been given ``snapshot_max_bytes_between`` bytes since
the last snapshot (or ``snapshot_interval_ms`` passed), the core asks it for its records and writes the snapshot at
its position — always a batch boundary at or below the high watermark — named (end offset, epoch of the last batch).
Only once the log reports that snapshot may the log start advance: by retention in the log (Kafka's way, the default),
or — with ``advance_log_start_on_snapshot`` — by the core at once (``DeleteBeforeSnapshot``).

Installing: a follower told ``SnapshotId`` by the leader downloads it with FetchSnapshot in chunks (the fetch timer
covers both), stores it (``StoreSnapshot``), then — once it is durable — restarts its log at the snapshot's end
(``TruncateToLatestSnapshot``); listeners then load it before any later commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.ids import SnapshotId
from kraftwire.raft.control_records import snapshot_footer_batch, snapshot_header_batch
from kraftwire.raft.ready import CreateSnapshot, DeleteBeforeSnapshot, StoreSnapshot, TruncateToLatestSnapshot
from kraftwire.records import RecordBatchBuilder
from kraftwire.records import control


@dataclass(slots=True)
class Download:
    snapshot_id: SnapshotId
    data: bytearray = field(default_factory=bytearray)


def build_snapshot(values: list[bytes], *, epoch: int, timestamp: int, kraft_version: int = 0,
                   voters_record=None) -> bytes:
    """The snapshot file: the header batch (with kraft.version and the voter set from kraft.version 1), the
    listener's records after it, the footer; offsets count from 0 across the batches, as Kafka's writer counts."""
    if kraft_version >= 1:
        parts = [control.snapshot_header_batch(timestamp, epoch=epoch, base_offset=0, timestamp=timestamp,
                                               kraft_version=kraft_version, voters=voters_record)]
        next_offset = 2 + (voters_record is not None)  # the header, kraft.version and the voters
    else:
        parts = [snapshot_header_batch(timestamp, epoch=epoch, timestamp=timestamp)]
        next_offset = 1
    if values:
        builder = RecordBatchBuilder(base_offset=next_offset, partition_leader_epoch=epoch)
        builder.append_many(values, timestamp=timestamp)
        parts.append(builder.build())
        next_offset += len(values)
    parts.append(snapshot_footer_batch(epoch=epoch, base_offset=next_offset, timestamp=timestamp))
    return b"".join(parts)


class Snapshots:
    def __init__(self, node) -> None:
        self.node = node
        self.last_snapshot_ms: int | None = None
        self.bytes_at_last = 0
        self.pending_delete: SnapshotId | None = None
        self.download: Download | None = None
        self.installing: SnapshotId | None = None

    # --- producing -------------------------------------------------------------------------------------------------
    def maybe_create(self, now_ms: int) -> None:
        node, cfg, log = self.node, self.node.config, self.node.log
        if self.last_snapshot_ms is None:
            self.last_snapshot_ms = now_ms
        ctx = next((c for c in node.listeners.contexts if hasattr(c.listener, "snapshot_records")), None)
        if ctx is None or ctx.next_offset <= log.start_offset() or ctx.next_offset > log.high_watermark():
            return
        latest = log.latest_snapshot_id()
        if latest is not None and latest.end_offset >= ctx.next_offset:
            return
        by_bytes = cfg.snapshot_max_bytes_between > 0 and (
            ctx.delivered_bytes - self.bytes_at_last >= cfg.snapshot_max_bytes_between
        )
        by_time = cfg.snapshot_interval_ms > 0 and now_ms - self.last_snapshot_ms >= cfg.snapshot_interval_ms
        if not (by_bytes or by_time):
            return
        end = ctx.next_offset
        if cfg.mutations.snapshot_off_boundary:
            end -= 1  # planted bug: one record inside the last batch
        values = [node.serde.serialize(r) for r in ctx.listener.snapshot_records()]
        snapshot_id = SnapshotId(end, ctx.last_epoch)
        membership = node.membership
        voters_record = membership.history.at(end - 1).to_record() if membership.dynamic else None
        node.step.snapshot_ops.append(CreateSnapshot(snapshot_id, build_snapshot(
            values, epoch=ctx.last_epoch, timestamp=now_ms, kraft_version=membership.kraft_version,
            voters_record=voters_record)))
        node.counters["snapshots_created"] += 1
        self.last_snapshot_ms = now_ms
        self.bytes_at_last = ctx.delivered_bytes
        self.pending_delete = snapshot_id

    def maybe_advance_log_start(self) -> None:
        """Only once the snapshot is durable (the log lists it) does the log start move up to it."""
        pending = self.pending_delete
        if not self.node.config.advance_log_start_on_snapshot:
            self.pending_delete = None
            return
        if pending is not None and pending in set(self.node.log.snapshot_ids()):
            self.node.step.snapshot_ops.append(DeleteBeforeSnapshot(pending))
            self.pending_delete = None

    # --- installing --------------------------------------------------------------------------------------------------
    def start_download(self, snapshot_id: SnapshotId) -> None:
        if self.download is None or self.download.snapshot_id != snapshot_id:
            self.download = Download(snapshot_id)

    def on_chunk(self, snapshot_id: SnapshotId, position: int, size: int, chunk: bytes) -> None:
        d = self.download
        if d is None or d.snapshot_id != snapshot_id or position != len(d.data):
            return
        d.data += chunk
        if len(d.data) >= size:
            self.node.step.snapshot_ops.append(StoreSnapshot(snapshot_id, bytes(d.data)))
            self.installing = snapshot_id
            self.download = None
            self.node.wake_now()

    def maybe_install(self) -> None:
        installing = self.installing
        if installing is not None and installing in set(self.node.log.snapshot_ids()):
            self.node.step.log_ops.append(TruncateToLatestSnapshot())
            self.node.rebuild_membership_after_install()
            self.node.counters["snapshot_installs"] += 1
            self.installing = None
            self.node.wake_now()
