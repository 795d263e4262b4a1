"""The coordinator runtime: one host for every coordinator shard kind (groups, transactions), as Kafka's
``CoordinatorRuntime`` hosts the group and share shards.

A shard is the pure state machine of one internal-topic partition (a ``__consumer_offsets`` partition for groups, a
``__transaction_state`` partition for transactional ids). The runtime owns what every kind shares:

* **Hosting.** ``elect(p, writer)`` makes this node the partition's coordinator: a fresh shard, LOADING, replayed
  from the partition's log start to its log end (``load_chunk``, a chunk per call, so an edge can serve others in
  between) and then ACTIVE; a record the shard cannot read makes it FAILED (not served). ``resign(p)`` ends it and
  answers what the shard still holds (waiting joins) NOT_COORDINATOR. ``route(p)`` says which hosting serves a
  request now, or the error to answer: COORDINATOR_LOAD_IN_PROGRESS while loading, NOT_COORDINATOR otherwise.
* **Writing.** ``write(p, result)`` appends a result's records through the partition's writer as one batch, lets the
  kind fold them at their offsets, and sends the result's replies once the partition commits the batch (the high
  watermark passes it). A write that fails answers each reply with its refusal under Kafka's mapping
  (``write_error``) and reloads the shard from the log, which undoes what the shard had assumed.
* **Time** is passed in (``now_ms``); the runtime has no clock, no event loop and no I/O of its own.

What differs between kinds is a ``ShardKind`` (how to make a shard, fold a batch while loading, fold its own
write, refuse a reply, what follows a load or a commit); what differs between partitions is a ``PartitionWriter``:
an ISR partition on a KRaft broker (``server/runtime/coordinator_runtime.py``) or the in-memory replicated log of the
simulations (``testing/coordinator_log.py``). An edge gives the runtime ``send(reply, body)`` and
``start_load(hosted)`` (an asyncio task calling ``load_chunk`` until it returns True; a simulation loops at once).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, NamedTuple, Protocol

from kraftwire import error_codes as ec
from kraftwire.coordinator.records import CoordinatorRecordError
from kraftwire.errors import LogIOError

log = logging.getLogger("kraftwire.coordinator")

LOADING, ACTIVE, FAILED = "LOADING", "ACTIVE", "FAILED"


def write_error(error: int) -> int:
    """Kafka's mapping of a failed coordinator write to what the client is told."""
    if error in (ec.NOT_LEADER_OR_FOLLOWER, ec.KAFKA_STORAGE_ERROR):
        return ec.NOT_COORDINATOR
    if error in (ec.UNKNOWN_TOPIC_OR_PARTITION, ec.NOT_ENOUGH_REPLICAS, ec.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                 ec.REQUEST_TIMED_OUT):
        return ec.COORDINATOR_NOT_AVAILABLE
    return ec.UNKNOWN_SERVER_ERROR


class Appended(NamedTuple):
    """A writer's answer to an append: an error (nothing written), or where the batch landed (``end``: the offset
    after its last record)."""

    error: int
    base_offset: int = -1
    end: int = -1


class PartitionWriter(Protocol):
    """The partition a hosting reads and writes; the node leads it in ``epoch`` (Kafka's coordinator epoch)."""

    epoch: int

    def leading(self) -> bool:
        """Whether this node still leads the partition (a reload after a failed write happens only then)."""

    def append(self, records: list, now_ms: int, producer: tuple[int, int] | None = None,
               guard: Any = None) -> Appended:
        """Append ``records`` ((key, value) pairs) as one batch; ``producer``: (id, epoch) to append them as that
        producer's transactional batch, checked against the verification ``guard`` (KIP-890)."""

    def when_committed(self, end: int, done: Callable[[int], None]) -> None:
        """``done(NONE)`` once the high watermark reaches ``end``, ``done(error)`` when that cannot happen."""

    def high_watermark(self) -> int: ...

    def start_offset(self) -> int: ...

    def end_offset(self) -> int: ...

    def read(self, position: int) -> list:
        """The batches from ``position`` on, one chunk of them (empty past the end); a batch has ``base_offset``,
        ``last_offset``, ``is_control``, ``is_transactional``, ``producer_id`` and records with ``offset``,
        ``key`` and ``value``."""


