"""A topic partition's log rules (``kraftwire.log.partition_rules``), on the file log and its in-memory twin alike:
epoch lookups, truncation below the high watermark, restarting, DeleteRecords' log start, retention's segment
deletion, and a follower sent a batch that starts below its log end."""

from __future__ import annotations

import uuid

import pytest

from kraftwire.errors import LogError
from kraftwire.log.memory import MemoryPartitionLog
from kraftwire.log.partition_log import LogDirCheckpoints, PartitionLog
from kraftwire.records import RecordBatchBuilder

TOPIC_ID = uuid.UUID(int=7)


def _batch(n: int, *, base: int = 0, epoch: int = -1, ts: int = 1_000) -> bytes:
    b = RecordBatchBuilder(base_offset=base, partition_leader_epoch=epoch)
    for i in range(n):
        b.append(None, b"v" * 200, timestamp=ts + i)
    return b.build()


@pytest.fixture(params=["file", "memory"])
def make(request, tmp_path):
    def build(**options):
        if request.param == "memory":
            return MemoryPartitionLog(TOPIC_ID)
        root = tmp_path / "root"
        root.mkdir(exist_ok=True)
        return PartitionLog(str(root / f"{options.get('topic', 't')}-0"), LogDirCheckpoints(str(root)),
                            topic_id=TOPIC_ID,
                            segment_bytes=options.get("segment_bytes", 1 << 30),
                            high_watermark_checkpoint_interval_ms=0, retention_bytes=-1, retention_ms=-1)
    build.kind = request.param
    return build


def _leader_log(make, batches: int, per_batch: int = 2, epoch: int = 0, **options):
    lg = make(**options)
    lg.initialize_leader_epoch(epoch)
    for i in range(batches):
        lg.append_as_leader(_batch(per_batch, ts=1_000 + 10 * i), epoch)
    lg.update_high_watermark(lg.end_offset())
    return lg


def test_epochs_a_follower_sends_and_the_leader_answers(make):
    lg = make()
    assert lg.latest_epoch() == -1  # unlike the Raft log's last fetched epoch (0)
    lg.initialize_leader_epoch(3)  # led epoch 3 without appending: the epoch is known all the same
    assert lg.latest_epoch() == 3 and lg.end_offset() == 0
    lg.append_as_leader(_batch(2), 3)
    lg.initialize_leader_epoch(5)
    lg.append_as_leader(_batch(1), 5)
    assert lg.leader_epoch_end(3) == (3, 2)
    assert lg.leader_epoch_end(4) == (3, 2)  # the largest epoch below, ending where the next starts
    assert lg.leader_epoch_end(5) == (5, 3)  # the latest: the log end
    assert lg.leader_epoch_end(9) == (-1, -1)
    assert lg.leader_epoch_end(1) == (1, 0)  # below every epoch: the first start


def test_truncation_below_the_high_watermark_brings_it_down_and_restart_empties(make):
    lg = _leader_log(make, 3)
    assert lg.high_watermark() == 6
    lg.truncate_to(2)  # the leader after an unclean election holds the truth
    assert (lg.end_offset(), lg.high_watermark()) == (2, 2)
    lg.restart_at(40)
    assert (lg.start_offset(), lg.end_offset(), lg.high_watermark(), lg.latest_epoch()) == (40, 40, 40, -1)
    lg.append_as_follower(_batch(2, base=40, epoch=7), 7)
    assert lg.end_offset() == 42


def test_delete_records_moves_the_log_start_never_back_never_past_the_high_watermark(make):
    lg = _leader_log(make, 4)  # offsets 0..7
    lg.update_high_watermark(6)
    with pytest.raises(LogError, match="high watermark"):
        lg.increment_log_start(7)
    assert lg.increment_log_start(3)  # inside the batch 2..3
    assert lg.start_offset() == 3 and not lg.increment_log_start(2)
    assert lg.read(3, 1 << 20).records  # the batch holding the new start is still read whole
    assert lg.epoch_entries()[0].start_offset == 3


def test_retention_deletes_oldest_segments_and_rolls_before_deleting_them_all(make):
    lg = _leader_log(make, 6, segment_bytes=1024)  # about 520-byte batches: two per segment on files
    infos = lg.segment_infos()
    # a file segment holds two batches (largest timestamp 1011); in memory a batch is a segment
    assert infos[0].base_offset == 0 and infos[0].largest_timestamp == (1_011 if make.kind == "file" else 1_001)
    assert sum(i.size for i in infos) == lg.size_in_bytes()
    second = infos[1].base_offset
    assert lg.delete_oldest_segments(1) == second and lg.start_offset() == second
    end = lg.end_offset()
    assert lg.delete_oldest_segments(len(lg.segment_infos())) == end  # all of them: the log end stays
    assert (lg.start_offset(), lg.end_offset()) == (end, end)
    lg.append_as_leader(_batch(1), 0)
    assert lg.end_offset() == end + 1


def test_a_follower_sent_a_batch_around_its_log_end_restarts_or_truncates_to_its_base(make):
    # its empty log restarted at the leader's log start, which DeleteRecords put inside the batch 4..5
    lg = make()
    lg.restart_at(5)
    lg.append_as_follower(_batch(2, base=4, epoch=2), 2)
    assert (lg.start_offset(), lg.end_offset()) == (4, 6)
    # a batch of its own (3..4) reaching past the leader's log start (5), whose batch there is 4..5
    lg = make(topic="u")
    lg.initialize_leader_epoch(0)
    lg.append_as_leader(_batch(3), 0)
    lg.append_as_leader(_batch(2), 0)  # 3..4
    lg.append_as_follower(_batch(2, base=4, epoch=3), 3)
    assert (lg.start_offset(), lg.end_offset()) == (4, 6)  # not a batch boundary of its own: restarted at 4
    # at a batch boundary of its own it truncates and keeps what is below
    lg = make(topic="w")
    lg.initialize_leader_epoch(0)
    lg.append_as_leader(_batch(3), 0)  # 0..2
    lg.append_as_leader(_batch(2), 0)  # 3..4
    lg.append_as_follower(_batch(3, base=3, epoch=4), 4)  # the leader's 3..5
    assert (lg.start_offset(), lg.end_offset()) == (0, 6)
    assert lg.leader_epoch_end(0) == (0, 3)


def test_the_log_start_survives_reopening(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    checkpoints = LogDirCheckpoints(str(root))
    lg = PartitionLog(str(root / "t-0"), checkpoints, topic_id=TOPIC_ID, high_watermark_checkpoint_interval_ms=0,
                      retention_bytes=-1, retention_ms=-1)
    lg.initialize_leader_epoch(0)
    lg.append_as_leader(_batch(4), 0)
    lg.update_high_watermark(4)
    lg.increment_log_start(3)
    lg.close()
    checkpoints.write()
    again = PartitionLog(str(root / "t-0"), LogDirCheckpoints(str(root)), topic_id=TOPIC_ID,
                         high_watermark_checkpoint_interval_ms=0, retention_bytes=-1, retention_ms=-1)
    assert (again.start_offset(), again.end_offset()) == (3, 4)
