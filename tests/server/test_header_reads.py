"""Issue #39: a produced batch's headers are read once per node. The leader's append plan validates the records and
keeps the headers that validation read (checks, recompression, LogAppendTime, producer state), and the log re-bases
at the positions it reported; the follower's append validates once and hands the same headers to the producer
state. Counted here by wrapping every codec call that walks batch headers in the modules of the two paths."""

from __future__ import annotations

import pytest

from kraftwire.log.memory import MemoryPartitionLog
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.leader_append import AppendPlan, plan_append
from kraftwire.replica.partition import ReplicaState
from kraftwire.replica.producers import ProducerTable
from kraftwire.replica.transactions import PartitionTxns
from kraftwire.replica.verification import ProducerVerifications
from kraftwire.server.runtime import partition_runtime as runtime

NOW = 1_700_000_000_000
CONFIG = {"message.timestamp.type": "CreateTime", "message.timestamp.before.max.ms": "9223372036854775807",
          "message.timestamp.after.max.ms": "9223372036854775807", "compression.type": "producer",
          "cleanup.policy": "delete"}
#: (module, name) of each codec call that reads batch headers on the Produce path
WALKERS = [("kraftwire.replica.leader_append", "validate_batches"), ("kraftwire.replica.recompression", "read_batches"),
           ("kraftwire.replica.log_append_time", "read_batches"), ("kraftwire.log.base", "validate_batches"),
           ("kraftwire.log.base", "read_batches"), ("kraftwire.log.base", "rebase_batches")]


@pytest.fixture
def reads(monkeypatch):
    """The header-reading codec calls made, as (name, whether it walked the headers)."""
    import importlib

    calls = []
    for module, name in WALKERS:
        mod = importlib.import_module(module)
        real = getattr(mod, name)

        def counted(*args, _real=real, _name=name, **kw):
            calls.append(_name)
            if _name == "rebase_batches" and kw.get("batches") is not None:
                calls.pop()  # stamps at the reported positions: reads no header
            return _real(*args, **kw)

        monkeypatch.setattr(mod, name, counted)
    return calls


def _idempotent_batch(seq: int) -> bytes:
    b = RecordBatchBuilder(base_offset=0, producer_id=7, producer_epoch=0, base_sequence=seq)
    for i in range(3):
        b.append(None, b"v%d" % i, timestamp=NOW)
    return b.build()


def _leader_append(lg, state, table, txns, records, config=CONFIG):
    plan = plan_append(records, topic="t", index=0, config=config, max_batch_size=1_000_000, log_start=0,
                       producers=lambda: (table, txns), verifications=ProducerVerifications(), wall_ms=NOW,
                       owned=True)
    assert isinstance(plan, AppendPlan)
    return runtime.append_planned(state, lg, plan, lambda: (table, txns), ProducerVerifications())


def _leader():
    lg = MemoryPartitionLog()
    lg.initialize_leader_epoch(0)
    state = ReplicaState(1, "t", 0)
    state.leader_epoch = 0
    return lg, state, ProducerTable(), PartitionTxns()


@pytest.mark.parametrize("frame", [bytes, bytearray], ids=["copied", "in-place"])
def test_the_leader_reads_a_produced_batchs_headers_once(reads, frame):
    lg, state, table, txns = _leader()
    _leader_append(lg, state, table, txns, memoryview(frame(_idempotent_batch(0))))
    result = _leader_append(lg, state, table, txns, memoryview(frame(_idempotent_batch(3))))
    assert reads == ["validate_batches", "validate_batches"]  # one per append
    assert (result.base_offset, result.end) == (3, 6)
    assert table.check(7, 0, 3, 3).duplicate == (3, 5)  # the producer's state came from the headers read


def test_a_topics_own_compression_and_log_append_time_read_the_same_headers(reads):
    lg, state, table, txns = _leader()
    config = dict(CONFIG, **{"compression.type": "gzip", "message.timestamp.type": "LogAppendTime"})
    _leader_append(lg, state, table, txns, _idempotent_batch(0), config)
    # the rebuilt batch is new bytes: validated once itself, then stamped with the headers of that validation
    assert reads == ["validate_batches", "read_batches", "validate_batches"]
    assert [b.compression for b in read_batches(bytes(lg.read(0, 1 << 20).records))] == ["gzip"]


def test_the_follower_reads_a_fetched_batchs_headers_once(reads):
    lg, state, table, txns = _leader()
    _leader_append(lg, state, table, txns, _idempotent_batch(0))
    fetched = bytes(lg.read(0, 1 << 20).records)
    reads.clear()
    follower = MemoryPartitionLog()
    headers = runtime.follower_append(state, follower, memoryview(fetched))
    assert reads == ["validate_batches"]
    assert [(h.producer_id, h.base_sequence, h.base_offset) for h in headers] == [(7, 0, 0)]
    assert follower.end_offset() == 3
