"""The coordinator runtime's own rules (``kraftwire.coordinator.runtime``), with a scripted partition writer and a
toy shard kind; Kafka's ``CoordinatorRuntimeTest`` checks the same (testScheduleLoading, testScheduleLoadingWithFailure,
testScheduleWriteOp, testScheduleWriteOpWhenWriteFails, testScheduleUnloading)."""

from __future__ import annotations

import pytest

from kraftwire import error_codes as ec
from kraftwire.coordinator.records import CoordinatorRecordError
from kraftwire.coordinator.runtime import ACTIVE, FAILED, LOADING, Appended, CoordinatorRuntime, write_error
from kraftwire.testing.coordinator_log import SimBatch, SimRecord


class Reply:
    def __init__(self, token, body) -> None:
        self.token, self.body = token, body


class Result:
    def __init__(self, records, *tokens) -> None:
        self.records = records
        self.replies = [Reply(t, "ok") for t in tokens]


class Writer:
    """A partition holding ``entries`` ((key, value) per offset), read one batch per chunk; appends answer
    ``append_error``; commits wait for ``commit``."""

    def __init__(self, entries=(), epoch: int = 3) -> None:
        self.entries = list(entries)
        self.epoch = epoch
        self.append_error = ec.NONE
        self.waiting: list = []
        self.lead = True

    def leading(self) -> bool:
        return self.lead

    def append(self, records, now_ms, producer=None, guard=None) -> Appended:
        if self.append_error:
            return Appended(self.append_error)
        base = len(self.entries)
        self.entries.extend(records)
        return Appended(ec.NONE, base, len(self.entries))

    def when_committed(self, end, done) -> None:
        self.waiting.append(done)

    def commit(self, error: int = ec.NONE) -> None:
        waiting, self.waiting = self.waiting, []
        for done in waiting:
            done(error)

    def high_watermark(self) -> int:
        return 0

    def start_offset(self) -> int:
        return 0

    def end_offset(self) -> int:
        return len(self.entries)

    def read(self, position: int) -> list:
        return [SimBatch(position, [SimRecord(position, *self.entries[position])])] if position < len(
            self.entries) else []


class Kind:
    """A shard that is the list of values it folded; a value b"bad" cannot be read."""

    topic = "toy"

    def __init__(self) -> None:
        self.loaded_at = None

    def new_shard(self, partition):
        return []

    def take(self, hosted, batch, position):
        for rec in batch:
            if rec.value == b"bad":
                raise CoordinatorRecordError("unreadable")
            hosted.shard.append(rec.value)
        return 1

    def loaded(self, hosted, now_ms):
        self.loaded_at = (hosted.loaded_to, now_ms)

    def serving(self, shard):
        return True

    def appended(self, hosted, records, base_offset, producer):
        hosted.shard.extend(v for _k, v in records)

    def committed(self, hosted, result):
        pass

    def advanced(self, hosted):
        pass

    def refusal(self, reply, code):
        return ("refused", code)

    def producer_refusal(self, error):
        return ec.INVALID_PRODUCER_EPOCH if error == ec.INVALID_PRODUCER_EPOCH else None

    def unloaded(self, shard):
        return [Reply("waiting", ("unloaded",))]


def _runtime():
    sent = []
    loads = []
    runtime = CoordinatorRuntime(Kind(), lambda reply, body: sent.append((reply.token, body)), loads.append)
    return runtime, sent, loads


def test_a_partition_is_served_once_loaded_to_its_log_end_and_load_in_progress_before():
    runtime, _sent, loads = _runtime()
    writer = Writer([(b"k", b"a"), (b"k", b"b")])
    h = runtime.elect(0, writer)
    assert loads == [h] and h.state == LOADING and h.epoch == 3
    assert runtime.route(0) == (None, ec.COORDINATOR_LOAD_IN_PROGRESS)
    assert runtime.route(1) == (None, ec.NOT_COORDINATOR)
    assert runtime.load_chunk(h, 7) is False  # one batch per chunk here: the edge calls again
    assert runtime.load_chunk(h, 8) is True
    assert h.state == ACTIVE and h.shard == [b"a", b"b"] and runtime.kind.loaded_at == (2, 8)
    assert runtime.route(0) == (h, ec.NONE)


