"""The share coordinator of one ``__share_group_state`` partition: Kafka's ``ShareCoordinatorShard`` as a pure state
machine (KIP-932).

**What it keeps.** For every share-partition key (group, topic id, partition) the partition holds, the state its
leader last wrote durably (``ShareState``): the share-partition start offset, the in-flight state batches, the
state epoch (bumped when the group's offsets are reset: a write from an older one is FENCED_STATE_EPOCH), the
leader epoch of the partition leader that last wrote or read it (an older leader is FENCED_LEADER_EPOCH), the
count of records delivered completely, and the snapshot epoch.

**Its records.** ``ShareSnapshot`` holds a key's whole state; ``ShareUpdate`` only what one write changed, folded
into the state with ``batches.combine``. A write becomes an update until ``snapshot_update_records_per_snapshot``
updates have followed the last snapshot (``share.coordinator.snapshot.update.records.per.snapshot``, Kafka's 500),
then a new snapshot (snapshot epoch + 1) carrying everything, so a load replays at most that many updates per key.
InitializeShareGroupState writes a fresh snapshot; DeleteShareGroupState a tombstone of the snapshot key.
``replay`` folds every record, the shard's own writes included: the state changes only once a record is in the log.

**Its requests** come one key at a time (the edge splits a request into keys, as Kafka's ``ShareCoordinatorService``
does, and joins the answers): ``write`` / ``read`` / ``initialize`` / ``delete`` return a ``Result`` with the
records to append and the one-key response to send once they are committed; ``read_summary`` only answers.
Each checks what Kafka checks, in Kafka's order, with Kafka's error codes and messages; the metadata image is asked
through ``partitions_of(topic_id)`` (the topic's partition count, None when the topic is unknown). Time is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group.model import Result
from kraftwire.coordinator.share.batches import StateBatch, combine
from kraftwire.ids import UUID, uuid_from_base64, uuid_to_base64
from kraftwire.protocol import messages as w

#: ShareSnapshot and ShareUpdate: the record types of ``__share_group_state``
SHARE_SNAPSHOT, SHARE_UPDATE = 0, 1
#: Kafka's ``PartitionFactory`` defaults: a key never initialized reads as start offset -1, epochs 0
UNINITIALIZED_START_OFFSET = -1
DEFAULT_STATE_EPOCH = 0
DEFAULT_LEADER_EPOCH = 0

NULL_TOPIC_ID = "The topic id cannot be null."
NEGATIVE_PARTITION_ID = "The partition id cannot be a negative number."
NEGATIVE_LEADER_EPOCH = "The leader epoch cannot be a negative number."
NEGATIVE_STATE_EPOCH = "The state epoch cannot be a negative number."
WRITE_UNINITIALIZED = "Write operation on uninitialized share partition not allowed."
READ_UNINITIALIZED = "Read operation on uninitialized share partition not allowed."


@dataclass(frozen=True)
class ShareCoordinatorConfig:
    """The broker keys of the share coordinator, with Kafka's defaults."""

    snapshot_update_records_per_snapshot: int = 500  # share.coordinator.snapshot.update.records.per.snapshot
    state_topic_num_partitions: int = 50  # share.coordinator.state.topic.num.partitions
    state_topic_replication_factor: int = 3  # share.coordinator.state.topic.replication.factor
    state_topic_min_isr: int = 2  # share.coordinator.state.topic.min.isr
    state_topic_segment_bytes: int = 104_857_600  # share.coordinator.state.topic.segment.bytes
    write_timeout_ms: int = 5000  # share.coordinator.write.timeout.ms
    cold_partition_snapshot_interval_ms: int = 300_000  # share.coordinator.cold.partition.snapshot.interval.ms

    @classmethod
    def from_properties(cls, value: Callable[[str], str | None]) -> "ShareCoordinatorConfig":
        """From a node's effective broker keys (``value(name)``: the configured value or Kafka's default)."""
        def get(name: str, default: int) -> int:
            v = value(name)
            return default if v is None else int(v)

        return cls(get("share.coordinator.snapshot.update.records.per.snapshot", 500),
                   get("share.coordinator.state.topic.num.partitions", 50),
                   get("share.coordinator.state.topic.replication.factor", 3),
                   get("share.coordinator.state.topic.min.isr", 2),
                   get("share.coordinator.state.topic.segment.bytes", 104_857_600),
                   get("share.coordinator.write.timeout.ms", 5000),
                   get("share.coordinator.cold.partition.snapshot.interval.ms", 300_000))


