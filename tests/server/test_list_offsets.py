"""ListOffsets on a leader: what it answers before and after its first commit in its epoch."""

from __future__ import annotations

from types import SimpleNamespace

from kraftwire.log.memory import MemoryLog
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.broker.fetch import ListOffsets

BASE_TS = 1_700_000_000_000


def _data_batch(base: int, stamps) -> bytes:
    b = RecordBatchBuilder(base_offset=base, partition_leader_epoch=1)
    for ts in stamps:
        b.append(None, b"v", timestamp=ts)
    return b.build()


def test_a_new_leader_answers_offset_not_available_until_it_commits_in_its_epoch():
    """As Kafka: until a new leader's high watermark reaches its epoch start, ListOffsets latest / by timestamp
    answer OFFSET_NOT_AVAILABLE (clients retry); earliest is answered."""
    from kraftwire.protocol import messages as w
    from kraftwire.server.broker import context as c

    lg = MemoryLog()
    lg.append_as_leader(_data_batch(0, [BASE_TS, BASE_TS + 1]), 1)
    lg.flush()
    lg.update_high_watermark(1)  # as a follower it knew offset 0 committed; the old leader had committed 0..1
    answers = []
    ctx = SimpleNamespace(log=lg, topic_name="t", is_leader=lambda: True, epoch=lambda: 2,
                          epoch_start_offset=lambda: 2)
    conn = SimpleNamespace(send_response=lambda body, version, cid: answers.append(body))
    R = w.ListOffsetsRequest

    def ask(ts):
        req = R(replica_id=-1, topics=[R.ListOffsetsTopic(name="t", partitions=[
            R.ListOffsetsPartition(partition_index=0, timestamp=ts)])])
        ListOffsets(ctx).handle(SimpleNamespace(body=req, version=4, header=SimpleNamespace(correlation_id=1)), conn)
        return answers[-1].topics[0].partitions[0]

    assert ask(-1).error_code == c.OFFSET_NOT_AVAILABLE
    assert ask(BASE_TS).error_code == c.OFFSET_NOT_AVAILABLE
    earliest = ask(-2)
    assert earliest.error_code == c.NONE and earliest.offset == 0
    assert earliest.leader_epoch == 1  # as Kafka: the epoch of the log start's batch, not the leader's current one
    lg.update_high_watermark(2)  # the leader committed its epoch's first record
    latest = ask(-1)
    assert latest.error_code == c.NONE and latest.offset == 2 and latest.leader_epoch == 2
    newest = ask(-3)  # max timestamp: the record and its batch's epoch
    assert (newest.offset, newest.timestamp, newest.leader_epoch) == (1, BASE_TS + 1, 1)
