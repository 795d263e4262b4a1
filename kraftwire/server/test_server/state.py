"""The state rebuilt from the log, in one place: producer state (idempotence) from data-batch headers, and the group
coordinator's shard (``kraftwire.coordinator.group.GroupShard``) from kraftwire control records holding Kafka's
``__consumer_offsets`` records. ``apply(batch)`` folds one batch in; ``image()``/``load()`` turn the whole state into
snapshot records and back.

Snapshot image format (kraftwire's own; one JSON object per record value, ``"kw"`` names the kind):
``{"kw":"producer","id":P,"epoch":E,"batches":[[first seq, last seq, first offset, last offset], ...]}``,
``{"kw":"group_record","key":HEX,"value":HEX|null}`` (a ``__consumer_offsets`` record: an offset or a group's
metadata). Earlier images' ``{"kw":"offset",...}`` and ``{"kw":"generation",...}`` lines are read too. Values of any
other shape are ignored on load.
"""

from __future__ import annotations

import json

from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group.shard import GroupShard
from kraftwire.errors import KraftwireError
from kraftwire.protocol import messages as w
from kraftwire.records.control import (
    KRAFTWIRE_GROUP_GENERATION,
    KRAFTWIRE_GROUP_OFFSET,
    KRAFTWIRE_GROUP_RECORD,
    decode_control_record,
)
from kraftwire.replica.producers import ProducerEntry, ProducerTable


def legacy_offset_record(msg) -> tuple[bytes, bytes | None]:
    """An earlier version's ``KraftwireGroupOffsetRecord`` as Kafka's OffsetCommit key and value (offset -1:
    deleted)."""
    key = cr.offset_commit_key(msg.group_id, msg.topic, msg.partition)
    if msg.offset < 0:
        return key, None
    return key, cr.offset_commit_value(msg.offset, msg.leader_epoch, msg.metadata or "", msg.commit_timestamp)


def legacy_generation_record(msg) -> tuple[bytes, bytes | None]:
    """An earlier version's ``KraftwireGroupGenerationRecord`` as a GroupMetadata of an empty group at that
    generation (its members join again, as after any coordinator move that lost them)."""
    value = w.GroupMetadataValue(protocol_type=msg.protocol_type or "", generation=msg.generation_id,
                                 protocol=None, leader=None, current_state_timestamp=-1, members=[])
    return cr.group_metadata_key(msg.group_id), cr.group_metadata_value(value)


