"""Shared workloads for the protocol benchmarks: kraftwire's schema-compiled codec vs kafka-python 3.x.

Each case returns ``{implementation: zero-argument callable}`` doing the same work:

* decode a Produce request frame (header + body) carrying 1 MB of records;
* encode a Fetch response (header + body, framed) carrying 1 MB of records — kraftwire both as a chunk
  list (what the server hands to ``transport.writelines``: the records are not copied) and joined to
  one ``bytes`` (like-for-like with kafka-python, which returns one buffer);
* a small Fetch request decode and Metadata response encode (per-request overhead);
* an OffsetCommit v8 request whose strings are all longer than 127 bytes, so every one is read by the checked
  compact-string reader (its length against the 32,767-byte limit and the remaining bytes), not the inline fast path.
"""

from __future__ import annotations

import random
import uuid

from kafka.protocol.consumer import FetchRequest as KFetchRequest
from kafka.protocol.consumer import FetchResponse as KFetchResponse
from kafka.protocol.consumer import OffsetCommitRequest as KOffsetCommitRequest
from kafka.protocol.metadata import MetadataResponse as KMetadataResponse
from kafka.protocol.producer import ProduceRequest as KProduceRequest

from kraftwire.ids import METADATA_TOPIC_ID
from kraftwire.protocol import codec, framing, messages as m
from kraftwire.records import RecordBatchBuilder

TOPIC = "__cluster_metadata"


def one_mb_of_records() -> bytes:
    rng = random.Random(7)
    b = RecordBatchBuilder(base_offset=0, partition_leader_epoch=1)
    for i in range(1000):
        b.append(b"k%05d" % i, rng.randbytes(1000), timestamp=1_700_000_000_000 + i)
    return b.build()


RECORDS = one_mb_of_records()


def produce_frame(version: int) -> bytes:
    P = m.ProduceRequest
    body = P(acks=-1, timeout_ms=30000, topic_data=[P.TopicProduceData(name=TOPIC, partition_data=[
        P.PartitionProduceData(index=0, records=RECORDS)])])
    return b"".join(framing.encode_request(body, version, 1, "bench"))[4:]


def fetch_response(version: int):
    F = m.FetchResponse
    return F(responses=[F.FetchableTopicResponse(topic=TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[
        F.PartitionData(partition_index=0, high_watermark=1000, last_stable_offset=1000, log_start_offset=0,
                        records=RECORDS)])])


def k_fetch_response(version: int):
    R = KFetchResponse
    PD = R.fields["responses"].fields["partitions"].data_class
    T = R.fields["responses"].data_class
    kw = {"topic": TOPIC} if version <= 12 else {"topic_id": METADATA_TOPIC_ID}
    resp = R(version=version, throttle_time_ms=0, error_code=0, session_id=0, responses=[T(version=version, **kw, partitions=[
        PD(version=version, partition_index=0, error_code=0, high_watermark=1000, last_stable_offset=1000,
           log_start_offset=0, aborted_transactions=[], preferred_read_replica=-1, records=RECORDS)])])
    resp.with_header(correlation_id=1)
    return resp


def fetch_request_frame(version: int) -> bytes:
    F = m.FetchRequest
    body = F(replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=8 << 20, topics=[
        F.FetchTopic(topic=TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[
            F.FetchPartition(partition=0, current_leader_epoch=3, fetch_offset=1234, last_fetched_epoch=3,
                             partition_max_bytes=1 << 20)])])
    return b"".join(framing.encode_request(body, version, 1, "bench"))[4:]


def metadata_response():
    R = m.MetadataResponse
    return R(brokers=[R.MetadataResponseBroker(node_id=i, host=f"broker-{i}", port=9092) for i in range(3)],
             cluster_id="c", controller_id=0, topics=[R.MetadataResponseTopic(
                 name=f"topic-{t}", topic_id=uuid.UUID(int=t + 10), partitions=[R.MetadataResponsePartition(
                     partition_index=p, leader_id=p % 3, leader_epoch=1, replica_nodes=[0, 1, 2], isr_nodes=[0, 1, 2])
                     for p in range(8)]) for t in range(10)])


def case_produce_decode(version: int = 9) -> dict:
    frame = produce_frame(version)
    return {
        "kraftwire": lambda: framing.decode_request(frame),
        "kafka-python": lambda: KProduceRequest.decode(frame, version=version, header=True),
    }


def case_fetch_encode(version: int = 12) -> dict:
    ours = fetch_response(version)
    theirs = k_fetch_response(version)
    return {
        "kraftwire (chunks)": lambda: framing.encode_response(ours, version, 1),
        "kraftwire (bytes)": lambda: b"".join(framing.encode_response(ours, version, 1)),
        "kafka-python": lambda: theirs.encode(header=True, framed=True),
    }


def case_fetch_request_decode(version: int = 12) -> dict:
    frame = fetch_request_frame(version)
    return {
        "kraftwire": lambda: framing.decode_request(frame),
        "kafka-python": lambda: KFetchRequest.decode(frame, version=version, header=True),
    }


def offset_commit_frame(version: int) -> bytes:
    """An OffsetCommit with a 200-byte group and member id, 4 topics of 150-byte names, 8 partitions each carrying
    300 bytes of metadata: 38 compact strings, none short enough for the one-byte length fast path."""
    O = m.OffsetCommitRequest
    body = O(group_id="g" * 200, generation_id_or_member_epoch=5, member_id="m" * 200, group_instance_id=None,
             retention_time_ms=-1, topics=[O.OffsetCommitRequestTopic(name=f"{t}" + "t" * 149, partitions=[
                 O.OffsetCommitRequestPartition(partition_index=p, committed_offset=1000 + p, committed_leader_epoch=3,
                                                committed_metadata="x" * 300) for p in range(8)]) for t in range(4)])
    return b"".join(framing.encode_request(body, version, 1, "bench"))[4:]


def case_offset_commit_decode(version: int = 8) -> dict:
    frame = offset_commit_frame(version)
    return {
        "kraftwire": lambda: framing.decode_request(frame),
        "kafka-python": lambda: KOffsetCommitRequest.decode(frame, version=version, header=True),
    }


def case_metadata_encode(version: int = 12) -> dict:
    ours = metadata_response()
    theirs = KMetadataResponse.decode(codec.encode(ours, version), version=version)
    theirs.with_header(correlation_id=1)
    return {
        "kraftwire": lambda: b"".join(framing.encode_response(ours, version, 1)),
        "kafka-python": lambda: theirs.encode(header=True, framed=True),
    }


CASES = {
    "decode Produce v9 request, 1 MB records": case_produce_decode,
    "encode Fetch v12 response, 1 MB records": case_fetch_encode,
    "decode Fetch v12 request (1 partition)": case_fetch_request_decode,
    "encode Metadata v12 response (10x8 partitions)": case_metadata_encode,
    "decode OffsetCommit v8 request (38 long strings)": case_offset_commit_decode,
}
