"""Kafka's idempotent-producer sequence rules on the pure per-partition table."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.replica.producers import CACHED_BATCHES, SEQ_MOD, ProducerTable


def test_sequence_rules():
    t = ProducerTable()
    assert t.check(7, 0, 42, 3).error == ec.NONE  # an unknown producer may start anywhere
    t.apply(7, 0, 0, 3, 100, 102)
    assert t.check(7, 0, 3, 1).error == ec.NONE
    assert t.check(7, 0, 0, 3).duplicate == (100, 102)  # a retry of a cached batch
    assert t.check(7, 0, 5, 1).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert t.check(7, 0, 1, 2).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER  # overlaps, not equal
    assert t.check(7, 1, 3, 1).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER  # a new epoch starts at 0
    assert t.check(7, 1, 0, 1).error == ec.NONE
    t.apply(7, 1, 0, 1, 103, 103)
    assert t.check(7, 0, 3, 1).error == ec.INVALID_PRODUCER_EPOCH
    assert t.check(-1, 0, 0, 1).error == ec.NONE  # no producer id: no checks


def test_only_the_last_five_batches_are_remembered_and_sequences_wrap():
    t = ProducerTable()
    for i in range(CACHED_BATCHES + 1):
        t.apply(1, 0, i, 1, i, i)
    assert t.check(1, 0, 0, 1).duplicate is None and t.check(1, 0, 1, 1).duplicate == (1, 1)
    t = ProducerTable()
    t.apply(2, 0, SEQ_MOD - 2, 2, 0, 1)
    assert t.check(2, 0, 0, 1).error == ec.NONE


def test_folding_batch_headers_skips_control_and_anonymous_batches():
    from types import SimpleNamespace as B

    t = ProducerTable()
    t.apply_batch(B(producer_id=-1, is_control=False))
    t.apply_batch(B(producer_id=9, is_control=True))
    t.apply_batch(B(producer_id=9, producer_epoch=0, base_sequence=0, last_offset_delta=1, base_offset=5,
                    last_offset=6, is_control=False))
    assert list(t) == [9] and t[9].last_seq == 1