def test_a_record_the_shard_cannot_read_fails_the_partition():
    runtime, _sent, _loads = _runtime()
    h = runtime.elect(0, Writer([(b"k", b"bad")]))
    assert runtime.load_chunk(h, 0) is True
    assert h.state == FAILED and runtime.route(0) == (None, ec.NOT_COORDINATOR)


def test_a_write_is_answered_once_committed():
    runtime, sent, _loads = _runtime()
    writer = Writer()
    h = runtime.elect(0, writer)
    runtime.load_chunk(h, 0)
    done = []
    runtime.write(0, Result([(b"k", b"x")], "c1"), 5, done.append)
    assert h.shard == [b"x"] and sent == [] and done == []
    writer.commit()
    assert sent == [("c1", "ok")] and done == [0]


def test_a_failed_write_is_refused_under_kafkas_mapping_and_the_partition_reloaded():
    runtime, sent, loads = _runtime()
    writer = Writer()
    h = runtime.elect(0, writer)
    runtime.load_chunk(h, 0)
    runtime.write(0, Result([(b"k", b"x")], "c1"), 5)
    writer.commit(ec.REQUEST_TIMED_OUT)
    assert sent == [("c1", ("refused", ec.COORDINATOR_NOT_AVAILABLE)), ("waiting", ("unloaded",))]
    again = runtime.hosted[0]
    assert again is not h and again.state == LOADING and loads[-1] is again


def test_a_write_the_partition_refuses_at_once_reloads_but_not_when_no_longer_leading():
    runtime, sent, _loads = _runtime()
    writer = Writer()
    runtime.load_chunk(runtime.elect(0, writer), 0)
    writer.append_error, writer.lead = ec.NOT_LEADER_OR_FOLLOWER, False
    done = []
    runtime.write(0, Result([(b"k", b"x")], "c1"), 5, done.append)
    assert ("c1", ("refused", ec.NOT_COORDINATOR)) in sent and done == [ec.NOT_COORDINATOR]
    assert 0 not in runtime.hosted


def test_a_producer_batch_refused_for_its_producer_changes_nothing():
    runtime, sent, _loads = _runtime()
    writer = Writer()
    h = runtime.elect(0, writer)
    runtime.load_chunk(h, 0)
    writer.append_error = ec.INVALID_PRODUCER_EPOCH
    done = []
    runtime.write(0, Result([(b"k", b"x")], "c1"), 5, done.append, producer=(7, 1))
    assert sent == [("c1", ("refused", ec.INVALID_PRODUCER_EPOCH))] and done == [ec.INVALID_PRODUCER_EPOCH]
    assert runtime.hosted[0] is h and h.shard == []


def test_a_new_leader_epoch_is_a_new_hosting_and_resigning_answers_what_waits():
    runtime, sent, _loads = _runtime()
    writer = Writer()
    h = runtime.elect(0, writer)
    runtime.reconcile({0: writer})
    assert runtime.hosted[0] is h  # the same partition in the same epoch stays hosted
    writer.epoch = 4
    runtime.reconcile({0: writer})
    assert runtime.hosted[0] is not h and runtime.hosted[0].epoch == 4 and sent == [("waiting", ("unloaded",))]
    runtime.reconcile({})
    assert runtime.hosted == {}


@pytest.mark.parametrize("error, code", [
    (ec.NOT_LEADER_OR_FOLLOWER, ec.NOT_COORDINATOR), (ec.KAFKA_STORAGE_ERROR, ec.NOT_COORDINATOR),
    (ec.UNKNOWN_TOPIC_OR_PARTITION, ec.COORDINATOR_NOT_AVAILABLE), (ec.NOT_ENOUGH_REPLICAS,
                                                                    ec.COORDINATOR_NOT_AVAILABLE),
    (ec.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ec.COORDINATOR_NOT_AVAILABLE),
    (ec.REQUEST_TIMED_OUT, ec.COORDINATOR_NOT_AVAILABLE), (ec.CORRUPT_MESSAGE, ec.UNKNOWN_SERVER_ERROR)])
def test_a_failed_write_answers_as_kafka_normalizes_it(error, code):
    assert write_error(error) == code
