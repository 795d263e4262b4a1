"""Executing a ``Ready``'s log and snapshot operations on a ``ReplicatedLog`` — the part of a driver the simulator
and the unit-test harness share (the asyncio driver in ``kraftwire.server`` does the same against files)."""

from __future__ import annotations

from kraftwire.raft.ready import (
    AppendAsFollower,
    AppendAsLeader,
    CreateSnapshot,
    DeleteBeforeSnapshot,
    InitializeLeaderEpoch,
    StoreSnapshot,
    TruncateTo,
    TruncateToLatestSnapshot,
)


def apply_log_op(log, op) -> None:
    if isinstance(op, AppendAsLeader):
        log.append_as_leader(op.records, op.epoch)
    elif isinstance(op, AppendAsFollower):
        log.append_as_follower(op.records, op.epoch)
    elif isinstance(op, TruncateTo):
        log.truncate_to(op.offset)
    elif isinstance(op, InitializeLeaderEpoch):
        log.initialize_leader_epoch(op.epoch)
    elif isinstance(op, TruncateToLatestSnapshot):
        log.truncate_to_latest_snapshot()
    else:
        raise TypeError(f"unknown log operation {op!r}")


def apply_snapshot_op(log, op) -> None:
    if isinstance(op, CreateSnapshot):
        writer = log.create_new_snapshot(op.snapshot_id)
        if writer is not None:  # None: that snapshot already exists
            writer.append(op.data)
            writer.freeze()
    elif isinstance(op, StoreSnapshot):
        if op.snapshot_id not in set(log.snapshot_ids()):
            writer = log.store_snapshot(op.snapshot_id)
            writer.append(op.data)
            writer.freeze()
    elif isinstance(op, DeleteBeforeSnapshot):
        log.delete_before_snapshot(op.snapshot_id)
    else:
        raise TypeError(f"unknown snapshot operation {op!r}")
