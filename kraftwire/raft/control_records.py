"""The one seam through which the core builds Raft control batches (LeaderChange).

Uses ``kraftwire.records.control`` when the protocol engineer's module is present; until then a minimal encoder of
``LeaderChangeMessage`` v0 (flexible: int16 Version, int32 LeaderId, compact arrays of {int32 VoterId, tags}, tags).
"""

from __future__ import annotations

import struct

from kraftwire.records import CONTROL_LEADER_CHANGE, RecordBatchBuilder, control_key

try:
    from kraftwire.records import control as _control  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - until records/control.py lands
    _control = None


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _voters(ids: list[int]) -> bytes:
    return _uvarint(len(ids) + 1) + b"".join(struct.pack(">i", v) + b"\x00" for v in ids)


def encode_leader_change(leader_id: int, voters: list[int], granting_voters: list[int]) -> bytes:
    return struct.pack(">hi", 0, leader_id) + _voters(voters) + _voters(granting_voters) + b"\x00"


def leader_change_batch(
    leader_id: int, voters: frozenset[int], granting_voters: frozenset[int], *, epoch: int, base_offset: int,
    timestamp: int
) -> bytes:
    """A control batch holding one LeaderChange record; the voters include the leader."""
    voter_list = sorted(set(voters) | {leader_id})
    granting = sorted(granting_voters)
    if _control is not None and hasattr(_control, "leader_change_batch"):
        return _control.leader_change_batch(
            leader_id, voter_list, granting, epoch=epoch, base_offset=base_offset, timestamp=timestamp
        )
    builder = RecordBatchBuilder(base_offset=base_offset, partition_leader_epoch=epoch, is_control=True)
    builder.append(control_key(CONTROL_LEADER_CHANGE), encode_leader_change(leader_id, voter_list, granting),
                   timestamp=timestamp)
    return builder.build()