def coordinator_key(group_id: str, topic_id: UUID, partition: int) -> str:
    """The key that picks a share-partition's ``__share_group_state`` partition (Kafka's
    ``SharePartitionKey.asCoordinatorKey``: ``group:topicId:partition``, the topic id in Kafka's base64)."""
    return f"{group_id}:{uuid_to_base64(topic_id)}:{partition}"


def parse_coordinator_key(key: str) -> tuple[str, UUID, int] | None:
    """A FindCoordinator share key (v6) read back as Kafka's ``SharePartitionKey.getInstance`` reads it, or None
    where Kafka refuses it (INVALID_REQUEST): three ``:``-separated parts (Java's ``split``, trailing empty parts
    dropped), a base64 topic id of 16 bytes, a partition that is a Java int (a negative one too: Kafka finds its
    coordinator like any other's)."""
    parts = key.split(":")
    while parts and parts[-1] == "":
        parts.pop()
    if len(parts) != 3:
        return None
    group, topic, partition = parts
    try:
        topic_id = uuid_from_base64(topic)
    except ValueError:
        return None
    digits = partition[1:] if partition[:1] in "+-" else partition
    if not digits.isascii() or not digits.isdigit():
        return None
    number = int(partition)
    if not -2**31 <= number < 2**31:
        return None
    return group, topic_id, number