class LogState:
    """Producer state and the group shard folded from the log. The shard keeps its own committed view (the
    records below the high watermark, ``commit_to``), so a fold of uncommitted data (the leader's scan) still answers
    with committed offsets."""

    def __init__(self, *, track_pending: bool = False) -> None:
        #: whether the fold holds uncommitted batches (the leader's scan): then ``commit_to`` says what is committed;
        #: otherwise every batch folded in is committed (the snapshot image)
        self.track_pending = track_pending
        self.producers = ProducerTable()
        self.groups = GroupShard(0)
        #: partition leader epoch of the last batch folded in (-1: none)
        self.last_epoch = -1

    def clear(self) -> None:
        self.producers.clear()
        self.groups = GroupShard(0, self.groups.config, self.groups._new_id)
        self.last_epoch = -1

    @property
    def offsets(self) -> dict[tuple[str, str, int], tuple[int, int, str | None]]:
        """Every group offset the fold holds, (group, topic, partition) -> (offset, leader epoch, metadata)."""
        return {(g, t, p): (e.offset, e.leader_epoch, e.metadata)
                for g, held in self.groups.offsets.items() for (t, p), e in held.items()}

    # ------------------------------------------------------------------------------------------------ folding
    def apply(self, b) -> None:
        self.last_epoch = b.partition_leader_epoch
        if b.is_control:
            self._apply_control(b)
            if not self.track_pending:  # a fold of committed batches: nothing waits for the high watermark
                self.groups.advance(b.last_offset + 1)
        elif b.producer_id >= 0:
            self.apply_producer(b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta + 1,
                                b.base_offset, b.last_offset)

    def apply_producer(self, pid: int, epoch: int, first_seq: int, count: int, first_offset: int,
                       last_offset: int) -> None:
        self.producers.apply(pid, epoch, first_seq, count, first_offset, last_offset)

    def _apply_control(self, b) -> None:
        for r in b:
            try:
                ctype, msg = decode_control_record(r.key, r.value)
            except KraftwireError:
                continue  # Raft's own control records (LeaderChange...) and unknown kinds
            if ctype == KRAFTWIRE_GROUP_RECORD:
                key, value = bytes(msg.key), None if msg.value is None else bytes(msg.value)
            elif ctype == KRAFTWIRE_GROUP_OFFSET:
                key, value = legacy_offset_record(msg)
            elif ctype == KRAFTWIRE_GROUP_GENERATION:
                key, value = legacy_generation_record(msg)
            else:
                continue
            try:
                self.groups.replay(key, value, r.offset)
            except KraftwireError:
                continue  # a record no coordinator could have written: skipped, as unknown control records are

    # ------------------------------------------------------------------------------------------------ committed view
    def commit_to(self, high_watermark: int) -> None:
        """Records below ``high_watermark`` are committed."""
        self.groups.advance(high_watermark)

    def committed_offsets(self, high_watermark: int) -> dict[tuple[str, str, int], tuple[int, int, str | None]]:
        """The group offsets as the log holds them below ``high_watermark`` (a write above it is not served yet: a
        leader may still lose it, and its OffsetCommit has not been answered)."""
        self.commit_to(high_watermark)
        return {(g, t, p): (e.offset, e.leader_epoch, e.metadata)
                for g, held in self.groups.committed.items() for (t, p), e in held.items()}

    # ------------------------------------------------------------------------------------------------ image
    def image(self) -> list[bytes]:
        out = []
        for pid, e in sorted(self.producers.items()):
            out.append({"kw": "producer", "id": pid, "epoch": e.epoch, "batches": [list(x) for x in e.batches]})
        for g, held in sorted(self.groups.offsets.items()):
            for (t, p), e in sorted(held.items()):
                out.append({"kw": "group_record", "key": cr.offset_commit_key(g, t, p).hex(),
                            "value": cr.offset_commit_value(e.offset, e.leader_epoch, e.metadata or "",
                                                            e.commit_timestamp, e.expire_timestamp).hex()})
        for g, value in sorted(self.groups.metadata_values.items()):
            if value is not None:
                out.append({"kw": "group_record", "key": cr.group_metadata_key(g).hex(), "value": value.hex()})
        return [json.dumps(o, separators=(",", ":")).encode() for o in out]

    def load(self, values) -> bool:
        """Replace the state by a snapshot image; False (state left empty) if a value is not kraftwire's."""
        self.clear()
        records: list[tuple[bytes, bytes | None]] = []
        for value in values:
            try:
                o = json.loads(value)
                kind = o["kw"]
            except (ValueError, TypeError, KeyError):
                self.clear()
                return False
            if kind == "producer":
                e = self.producers[o["id"]] = ProducerEntry(o["epoch"])
                for first_seq, last_seq, first_off, last_off, *stamp in o["batches"]:  # images before the timestamp
                    e.batches.append((first_seq, last_seq, first_off, last_off, stamp[0] if stamp else -1))
                    e.last_seq = last_seq
            elif kind == "group_record":
                records.append((bytes.fromhex(o["key"]), None if o["value"] is None else bytes.fromhex(o["value"])))
            elif kind == "offset":  # an earlier version's image
                records.append(legacy_offset_record(w.KraftwireGroupOffsetRecord(
                    group_id=o["group"], topic=o["topic"], partition=o["partition"], offset=o["offset"],
                    leader_epoch=o["leader_epoch"], metadata=o["metadata"], commit_timestamp=-1)))
            elif kind == "generation":
                records.append(legacy_generation_record(w.KraftwireGroupGenerationRecord(
                    group_id=o["group"], generation_id=o["generation"], protocol_type="", members=[])))
        try:
            for key, value in records:
                self.groups.replay(key, value, -1)  # all committed: an image is taken below the high watermark
        except KraftwireError:
            self.clear()
            return False
        self.groups.advance(0)
        return True
