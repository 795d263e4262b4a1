"""Committed batches become published images; a metadata transaction (KIP-868) is published whole or not at all."""

from __future__ import annotations

import uuid

import pytest

from kraftwire.metadata.image import MetadataReplayError, replay_all
from kraftwire.metadata.loader import MetadataLoader
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

MV = m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)


def topic(i: int):
    return m.TopicRecord(name=f"t{i}", topic_id=uuid.UUID(int=i))


def test_each_batch_is_published_at_its_last_offset():
    loader = MetadataLoader()
    first = loader.load_batch(0, [MV])
    second = loader.load_batch(2, [topic(1), m.NoOpRecord()])
    assert (first.offset, second.offset) == (0, 2)
    assert first.topic("t1") is None and second.topic("t1") is not None
    assert loader.load_batch(3, [m.NoOpRecord()]).offset == 3


def test_a_transaction_is_invisible_until_its_end():
    loader = MetadataLoader()
    loader.load_batch(0, [MV])
    assert loader.load_batch(3, [m.BeginTransactionRecord(name="Bootstrap records"), topic(1), topic(2)]) is None
    assert loader.in_transaction and loader.image.offset == 0 and loader.image.topic("t1") is None
    assert loader.load_batch(5, [topic(3)]) is None
    done = loader.load_batch(6, [m.EndTransactionRecord()])
    assert done.offset == 6 and [done.topic(f"t{i}") is not None for i in (1, 2, 3)] == [True] * 3


def test_an_aborted_transaction_leaves_the_image_as_it_was_before():
    loader = MetadataLoader()
    loader.load_batch(0, [MV])
    assert loader.load_batch(2, [topic(1), m.BeginTransactionRecord(), topic(2)]) is None
    after = loader.load_batch(3, [m.AbortTransactionRecord(reason="Controller failover")])
    assert after.offset == 3
    assert after.topic("t1") is not None and after.topic("t2") is None  # before Begin: kept; inside: dropped


@pytest.mark.parametrize("batches, reason", [
    ([[m.EndTransactionRecord()]], "without a BeginTransactionRecord"),
    ([[m.BeginTransactionRecord()], [m.BeginTransactionRecord()]], "inside an open metadata transaction"),
])
def test_malformed_transactions_are_refused(batches, reason):
    loader = MetadataLoader()
    loader.load_batch(0, [MV])
    with pytest.raises(MetadataReplayError, match=reason):
        for i, batch in enumerate(batches, 1):
            loader.load_batch(i, batch)


def test_batches_must_move_forward_and_a_snapshot_replaces_everything():
    loader = MetadataLoader()
    loader.load_batch(4, [MV, topic(1)])
    with pytest.raises(MetadataReplayError, match="not after"):
        loader.load_batch(4, [topic(2)])
    image = loader.load_snapshot(10, replay_all([MV, topic(7)]).records())
    assert image.offset == 9 and image.topic("t7") is not None and image.topic("t1") is None
    assert loader.load_batch(10, [topic(8)]).topic("t8") is not None
