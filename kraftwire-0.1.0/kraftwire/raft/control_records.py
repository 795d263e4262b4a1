"""The one seam through which the core builds Raft control batches (LeaderChange, snapshot header and footer)."""

from __future__ import annotations

from kraftwire.records import control


def leader_change_batch(
    leader_id: int, voters: frozenset[int], granting_voters: frozenset[int], *, epoch: int, base_offset: int,
    timestamp: int
) -> bytes:
    """A control batch holding one LeaderChange record; the voters include the leader."""
    return control.leader_change_batch(
        leader_id, sorted(set(voters) | {leader_id}), sorted(granting_voters), epoch=epoch, base_offset=base_offset,
        timestamp=timestamp,
    )


def snapshot_header_batch(last_contained_log_timestamp: int, *, epoch: int, timestamp: int) -> bytes:
    return control.snapshot_header_batch(last_contained_log_timestamp, epoch=epoch, base_offset=0, timestamp=timestamp)


def snapshot_footer_batch(*, epoch: int, base_offset: int, timestamp: int) -> bytes:
    return control.snapshot_footer_batch(epoch=epoch, base_offset=base_offset, timestamp=timestamp)
