"""The asyncio side of the coordinator runtime on a KRaft broker (the rules are ``kraftwire.coordinator.runtime``).

* ``IsrPartition`` is the partition writer over one of this broker's ISR partitions (``server/runtime/replicas.py``): a
  coordinator's records go to the partition as one batch with acks=all, committed once the high watermark passes
  it within ``timeout_ms`` and while enough replicas are in sync.
* ``BrokerRuntime`` hosts one shard kind over one internal topic: it follows the metadata image (host the
  partitions this broker leads, in their leader epoch), loads each partition a chunk per turn of the event loop (so
  the broker keeps serving everyone else while a large partition loads), and tells the runtime when a hosted
  partition's high watermark moved.
"""

from __future__ import annotations

import asyncio

from kraftwire.coordinator.runtime import Appended, CoordinatorRuntime, Hosted
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.partition import LEADER
from kraftwire.server.runtime.clocks import wall_ms as now_ms

#: bytes of the partition replayed per turn of the event loop while a shard loads
LOAD_CHUNK = 1 << 20


class IsrPartition:
    """``PartitionWriter`` over the ISR partition ``hp`` this broker leads (``replicas``: the ReplicaManager)."""

    def __init__(self, replicas, hp, timeout_ms: int) -> None:
        self.replicas, self.hp, self.timeout_ms = replicas, hp, timeout_ms

    @property
    def epoch(self) -> int:
        return self.hp.state.leader_epoch

    def leading(self) -> bool:
        return not self.hp.failed and self.hp.state.role == LEADER

    def next_sequence(self, producer_id: int, epoch: int) -> int:
        """The sequence a TxnOffsetCommit batch of the producer takes in the partition: Kafka appends it with origin
        COORDINATOR, which skips the sequence check; here the batch carries the sequence the partition expects next
        (0 for an epoch it has not seen), so the leader's producer check accepts it."""
        entry = self.hp.producer_table().get(producer_id)
        if entry is None or entry.epoch != epoch or entry.last_seq < 0:
            return 0
        return (entry.last_seq + 1) % (1 << 31)

    def append(self, records: list, now_ms: int, producer=None, guard=None) -> Appended:
        hp = self.hp
        error, _message = hp.state.produce_error(-1, hp.min_isr)
        if error:
            return Appended(error)
        builder = RecordBatchBuilder() if producer is None else RecordBatchBuilder(
            is_transactional=True, producer_id=producer[0], producer_epoch=producer[1],
            base_sequence=self.next_sequence(*producer))
        for key, value in records:
            builder.append(key, value, timestamp=now_ms)
        appended = self.replicas.append(hp, builder.build(), -1, verify=producer is not None, guard=guard)
        return Appended(appended.error, appended.base_offset, appended.end)

    def when_committed(self, end: int, done) -> None:
        hp = self.hp

        def committed(error: int) -> None:
            done(error or hp.state.ack_error(hp.min_isr))

        self.replicas.wait_committed(hp, end, committed, self.timeout_ms)

    def high_watermark(self) -> int:
        return self.hp.log.high_watermark()

    def start_offset(self) -> int:
        return self.hp.log.start_offset()

    def end_offset(self) -> int:
        return self.hp.log.end_offset()

    def read(self, position: int) -> list:
        return list(read_batches(self.hp.log.read(position, LOAD_CHUNK).records))


class BrokerRuntime(CoordinatorRuntime):
    """The coordinator runtime of one shard kind on a KRaft broker. ``send(reply, body)`` answers a reply."""

    def __init__(self, kind, send, replicas, metadata, timeout_ms) -> None:
        super().__init__(kind, send, self._start_load)
        self.replicas = replicas
        self.timeout_ms = timeout_ms  # how long a write may wait for its commit
        replicas.watchers.append(self._hw_moved)
        metadata.on_image.append(self._image)
        #: called after each image (the edge starts its timers once something is hosted)
        self.on_hosting = None

    def _image(self, image) -> None:
        """Host the partitions of the topic this broker leads; one whose replica or leader epoch changed is loaded
        again (a new leader epoch is a new coordinator epoch)."""
        topic = image.topic(self.kind.topic)
        wanted = {}
        for index in (topic.partitions if topic is not None else ()):
            hp = self.replicas.get(self.kind.topic, index)
            if hp is None or hp.failed or hp.state.role != LEADER:
                continue
            h = self.hosted.get(index)
            wanted[index] = h.writer if h is not None and h.writer.hp is hp else IsrPartition(
                self.replicas, hp, self.timeout_ms)
        self.reconcile(wanted)
        if self.on_hosting is not None:
            self.on_hosting()

    def _start_load(self, h: Hosted) -> None:
        h.task = asyncio.get_running_loop().create_task(self._load(h))

    async def _load(self, h: Hosted) -> None:
        """Replay the partition a chunk per turn of the event loop; requests for its keys get
        COORDINATOR_LOAD_IN_PROGRESS meanwhile, as Kafka answers while it loads."""
        while not self.load_chunk(h, now_ms()):
            await asyncio.sleep(0)

    def _hw_moved(self, hp) -> None:
        if hp.topic != self.kind.topic:
            return
        h = self.hosted.get(hp.index)
        if h is not None and h.writer.hp is hp:
            self.high_watermark_moved(hp.index, h.writer)

    def close(self) -> None:
        for p in list(self.hosted):
            self.resign(p)

