"""The size limits of one Fetch answer (Kafka's ReplicaManager.readFromLog rule, KIP-74)."""

from __future__ import annotations

from kraftwire.replica.fetch_limits import FetchLimits


def _answer(limits: FetchLimits, partitions):
    """Run the rule over ``partitions``: (partition_max_bytes, sizes of its whole batches); what each carries."""
    out = []
    for partition_max, batches in partitions:
        limit = limits.limit(partition_max)
        taken = 0
        if limits.may_read(limit) and batches:
            read = batches[0]  # the log's read: the first batch whatever its size, then whole batches within limit
            for b in batches[1:]:
                if read + b > limit:
                    break
                read += b
            taken = read if limits.fits(read, limit) else 0
        limits.took(taken)
        out.append(taken)
    return out


def test_broker_respects_partitions_order_and_size_limits():
    """Mirrors Kafka's FetchRequestTest.testBrokerRespectsPartitionsOrderAndSizeLimits (response 800, partition
    190): partitions in order, each within its limit and what is left; a batch larger than the partition limit
    goes out whole only from the first partition with records; a later one that does not fit carries nothing."""
    small = [80] * 9
    limits = FetchLimits(800, 1, 55 << 20)
    assert _answer(limits, [(190, small)] * 4 + [(190, [191 + 61])]) == [160] * 4 + [0]
    # the partition with a batch over its limit first: it goes out whole; the one over the response limit next
    # does not fit what is left; the small ones share the rest
    assert _answer(FetchLimits(800, 1, 55 << 20), [(190, [252]), (190, [862])] + [(190, small)] * 4) == [
        252, 0, 160, 160, 160, 0]
    # the batch over the response limit first: only it goes out
    assert _answer(FetchLimits(800, 1, 55 << 20), [(190, [862]), (190, [252])] + [(190, small)] * 2) == [
        862, 0, 0, 0]


def test_progress_waits_for_the_first_partition_with_records():
    """An empty partition first leaves the next one's first batch free to exceed the limits (Kafka's
    minOneMessage stays on until a partition carried records); a spent budget reads nothing more."""
    limits = FetchLimits(100, 1, 55 << 20)
    assert _answer(limits, [(50, []), (50, [300, 10]), (50, [10])]) == [0, 300, 0]
    assert limits.remaining == 0 and not limits.may_read(limits.limit(50))


def test_fetch_max_bytes_caps_the_request():
    """Kafka's KafkaApis.handleFetchRequest: min(request max_bytes, fetch.max.bytes); min_bytes capped by it."""
    limits = FetchLimits(50 << 20, 1 << 30, 2048)
    assert limits.remaining == 2048 and limits.min_bytes == 2048
    assert _answer(limits, [(1 << 20, [1000] * 5), (1 << 20, [1000] * 5)]) == [2000, 0]
    assert FetchLimits(-1, 1, 2048).remaining == 0
