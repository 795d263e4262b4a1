"""Metadata record values as Kafka's serde writes them: hand-written hex goldens from the specs, a round trip of
every record at every version, and every malformed value refused with its reason."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from kraftwire.metadata import records
from kraftwire.metadata.records import MetadataRecordError
from kraftwire.protocol import messages as m

from harness.messages import message_strategy

T = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")
U = uuid.UUID("f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff")
D = uuid.UUID("11111111-2222-3333-4444-555555555555")


def h(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts))


def s(text: str) -> str:
    """A compact string: unsigned varint length + 1, then the UTF-8 bytes (short strings only)."""
    raw = text.encode()
    assert len(raw) < 127
    return f"{len(raw) + 1:02x}" + raw.hex()


GOLDENS = [
    ("TopicRecord", m.TopicRecord(name="foo", topic_id=T), 0,
     h("01", "02", "00",  # frame version 1, api key 2, version 0
       s("foo"), T.hex, "00")),  # name, topic id, no tagged fields
    ("ConfigRecord", m.ConfigRecord(resource_type=2, resource_name="foo", name="cleanup.policy", value="compact"), 0,
     h("01", "04", "00", "02", s("foo"), s("cleanup.policy"), s("compact"), "00")),
    ("ConfigRecord deleting", m.ConfigRecord(resource_type=4, resource_name="1", name="log.retention.ms", value=None), 0,
     h("01", "04", "00", "04", s("1"), s("log.retention.ms"), "00", "00")),  # null value: length 0
    ("FeatureLevelRecord", m.FeatureLevelRecord(name="metadata.version", feature_level=25), 0,
     h("01", "0c", "00", s("metadata.version"), "0019", "00")),
    ("BeginTransactionRecord", m.BeginTransactionRecord(name="Bootstrap records"), 0,
     h("01", "17", "00",
       "01", "00", "12", s("Bootstrap records"))),  # one tagged field: tag 0, 18 bytes, the compact string
    ("BeginTransactionRecord unnamed", m.BeginTransactionRecord(), 0, h("01", "17", "00", "00")),
    ("PartitionChangeRecord", m.PartitionChangeRecord(partition_id=0, topic_id=T, isr=[1, 2], leader=1), 0,
     h("01", "05", "00", "00000000", T.hex,
       "02",  # two tagged fields, ascending tags
       "00", "09", "03", "00000001", "00000002",  # tag 0 Isr: 9 bytes, a compact array of two int32
       "01", "04", "00000001")),  # tag 1 Leader: 4 bytes
    ("PartitionRecord", m.PartitionRecord(partition_id=3, topic_id=T, replicas=[1, 2, 3], isr=[1, 2, 3],
                                          removing_replicas=[], adding_replicas=[], leader=1, leader_epoch=0,
                                          partition_epoch=0), 0,
     h("01", "03", "00", "00000003", T.hex,
       "04", "00000001", "00000002", "00000003",  # replicas
       "04", "00000001", "00000002", "00000003",  # isr
       "01", "01",  # removing, adding: empty
       "00000001", "00000000", "00000000",  # leader, leader epoch, partition epoch
       "00")),
    ("RegisterBrokerRecord", m.RegisterBrokerRecord(
        broker_id=1, incarnation_id=U, broker_epoch=10,
        end_points=[m.RegisterBrokerRecord.BrokerEndpoint(name="PLAINTEXT", host="localhost", port=9092,
                                                          security_protocol=0)],
        features=[m.RegisterBrokerRecord.BrokerFeature(name="metadata.version", min_supported_version=7,
                                                       max_supported_version=25)],
        rack=None, fenced=True, in_controlled_shutdown=False, log_dirs=[D]), 3,
     h("01", "00", "03",
       "00000001",  # BrokerId
       "00",  # IsMigratingZkBroker (v2+)
       U.hex, "000000000000000a",  # IncarnationId, BrokerEpoch
       "02", s("PLAINTEXT"), s("localhost"), "2384", "0000", "00",  # one endpoint (port 9092, PLAINTEXT = 0)
       "02", s("metadata.version"), "0007", "0019", "00",  # one feature
       "00",  # Rack: null
       "01", "00",  # Fenced, InControlledShutdown (v1+)
       "01", "00", "11", "02", D.hex)),  # tagged LogDirs (v3+): tag 0, 17 bytes, an array of one uuid
]


@pytest.mark.parametrize("name, record, version, wire", GOLDENS, ids=[g[0] for g in GOLDENS])
def test_golden(name, record, version, wire):
    assert records.encode(record, version) == wire
    decoded = records.decode(wire)
    assert decoded == (record, version)


def test_every_record_type_is_known_by_its_api_key():
    assert records.RECORD_TYPES[0] is m.RegisterBrokerRecord
    assert records.RECORD_TYPES[2] is m.TopicRecord and records.RECORD_TYPES[12] is m.FeatureLevelRecord
    assert records.RECORD_TYPES[27] is m.RegisterControllerRecord
    # Kafka 4.4.0's: ClearElrRecord (KIP-966) and UnregisterControllerRecord are the newest
    assert records.RECORD_TYPES[28] is m.ClearElrRecord and records.RECORD_TYPES[29] is m.UnregisterControllerRecord
    assert len(records.RECORD_TYPES) == 27


def _all_versions():
    for cls in sorted(records.RECORD_TYPES.values(), key=lambda c: c.API_KEY):
        lo, hi = cls.VALID_VERSIONS
        for v in range(lo, hi + 1):
            yield cls.NAME, v


@pytest.mark.parametrize("name, version", list(_all_versions()))
@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_every_record_round_trips_at_every_version(name, version, data):
    record = data.draw(message_strategy(records.RECORDS_BY_NAME[name], version))
    wire = records.encode(record, version)
    again = records.decode(wire)
    assert again.version == version
    assert records.encode(again.message, version) == wire


TOPIC = GOLDENS[0][3]


@pytest.mark.parametrize("wire, reason", [
    (b"", "frame version"),
    (h("00") + TOPIC[1:], "frame version 0"),
    (h("02") + TOPIC[1:], "frame version 2"),
    (h("01", "63", "00"), "unknown metadata record type 99"),
    (h("01", "02", "01") + TOPIC[3:], "TopicRecord version 1 is not supported"),
    (TOPIC + b"\x00", "1 trailing bytes"),
    (TOPIC[:-3], "malformed"),
    (h("01", "80"), "record type"),
])
def test_malformed_values_are_refused_with_the_reason(wire, reason):
    with pytest.raises(MetadataRecordError, match=reason):
        records.decode(wire)


def test_encoding_refuses_what_kafka_would_not_write():
    with pytest.raises(MetadataRecordError, match="versions 0-0"):
        records.encode(m.TopicRecord(name="x", topic_id=T), 1)
    with pytest.raises(MetadataRecordError, match="not a metadata record"):
        records.encode(m.ApiVersionsRequest(), 0)