@dataclass(frozen=True)
class ShareState:
    """What the coordinator holds of one share-partition (Kafka's ``ShareGroupOffset``)."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    delivery_complete_count: int = -1
    batches: tuple[StateBatch, ...] = ()
    create_timestamp: int = 0
    write_timestamp: int = 0

    def snapshot_value(self) -> w.ShareSnapshotValue:
        return w.ShareSnapshotValue(
            snapshot_epoch=self.snapshot_epoch, state_epoch=self.state_epoch, leader_epoch=self.leader_epoch,
            start_offset=self.start_offset, delivery_complete_count=self.delivery_complete_count,
            create_timestamp=self.create_timestamp, write_timestamp=self.write_timestamp,
            state_batches=[_wire_batch(w.ShareSnapshotValue.StateBatch, b) for b in self.batches])


def _wire_batch(cls, b: StateBatch):
    return cls(first_offset=b.first_offset, last_offset=b.last_offset, delivery_state=b.delivery_state,
               delivery_count=b.delivery_count)


def _batches(wire) -> list[StateBatch]:
    return [StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in wire]


Key = tuple[str, UUID, int]


def snapshot_record(key: Key, state: ShareState | None) -> tuple[bytes, bytes | None]:
    """A ShareSnapshot record of ``key`` (``None``: its tombstone)."""
    group, topic_id, partition = key
    k = cr.encode_key(w.ShareSnapshotKey(group_id=group, topic_id=topic_id, partition=partition), SHARE_SNAPSHOT)
    return k, None if state is None else cr.encode_value(state.snapshot_value(), 0)


def update_record(key: Key, value: w.ShareUpdateValue) -> tuple[bytes, bytes]:
    group, topic_id, partition = key
    k = cr.encode_key(w.ShareUpdateKey(group_id=group, topic_id=topic_id, partition=partition), SHARE_UPDATE)
    return k, cr.encode_value(value, 0)


@dataclass
class ShareShard:
    """The share-partition states of one ``__share_group_state`` partition."""

    partition: int
    config: ShareCoordinatorConfig = field(default_factory=ShareCoordinatorConfig)
    #: a topic's partition count in the metadata image, None when the image does not know the topic
    partitions_of: Callable[[UUID], int | None] = lambda topic_id: None
    states: dict[Key, ShareState] = field(default_factory=dict)
    leader_epochs: dict[Key, int] = field(default_factory=dict)
    state_epochs: dict[Key, int] = field(default_factory=dict)
    #: ShareUpdate records folded since the key's last snapshot (Kafka's count starts at 0 on the second one)
    update_counts: dict[Key, int] = field(default_factory=dict)

    # ================================================================================================ the log
    def replay(self, key: bytes, value: bytes | None) -> None:
        """Fold one record of the partition."""
        rec = cr.decode(key, value, cr.SHARE_STATE_RECORDS)
        k = (rec.key.group_id, rec.key.topic_id, rec.key.partition)
        if rec.record_type == SHARE_SNAPSHOT:
            self._replay_snapshot(k, rec.value)
        else:
            self._replay_update(k, rec.value)

    def _replay_snapshot(self, key: Key, v) -> None:
        if v is None:
            for table in (self.states, self.leader_epochs, self.state_epochs, self.update_counts):
                table.pop(key, None)
            return
        self._raise(self.leader_epochs, key, v.leader_epoch)
        self._raise(self.state_epochs, key, v.state_epoch)
        self.states[key] = ShareState(v.snapshot_epoch, v.state_epoch, v.leader_epoch, v.start_offset,
                                      v.delivery_complete_count, tuple(_batches(v.state_batches)),
                                      v.create_timestamp, v.write_timestamp)
        # Kafka resets the count only when it reached the limit (a snapshot by InitializeShareGroupState or a
        # cold-partition snapshot leaves it running)
        if self.update_counts.get(key, -1) >= self.config.snapshot_update_records_per_snapshot:
            self.update_counts[key] = 0

    def _replay_update(self, key: Key, v) -> None:
        if v is None:
            return  # Kafka writes no ShareUpdate tombstones; the snapshot's tombstone ends a key
        self._raise(self.leader_epochs, key, v.leader_epoch)
        held = self.states.get(key)
        if held is None:
            self.states[key] = ShareState(v.snapshot_epoch, DEFAULT_STATE_EPOCH, v.leader_epoch, v.start_offset,
                                          v.delivery_complete_count, tuple(_batches(v.state_batches)))
        else:
            start = held.start_offset if v.start_offset == -1 else v.start_offset
            self.states[key] = replace(
                held, start_offset=start,
                leader_epoch=held.leader_epoch if v.leader_epoch == -1 else v.leader_epoch,
                delivery_complete_count=v.delivery_complete_count,
                batches=tuple(combine(list(held.batches), _batches(v.state_batches), start)))
        self.update_counts[key] = self.update_counts[key] + 1 if key in self.update_counts else 0

    @staticmethod
    def _raise(table: dict[Key, int], key: Key, epoch: int) -> None:
        if table.get(key, epoch) <= epoch:
            table[key] = epoch

    # ================================================================================================ requests
    def write(self, group_id: str, topic_id: UUID, p, token, now_ms: int) -> Result:
        """WriteShareGroupState of one key (``p``: the request's PartitionData)."""
        key = (group_id, topic_id, p.partition)
        result = Result()
        error = self._write_error(key, p)
        if error is not None:
            result.reply(token, "WriteShareGroupState", _write_response(topic_id, p.partition, *error))
            return result
        result.records.append(self._state_record(key, p.start_offset, p.leader_epoch, p.delivery_complete_count,
                                                 _batches(p.state_batches), now_ms, update_leader_epoch=False))
        result.reply(token, "WriteShareGroupState", _write_response(topic_id, p.partition))
        return result

    def _write_error(self, key: Key, p) -> tuple[int, str] | None:
        refusal = _shape_error(p.partition, p.leader_epoch, p.state_epoch)
        if refusal is not None:
            return refusal
        if key not in self.states:
            return ec.INVALID_REQUEST, WRITE_UNINITIALIZED
        if self.leader_epochs.get(key, p.leader_epoch) > p.leader_epoch:
            return _default(ec.FENCED_LEADER_EPOCH)
        if self.state_epochs.get(key, p.state_epoch) > p.state_epoch:
            return _default(ec.FENCED_STATE_EPOCH)
        return self._metadata_error(key)

    def _metadata_error(self, key: Key) -> tuple[int, str] | None:
        count = self.partitions_of(key[1])
        if count is None or count <= key[2]:
            return _default(ec.UNKNOWN_TOPIC_OR_PARTITION)
        return None

    def _state_record(self, key: Key, start_offset: int, leader_epoch: int, delivery_complete_count: int,
                      written: list[StateBatch], now_ms: int, update_leader_epoch: bool) -> tuple:
        """The record of a write on ``key``'s state: a ShareUpdate, or a ShareSnapshot once enough updates
        followed the last snapshot. A write's leader epoch is not recorded (only a read's); a start offset
        below the held one does not move it back, and the completed-delivery count follows the start offset."""
        held = self.states[key]
        leader = leader_epoch if update_leader_epoch else held.leader_epoch
        start = max(start_offset, held.start_offset)
        complete = delivery_complete_count
        if start_offset == held.start_offset:
            complete = max(delivery_complete_count, held.delivery_complete_count)
        elif start_offset < held.start_offset:
            complete = held.delivery_complete_count
        if self.update_counts.get(key, 0) >= self.config.snapshot_update_records_per_snapshot:
            return snapshot_record(key, ShareState(
                held.snapshot_epoch + 1, held.state_epoch, leader, start, complete,
                tuple(combine(list(held.batches), written, start)), now_ms, now_ms))
        return update_record(key, w.ShareUpdateValue(
            snapshot_epoch=held.snapshot_epoch, leader_epoch=leader, start_offset=start,
            delivery_complete_count=complete,
            state_batches=[_wire_batch(w.ShareUpdateValue.StateBatch, b) for b in combine([], written, start)]))

    def read(self, group_id: str, topic_id: UUID, p, token, now_ms: int) -> Result:
        """ReadShareGroupState of one key: the state, and (when the reader leads in a newer leader epoch than the
        one recorded) a record of that epoch, so an older leader's writes are fenced from then on."""
        key = (group_id, topic_id, p.partition)
        result = Result()
        error = self._read_error(key, p)
        if error is not None:
            result.reply(token, "ReadShareGroupState", _read_response(topic_id, p.partition, *error))
            return result
        held = self.states[key]
        result.reply(token, "ReadShareGroupState", _read_response(topic_id, p.partition, state=held))
        if self.leader_epochs.get(key) != p.leader_epoch:
            result.records.append(self._state_record(key, held.start_offset, p.leader_epoch, -1, [], now_ms,
                                                     update_leader_epoch=True))
        return result

    def _read_error(self, key: Key, p) -> tuple[int, str] | None:
        refusal = _shape_error(p.partition, p.leader_epoch, 0)
        if refusal is not None:
            return refusal
        if key not in self.states:
            return ec.INVALID_REQUEST, READ_UNINITIALIZED
        if self.leader_epochs.get(key, p.leader_epoch) > p.leader_epoch:
            return _default(ec.FENCED_LEADER_EPOCH)
        return self._metadata_error(key)

    def read_summary(self, group_id: str, topic_id: UUID, p, version: int) -> w.ReadShareGroupStateSummaryResponse:
        """ReadShareGroupStateSummary of one key: its start offset and epochs, a key never initialized reading as
        start offset -1 (the answer, at once: nothing is written)."""
        key = (group_id, topic_id, p.partition)
        error = _shape_error(p.partition, 0, 0) or self._metadata_error(key)
        R = w.ReadShareGroupStateSummaryResponse
        if error is not None:
            part = R.PartitionResult(partition=p.partition, error_code=error[0], error_message=error[1],
                                     state_epoch=0, leader_epoch=0, start_offset=0)
        else:
            held = self.states.get(key)
            part = R.PartitionResult(
                partition=p.partition,
                state_epoch=DEFAULT_STATE_EPOCH if held is None else held.state_epoch,
                leader_epoch=DEFAULT_LEADER_EPOCH if held is None else held.leader_epoch,
                start_offset=UNINITIALIZED_START_OFFSET if held is None else held.start_offset,
                delivery_complete_count=-1 if held is None else held.delivery_complete_count)
        return R(results=[R.ReadStateSummaryResult(topic_id=topic_id, partitions=[part])])

    def initialize(self, group_id: str, topic_id: UUID, p, token, now_ms: int) -> Result:
        """InitializeShareGroupState of one key: a fresh snapshot (no batches, leader epoch 0) at the given start
        offset and state epoch, replacing whatever the key held (its snapshot epoch moves on)."""
        key = (group_id, topic_id, p.partition)
        result = Result()
        error = _shape_error(p.partition, 0, p.state_epoch)
        if error is None and self.state_epochs.get(key, p.state_epoch) > p.state_epoch:
            error = _default(ec.FENCED_STATE_EPOCH)
        error = error or self._metadata_error(key)
        R = w.InitializeShareGroupStateResponse
        if error is not None:
            result.reply(token, "InitializeShareGroupState", _simple(R, "InitializeStateResult", topic_id,
                                                                     p.partition, *error))
            return result
        held = self.states.get(key)
        result.records.append(snapshot_record(key, ShareState(
            0 if held is None else held.snapshot_epoch + 1, p.state_epoch, DEFAULT_LEADER_EPOCH, p.start_offset,
            -1 if p.start_offset == -1 else 0, (), now_ms, now_ms)))
        result.reply(token, "InitializeShareGroupState", _simple(R, "InitializeStateResult", topic_id, p.partition))
        return result

    def delete(self, group_id: str, topic_id: UUID, p, token) -> Result:
        """DeleteShareGroupState of one key: the tombstone of its snapshot; a key not held is answered at once."""
        key = (group_id, topic_id, p.partition)
        result = Result()
        error = _shape_error(p.partition, 0, 0) or self._metadata_error(key)
        R = w.DeleteShareGroupStateResponse
        if error is not None:
            result.reply(token, "DeleteShareGroupState", _simple(R, "DeleteStateResult", topic_id, p.partition,
                                                                 *error))
            return result
        if key in self.states:
            result.records.append(snapshot_record(key, None))
        result.reply(token, "DeleteShareGroupState", _simple(R, "DeleteStateResult", topic_id, p.partition))
        return result


    # ================================================================================================ timers
    def snapshot_cold(self, now_ms: int) -> Result:
        """A fresh snapshot of each key not snapshotted for ``cold_partition_snapshot_interval_ms`` (its write
        timestamp moves, its creation timestamp stays), so the log can be cleaned below its old records; nothing
        when every key's last snapshot was already such a one (Kafka's "system is quiet" rule)."""
        result = Result()
        if all(s.create_timestamp != s.write_timestamp for s in self.states.values()):
            return result
        for key, held in self.states.items():
            if now_ms - held.write_timestamp >= self.config.cold_partition_snapshot_interval_ms:
                result.records.append(snapshot_record(key, replace(
                    held, snapshot_epoch=held.snapshot_epoch + 1, write_timestamp=now_ms)))
        return result

    def topics_deleted(self, topic_ids: set[UUID]) -> Result:
        """The tombstones of every key of the deleted topics."""
        result = Result()
        for key in self.states:
            if key[1] in topic_ids:
                result.records.append(snapshot_record(key, None))
        return result


def _shape_error(partition: int, leader_epoch: int, state_epoch: int) -> tuple[int, str] | None:
    """The checks of a key's fields Kafka makes first (a topic id is never null on the wire)."""
    if partition < 0:
        return ec.INVALID_REQUEST, NEGATIVE_PARTITION_ID
    if leader_epoch < 0:
        return ec.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH
    if state_epoch < 0:
        return ec.INVALID_REQUEST, NEGATIVE_STATE_EPOCH
    return None


def _default(code: int) -> tuple[int, str]:
    return code, ec.default_message(code)


def _simple(response_cls, result_name: str, topic_id: UUID, partition: int, code: int = 0,
            message: str | None = None):
    """A Write/Initialize/Delete answer for one key (the three share one shape)."""
    result_cls = getattr(response_cls, result_name)
    part = response_cls.PartitionResult(partition=partition, error_code=code, error_message=message)
    return response_cls(results=[result_cls(topic_id=topic_id, partitions=[part])])


def _write_response(topic_id: UUID, partition: int, code: int = 0, message: str | None = None):
    return _simple(w.WriteShareGroupStateResponse, "WriteStateResult", topic_id, partition, code, message)


def _read_response(topic_id: UUID, partition: int, code: int = 0, message: str | None = None,
                   state: ShareState | None = None):
    R = w.ReadShareGroupStateResponse
    part = R.PartitionResult(partition=partition, error_code=code, error_message=message)
    if state is not None:
        part.state_epoch, part.start_offset = state.state_epoch, state.start_offset
        part.state_batches = [_wire_batch(R.StateBatch, b) for b in state.batches]
    return R(results=[R.ReadStateResult(topic_id=topic_id, partitions=[part])])
