"""What a leader whose high watermark lags its epoch start may answer to ListOffsets (Kafka's
``Partition.fetchOffsetForTimestamp``)."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.replica import list_offsets as o

FOLLOWER, CONSUMER, DEBUGGING = 2, -1, -2


def test_monotonic_offsets_after_leader_change():
    """Mirrors Kafka's PartitionTest.testMonotonicOffsetsAfterLeaderChange: a leader whose epoch starts at 5 with
    its high watermark at 2 refuses a client's latest and a lookup past the high watermark, and answers a follower,
    earliest, and a lookup below the high watermark."""
    start, hw, end = 5, 2, 5

    def error(ts, replica=CONSUMER, found=-1, version=5):
        fetchable = o.last_fetchable_offset(replica, 0, hw, lambda: hw, end)
        return o.lagging_error(ts, replica, version, start, hw, found, fetchable)

    assert error(o.LATEST) == ec.OFFSET_NOT_AVAILABLE
    # a request not from a client skips the check (a follower recovering from OFFSET_OUT_OF_RANGE)
    assert error(o.LATEST, FOLLOWER) == ec.NONE and error(o.LATEST, DEBUGGING) == ec.NONE
    assert o.last_fetchable_offset(FOLLOWER, 0, hw, lambda: hw, end) == end
    assert error(o.EARLIEST) == ec.NONE and error(o.EARLIEST_LOCAL) == ec.NONE
    assert error(11, found=1) == ec.NONE  # found below the high watermark
    assert error(100, found=-1) == ec.OFFSET_NOT_AVAILABLE  # nothing found below it
    assert error(100, found=3) == ec.OFFSET_NOT_AVAILABLE  # found past it
    assert error(100, FOLLOWER, found=3) == ec.NONE
    # the error goes once the high watermark reaches the epoch start
    assert o.lagging_error(o.LATEST, CONSUMER, 5, start, 5) == ec.NONE


def test_older_versions_get_leader_not_available():
    """Kafka's ReplicaManager.fetchOffset: OFFSET_NOT_AVAILABLE only for ListOffsets v5+."""
    assert o.lagging_error(o.LATEST, CONSUMER, 4, 5, 2) == ec.LEADER_NOT_AVAILABLE
    assert o.lagging_error(o.LATEST, CONSUMER, 5, 5, 2) == ec.OFFSET_NOT_AVAILABLE


def test_list_offset_isolation_levels():
    """Mirrors Kafka's PartitionTest.testListOffsetIsolationLevels: latest is the log end for a replica, the high
    watermark for READ_UNCOMMITTED and the last stable offset for READ_COMMITTED."""
    assert o.last_fetchable_offset(FOLLOWER, 1, 8, lambda: 6, 10) == 10
    assert o.last_fetchable_offset(CONSUMER, 0, 8, lambda: 6, 10) == 8
    assert o.last_fetchable_offset(CONSUMER, 1, 8, lambda: 6, 10) == 6


def test_malformed_requests():
    """As Kafka 4.4 answered them (tests/conformance, ListOffsets scenarios): a partition named twice is answered once
    with INVALID_REQUEST (KafkaApis' duplicatePartitions), an isolation level outside 0/1 fails every partition."""
    from kraftwire.protocol import messages as w

    LO = w.ListOffsetsRequest
    topics = [LO.ListOffsetsTopic(name="a", partitions=[LO.ListOffsetsPartition(partition_index=i) for i in (0, 1, 0)]),
              LO.ListOffsetsTopic(name="b", partitions=[LO.ListOffsetsPartition(partition_index=0)])]
    assert o.duplicate_partitions(topics) == {("a", 0)}
    assert o.known_isolation(0) and o.known_isolation(1) and not o.known_isolation(2) and not o.known_isolation(-1)
def test_earliest_pending_upload_is_v11s_and_finds_nothing_without_a_remote_log():
    """KIP-1023's -6 (ListOffsets v11): Kafka 4.4 without tiered storage answers offset -1 at v11 and refuses it as
    UNSUPPORTED_VERSION at v10; it never waits for a lagging high watermark."""
    assert o.timestamp_supported(o.EARLIEST_PENDING_UPLOAD, 11)
    assert not o.timestamp_supported(o.EARLIEST_PENDING_UPLOAD, 10)
    assert all(o.timestamp_supported(ts, 1) for ts in (o.LATEST, o.EARLIEST, o.MAX_TIMESTAMP, 0))
    assert o.EARLIEST_PENDING_UPLOAD in o.NOTHING_TIERED and o.LATEST_TIERED in o.NOTHING_TIERED
    assert o.lagging_error(o.EARLIEST_PENDING_UPLOAD, -1, 11, epoch_start_offset=10, high_watermark=5) == ec.NONE


def test_the_answer_in_kafkas_order():
    """As Kafka 4.4 answered the conformance scenarios (ReplicaManager.fetchOffset: a Scala mutable map of the
    partitions grouped by topic into an immutable one; the models are checked against the JVM by
    tests/test_java_order_jvm.py): partitions 0, 1 came back 1, 0 and -1, 7 as -1, 7 for these topics."""
    def order(topics, refused=()):
        return o.in_kafka_order(topics, lambda name: name in refused)

    assert order([("ListOffsets-v2-earliest-and-latest.a", [0, 1])]) == [("ListOffsets-v2-earliest-and-latest.a",
                                                                         [1, 0])]
    assert order([("ListOffsets-v2-unknown-partition.a", [7, -1])]) == [("ListOffsets-v2-unknown-partition.a",
                                                                        [-1, 7])]
    # a topic named twice is answered once; the refused topics come last, as named
    assert order([("z", [0]), ("no", [1]), ("abc", [0]), ("z", [1])], refused={"no"}) == [
        ("abc", [0]), ("z", [1, 0]), ("no", [1])]