def replay_batch(hosted: "Hosted", batch, position: int) -> int:
    """``ShardKind.take`` for a kind whose records carry no transactions (the transaction and share coordinators):
    every data record from ``position`` on replayed into the shard, control batches skipped."""
    if batch.is_control:
        return 0
    count = 0
    for rec in batch:
        if rec.offset >= position:
            hosted.shard.replay(rec.key, rec.value)
            count += 1
    return count


class ShardKind(Protocol):
    """What one kind of coordinator adds to the runtime (``coordinator.group.hosting``, ``coordinator.txn.hosting``)."""

    topic: str

    def new_shard(self, partition: int) -> Any: ...

    def take(self, hosted: "Hosted", batch, position: int) -> int:
        """Fold ``batch`` (from ``position`` on) while loading; the number of records folded."""

    def loaded(self, hosted: "Hosted", now_ms: int) -> None:
        """The load reached the log end (``hosted.loaded_to``): the shard serves from now on."""

    def serving(self, shard) -> bool: ...

    def appended(self, hosted: "Hosted", records: list, base_offset: int,
                 producer: tuple[int, int] | None) -> None:
        """The shard's own records were appended at ``base_offset``: fold what it has not already assumed."""

    def committed(self, hosted: "Hosted", result) -> None:
        """``result``'s records are committed and its replies sent (what follows, e.g. transaction markers)."""

    def advanced(self, hosted: "Hosted") -> None:
        """The partition's high watermark moved."""

    def refusal(self, reply, code: int) -> Any:
        """The body to answer instead of ``reply.body`` when its write failed."""

    def producer_refusal(self, error: int) -> int | None:
        """The answer to a producer's batch refused for that producer alone (nothing was written, the shard assumed
        nothing: no reload), or None when ``error`` is the partition failing."""

    def unloaded(self, shard) -> Iterable:
        """The replies the shard still holds, answered when this node stops coordinating the partition."""


class Hosted:
    """One partition this node coordinates: its shard, the writer it leads the partition through, and its state.
    ``scanned`` (group kind: how far transaction markers were looked for) and ``resend`` (transaction kind:
    markers of transactions found prepared) are what the kinds keep per hosting."""

    __slots__ = ("partition", "shard", "writer", "epoch", "state", "position", "loaded_to", "records", "task",
                 "scanned", "resend")

    def __init__(self, partition: int, shard, writer: PartitionWriter) -> None:
        self.partition, self.shard, self.writer = partition, shard, writer
        self.epoch = writer.epoch
        self.state = LOADING
        self.position = writer.start_offset()  # the next offset the load folds
        self.loaded_to = -1
        self.records = 0  # folded by the load
        self.task: Any = None  # the edge's load task, cancelled when the hosting ends first
        self.scanned = 0
        self.resend: list = []

    @property
    def loading(self) -> bool:
        return self.state == LOADING

    @loading.setter
    def loading(self, loading: bool) -> None:
        """Hold a loaded hosting as loading (or let it serve again): how a test sees the answers given meanwhile."""
        self.state = LOADING if loading else ACTIVE


