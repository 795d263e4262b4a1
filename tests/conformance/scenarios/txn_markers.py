"""WriteTxnMarkers v2 (KIP-1228): the transaction version a coordinator puts on each marker picks the partition
leader's epoch rule (Kafka 4.4's ``ProducerAppendInfo.checkProducerEpoch``). A transaction version 2 coordinator
bumps the epoch at every end, so its marker must carry an epoch above the producer's: the current one is
INVALID_PRODUCER_EPOCH while the producer's transaction is open, and taken (appended again) when it repeats a marker
already written; TV_UNKNOWN (-1) fails Kafka's append, UNKNOWN_SERVER_ERROR; v1 (and versions 0 and 1) refuses older
epochs only. Both on "single", whose pair finalizes transaction.version 2."""

from __future__ import annotations

from conformance.data_steps import (A, EPOCH, PRODUCE_VERSION, idempotent, marker, produce, records, topic_with,
                                    transactional)
from conformance.runner import Scenario, no_error
from conformance.scenarios.wrong_node import list_latest

#: a producer id no InitProducerId gave: a broker takes an idempotent batch, and markers, of any id
PRODUCER = 7100
#: the first Produce version of a transaction.version 2 client: the leader adds the partition to the transaction
TV2_PRODUCE = 12


def _tv2(epoch, **kw):
    return marker((A, [0]), epoch=epoch, version=2, transaction_version=2, **kw)


SCENARIOS = [
    # a TV2 transaction open on A-0 (its Produce added the partition): a TV2 marker at its epoch is refused, nothing
    # appended, as is one of TV_UNKNOWN; a v1 marker at that epoch (no transaction version: the older-epoch rule)
    # closes it; the TV2 marker at that epoch then repeats one already written and is appended too
    Scenario("WriteTxnMarkers", 2, "tv2-epoch-of-the-open-transaction", [
        *topic_with(A), *transactional(),
        produce(TV2_PRODUCE, (A, 0, idempotent(2, 0, transactional=True)), transactional_id="{ns}.t",
                until=no_error),
        _tv2(EPOCH),
        marker((A, [0]), version=2, transaction_version=-1),
        list_latest(7),
        marker((A, [0]), version=1),
        _tv2(EPOCH),
        list_latest(7)], "single"),
    # an idempotent producer at epoch 3 (no transaction): a TV2 marker below it is stale, at it a repeat (appended),
    # above it the coordinator's bump; versions from 2 up all count as TV2
    Scenario("WriteTxnMarkers", 2, "tv2-below-at-and-above-the-epoch", [
        *topic_with(A),
        produce(PRODUCE_VERSION, (A, 0, records(producer_id=PRODUCER, producer_epoch=3, base_sequence=0))),
        _tv2(2, producer_id=PRODUCER),
        _tv2(3, producer_id=PRODUCER),
        _tv2(4, producer_id=PRODUCER),
        marker((A, [0]), producer_id=PRODUCER, epoch=4, version=2, transaction_version=3, commit=False),
        marker((A, [0]), producer_id=PRODUCER, epoch=3, version=2, transaction_version=0),
        list_latest(7)], "single"),
]
