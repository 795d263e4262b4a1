"""EndTxn v5 (KIP-890 part 2) beside Apache Kafka 4.4: both formatted at 4.0 with transaction.version 2, the same
requests, the same answers — error codes, and the producer id and epoch EndTxn v5 returns (producer ids mapped to
their order of appearance, as each node allocates its own)."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness import processes
from harness.kafka import KafkaNode

from kraftwire import error_codes as ec
from kraftwire.errors import ProtocolError
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once

RF1 = ("offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n"
       "transaction.state.log.min.isr=1\ntransaction.state.log.num.partitions=1\n")
FORMAT = ("--release-version", "4.0", "--feature", "transaction.version=2")
A = w.AddPartitionsToTxnRequest
E = w.EndTxnRequest


def _ask(port: int, body, version: int):
    return asyncio.run(request_once("127.0.0.1", port, body, version, timeout=15.0))


def _until(port: int, what, done, seconds: float = 90):
    deadline = time.monotonic() + seconds
    while True:
        try:
            answer = what()
            if done(answer):
                return answer
        except (OSError, ProtocolError):  # not listening yet
            answer = None
        assert time.monotonic() < deadline, f"{port}: still {answer}"
        time.sleep(0.3)


def _ready(port: int) -> None:
    _until(port, lambda: _ask(port, w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12),
           lambda r: bool(r.brokers))
    CT = w.CreateTopicsRequest
    created = _ask(port, CT(topics=[CT.CreatableTopic(name="t", num_partitions=2, replication_factor=1,
                                                      assignments=[], configs=[])],
                            timeout_ms=15000, validate_only=False), 7)
    assert created.topics[0].error_code == 0, created.topics[0].error_message
    _until(port, lambda: _ask(port, w.FindCoordinatorRequest(key_type=1, coordinator_keys=["x"]), 4),
           lambda r: r.coordinators[0].error_code == 0)


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    with KafkaNode(tmp_path_factory.mktemp("kafka"), RF1, format_args=FORMAT) as kafka, \
            processes.CombinedNode(tmp_path_factory.mktemp("kraftwire"), RF1, format_args=FORMAT) as ours:
        for port in (kafka.port, ours.port):
            _ready(port)
        yield kafka.port, ours.port


def _init(port: int, tid: str):
    return _until(port, lambda: _ask(port, w.InitProducerIdRequest(
        transactional_id=tid, transaction_timeout_ms=60_000, producer_id=-1, producer_epoch=-1), 5),
        lambda r: r.error_code not in (ec.COORDINATOR_LOAD_IN_PROGRESS, ec.CONCURRENT_TRANSACTIONS))


def _add(port: int, tid: str, pid: int, epoch: int, partition: int) -> int:
    r = _ask(port, A(transactions=[A.AddPartitionsToTxnTransaction(
        transactional_id=tid, producer_id=pid, producer_epoch=epoch, verify_only=False,
        topics=[A.AddPartitionsToTxnTopic(name="t", partitions=[partition])])]), 5)
    return r.error_code or r.results_by_transaction[0].topic_results[0].results_by_partition[0].partition_error_code


def _end(port: int, tid: str, pid: int, epoch: int, commit: bool, *, settle: bool = False):
    """EndTxn v5's (error, producer id, epoch); ``settle``: retried while CONCURRENT_TRANSACTIONS (markers)."""
    def ask():
        r = _ask(port, E(transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit), 5)
        return r.error_code, r.producer_id, r.producer_epoch

    if settle:
        return _until(port, ask, lambda a: a[0] != ec.CONCURRENT_TRANSACTIONS, 30)
    return ask()


def _scenario(port: int) -> list:
    """The answers of one node, producer ids replaced by their order of appearance (-1 kept)."""
    ids: dict[int, int] = {}

    def pid_of(p: int) -> int:
        return p if p < 0 else ids.setdefault(p, len(ids))

    out = []
    init = _init(port, "o1")
    pid, epoch = init.producer_id, init.producer_epoch
    out.append(("init", init.error_code, pid_of(pid), epoch))
    out.append(("add", _add(port, "o1", pid, epoch, 0)))
    out.append(("end larger epoch", _end(port, "o1", pid, epoch + 1, True)))
    out.append(("end smaller epoch", _end(port, "o1", pid, epoch - 1, True)))
    first = _end(port, "o1", pid, epoch, True)
    out.append(("commit", first[0], pid_of(first[1]), first[2] - epoch))
    retry = _end(port, "o1", pid, epoch, True, settle=True)
    out.append(("commit retried", retry[0], pid_of(retry[1]), retry[2] - epoch))
    out.append(("abort after the commit", _end(port, "o1", pid, epoch, False)[0]))
    out.append(("end again at the bumped epoch", _end(port, "o1", pid, epoch + 1, True)[0]))
    out.append(("add at the old epoch", _add(port, "o1", pid, epoch, 1)))
    out.append(("add at the bumped epoch", _add(port, "o1", pid, epoch + 1, 1)))
    abort = _end(port, "o1", pid, epoch + 1, False)
    out.append(("abort", abort[0], pid_of(abort[1]), abort[2] - epoch))
    # a transaction with nothing added: a commit, then an abort
    other = _init(port, "o2")
    out.append(("commit of nothing", _end(port, "o2", other.producer_id, other.producer_epoch, True)[0]))
    nothing = _end(port, "o2", other.producer_id, other.producer_epoch, False)
    out.append(("abort of nothing", nothing[0], pid_of(nothing[1]), nothing[2] - other.producer_epoch))
    # after a completed commit, the next transaction ends with nothing added: an abort, then a commit
    third = _init(port, "o3")
    pid3, epoch3 = third.producer_id, third.producer_epoch
    out.append(("add o3", _add(port, "o3", pid3, epoch3, 0)))
    out.append(("commit o3", _end(port, "o3", pid3, epoch3, True)[0]))
    _end(port, "o3", pid3, epoch3, True, settle=True)
    empty = _end(port, "o3", pid3, epoch3 + 1, False, settle=True)
    out.append(("abort of nothing after a commit", empty[0], pid_of(empty[1]), empty[2] - epoch3))
    out.append(("commit of nothing after an abort", _end(port, "o3", pid3, epoch3 + 2, True, settle=True)[0]))
    return out


def test_end_txn_v5_answers_as_kafka(ports):
    kafka, ours = (_scenario(port) for port in ports)
    assert ours == kafka