class CoordinatorRuntime:
    """The partitions of one shard kind this node coordinates (``hosted``). ``send(reply, body)`` answers a reply;
    ``start_load(hosted)`` begins a load the edge drives with ``load_chunk``."""

    def __init__(self, kind: ShardKind, send: Callable[[Any, Any], None],
                 start_load: Callable[[Hosted], None]) -> None:
        self.kind = kind
        self.send = send
        self.start_load = start_load
        self.hosted: dict[int, Hosted] = {}

    # ------------------------------------------------------------------------------------------------ hosting
    def route(self, partition: int) -> tuple[Hosted | None, int]:
        """The hosting that serves ``partition`` now, or None and the error to answer."""
        h = self.hosted.get(partition)
        if h is not None and h.state == LOADING:
            return None, ec.COORDINATOR_LOAD_IN_PROGRESS
        if h is None or h.state == FAILED or not self.kind.serving(h.shard):
            return None, ec.NOT_COORDINATOR
        return h, ec.NONE

    def loading(self) -> bool:
        return any(h.state == LOADING for h in self.hosted.values())

    def active(self) -> list[Hosted]:
        return [h for h in self.hosted.values() if h.state == ACTIVE]

    def reconcile(self, wanted: dict[int, PartitionWriter]) -> None:
        """Host exactly the partitions ``wanted`` names, each through its writer: a partition whose writer or
        leader epoch changed is resigned and elected again."""
        for p in [p for p, h in self.hosted.items()
                  if p not in wanted or h.writer is not wanted[p] or h.epoch != wanted[p].epoch]:
            self.resign(p)
        for p, writer in wanted.items():
            if p not in self.hosted:
                self.elect(p, writer)

    def elect(self, partition: int, writer: PartitionWriter) -> Hosted:
        h = self.hosted[partition] = Hosted(partition, self.kind.new_shard(partition), writer)
        self.start_load(h)
        return h

    def resign(self, partition: int) -> Hosted | None:
        h = self.hosted.pop(partition, None)
        if h is None:
            return None
        if h.task is not None:
            h.task.cancel()
        for reply in self.kind.unloaded(h.shard):
            self.send(reply, reply.body)
        log.info("unloaded %s-%d", self.kind.topic, partition)
        return h

    def reload(self, partition: int) -> None:
        """Load the partition again from its log (what the shard assumed of a failed write is undone)."""
        h = self.resign(partition)
        if h is not None and h.writer.leading():
            self.elect(partition, h.writer)

    def _load_end(self, h: Hosted) -> int:
        """A load replays to the log end, past the high watermark: records above it may commit later."""
        return h.writer.end_offset()

    def load_chunk(self, h: Hosted, now_ms: int) -> bool:
        """Fold one chunk of the partition into the loading shard; True once the load is over (ACTIVE, FAILED, or
        the hosting ended meanwhile)."""
        if self.hosted.get(h.partition) is not h or h.state != LOADING:
            return True
        end = self._load_end(h)
        try:
            batches = h.writer.read(h.position) if h.position < end else []
            for batch in batches:
                if batch.base_offset >= end:
                    break
                if batch.last_offset < h.position:
                    continue
                h.records += self.kind.take(h, batch, h.position)
                h.position = batch.last_offset + 1
            if batches and h.position < end:
                return False
        except (CoordinatorRecordError, LogIOError) as exc:
            log.error("cannot load %s-%d: %s; its keys are not served", self.kind.topic, h.partition, exc)
            h.state = FAILED
            return True
        h.state = ACTIVE
        h.loaded_to = h.position
        self.kind.loaded(h, now_ms)
        return True

    def high_watermark_moved(self, partition: int, writer: PartitionWriter) -> None:
        h = self.hosted.get(partition)
        if h is not None and h.writer is writer:
            self.kind.advanced(h)

    # ------------------------------------------------------------------------------------------------ writing
    def write(self, partition: int, result, now_ms: int, on_done: Callable[[int], None] | None = None,
              producer: tuple[int, int] | None = None, guard: Any = None) -> None:
        """Append ``result``'s records and send its replies once they are committed; ``on_done(error)`` after that
        (0, or what a failed write answered). ``producer`` and ``guard``: see ``PartitionWriter.append``."""
        if not result.records:
            self._answer(None, result, on_done)
            return
        h = self.hosted[partition]
        appended = h.writer.append(result.records, now_ms, producer, guard)
        if appended.error:
            code = self.kind.producer_refusal(appended.error) if producer is not None else None
            if code is not None:
                for reply in result.replies:
                    self.send(reply, self.kind.refusal(reply, code))
                if on_done is not None:
                    on_done(appended.error)
                return
            self._failed(h, result, appended.error, on_done)
            return
        self.kind.appended(h, result.records, appended.base_offset, producer)

        def committed(error: int) -> None:
            if error:
                self._failed(h, result, error, on_done)
            else:
                self._answer(h, result, on_done)

        self._await_commit(h, appended.end, committed)

    def _await_commit(self, h: Hosted, end: int, done: Callable[[int], None]) -> None:
        """A write's replies wait for the partition to commit it."""
        h.writer.when_committed(end, done)

    def _answer(self, h: Hosted | None, result, on_done) -> None:
        for reply in result.replies:
            self.send(reply, reply.body)
        if h is not None and self.hosted.get(h.partition) is h:
            self.kind.committed(h, result)
        if on_done is not None:
            on_done(0)

    def _failed(self, h: Hosted, result, error: int, on_done) -> None:
        code = write_error(error)
        log.info("a write to %s-%d failed (%s): answering %s and reloading", self.kind.topic, h.partition,
                 ec.name_of(error), ec.name_of(code))
        for reply in result.replies:
            self.send(reply, self.kind.refusal(reply, code))
        if self.hosted.get(h.partition) is h:
            self.reload(h.partition)
        if on_done is not None:
            on_done(code)
