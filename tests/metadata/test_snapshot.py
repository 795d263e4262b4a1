"""Metadata snapshots as Kafka writes them: the image as records between header and footer; what a reader refuses."""

from __future__ import annotations

import uuid

import pytest

from kraftwire.metadata.image import replay_all
from kraftwire.metadata.records import MetadataRecordError
from kraftwire.metadata.snapshot import (MAX_RECORDS_PER_BATCH, decode_snapshot, encode_snapshot,
                                         encode_snapshot_records, load_snapshot, metadata_batches)
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m
from kraftwire.records import read_batches
from kraftwire.records.control import SNAPSHOT_FOOTER, SNAPSHOT_HEADER


def _image(partitions: int = 3):
    tid = uuid.UUID(int=7)
    recs = [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level),
            m.RegisterBrokerRecord(broker_id=1, incarnation_id=uuid.UUID(int=1), broker_epoch=4, fenced=False),
            m.TopicRecord(name="orders", topic_id=tid)]
    recs += [m.PartitionRecord(partition_id=p, topic_id=tid, replicas=[1], isr=[1], leader=1)
             for p in range(partitions)]
    recs.append(m.ConfigRecord(resource_type=2, resource_name="orders", name="retention.ms", value="1000"))
    return replay_all(recs, offset=41)


def test_a_snapshot_holds_the_image_as_records_and_loads_back_to_it():
    image = _image()
    data = encode_snapshot(image, epoch=5, timestamp=1_700_000_000_000)
    contents = decode_snapshot(data)
    assert [c for c, _ in contents.control] == [SNAPSHOT_HEADER, SNAPSHOT_FOOTER]
    assert [r.message for r in contents.records] == [r.message for r in image.records()]
    assert load_snapshot(data, end_offset=42) == image
    batches = list(read_batches(data))
    assert batches[0].is_control and batches[-1].is_control and not batches[1].is_control
    assert all(b.partition_leader_epoch == 5 for b in batches)
    assert [b.base_offset for b in batches] == [0, 1, 1 + len(contents.records)]


def test_records_are_split_into_batches_of_at_most_ten_thousand():
    image = _image(partitions=MAX_RECORDS_PER_BATCH + 5)
    sizes = [len(list(b)) for b in read_batches(encode_snapshot(image, epoch=1, timestamp=0))]
    assert sizes[1] == MAX_RECORDS_PER_BATCH and sum(sizes[1:-1]) == len(image.records())


@pytest.mark.parametrize("mutate, reason", [
    (lambda d, items: d[:-5], "ends inside a batch"),
    (lambda d, items: d + b"".join(metadata_batches(items[:1], base_offset=99, epoch=1, timestamp=0)),
     "outside the snapshot header and footer"),
    (lambda d, items: b"".join(metadata_batches(items, base_offset=1, epoch=1, timestamp=0)),
     "outside the snapshot header and footer"),
    (lambda d, items: d[:-len(encode_snapshot_records([], epoch=1, timestamp=0)) // 2],
     "ends inside a batch"),
])
def test_a_damaged_snapshot_is_refused_with_the_reason(mutate, reason):
    image = _image()
    data = encode_snapshot(image, epoch=1, timestamp=0)
    with pytest.raises(MetadataRecordError, match=reason):
        decode_snapshot(mutate(data, image.records()))


def test_a_flipped_byte_is_a_corrupt_batch_not_a_different_image():
    data = bytearray(encode_snapshot(_image(), epoch=1, timestamp=0))
    data[len(data) // 2] ^= 0x40
    with pytest.raises(MetadataRecordError, match="corrupt batch"):
        decode_snapshot(bytes(data))


def test_a_snapshot_without_its_footer_is_refused():
    data = encode_snapshot(_image(), epoch=1, timestamp=0)
    last = list(read_batches(data))[-1]
    with pytest.raises(MetadataRecordError, match="no snapshot footer"):
        decode_snapshot(data[: len(data) - last.size_in_bytes])
