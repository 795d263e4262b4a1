"""``CommittedImage``: the broker state and broker registry kept between snapshots. Folding commits in as they come
must give exactly the state a full replay from the latest snapshot gives, read only what is new, and start again
from the snapshot's image once retention moved the log start past where it stopped."""

from __future__ import annotations

from kraftwire.ids import SnapshotId
from kraftwire.log.api import Isolation
from kraftwire.log.memory import MemoryLog
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.records.control import KRAFTWIRE_GROUP_OFFSET, control_batch
from kraftwire.server.test_server.scan import CommittedImage, base_image, replay
from kraftwire.server.test_server.state import LogState


class CountingLog(MemoryLog):
    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.read_bytes = 0

    def read(self, offset, max_bytes, isolation=Isolation.UNCOMMITTED):
        info = super().read(offset, max_bytes, isolation)
        self.read_bytes += len(info.records)
        return info


def _offset_commit(group: str, offset: int) -> bytes:
    msg = w.KraftwireGroupOffsetRecord(group_id=group, topic="t", partition=0, offset=offset, leader_epoch=1,
                                       metadata=None, commit_timestamp=0)
    return control_batch([(KRAFTWIRE_GROUP_OFFSET, msg)], epoch=1)


def _produce(pid: int, seq: int, n: int = 3) -> bytes:
    builder = RecordBatchBuilder(partition_leader_epoch=1, producer_id=pid, producer_epoch=0, base_sequence=seq)
    for i in range(n):
        builder.append(None, b"x" * 100, timestamp=0)
    return builder.build()


def _commit(lg, batch: bytes) -> int:
    lg.append_as_leader(batch, 1)
    lg.flush()
    lg.update_high_watermark(lg.end_offset())
    return lg.end_offset()


def _full(lg, position: int) -> list[bytes]:
    state = LogState()
    replay(lg, state, base_image(lg, state, position), position, Isolation.COMMITTED)
    return state.image()


def test_folding_each_commit_equals_a_full_replay_and_reads_only_what_is_new():
    lg = CountingLog()
    image = CommittedImage(LogState)
    for i in range(40):
        batch = _offset_commit(f"g{i % 3}", i) if i % 4 == 0 else _produce(1000 + i % 2, (i // 2) * 3)
        position = _commit(lg, batch)
        before = lg.read_bytes
        image.advance(lg, position)
        assert lg.read_bytes - before <= len(batch)  # only the new batch was read
    assert image.state.image() == _full(lg, lg.end_offset())
    assert image.state.offsets[("g0", "t", 0)][0] == 36


def test_starts_again_from_the_snapshot_image_when_the_log_start_passed_it():
    lg = CountingLog(retention_bytes=1)
    image = CommittedImage(LogState)
    position = 0
    for i in range(6):
        position = _commit(lg, _offset_commit("g", i))
    image.advance(lg, 2)  # it stopped early ...
    # ... a snapshot at the log end is taken (by another holder) and retention drops everything below it
    snapshot = SnapshotId(position, 1)
    writer = lg.create_new_snapshot(snapshot)
    from kraftwire.raft.snapshots import build_snapshot
    writer.append(build_snapshot(_full(lg, position), epoch=1, timestamp=0))
    writer.freeze()
    writer.close()
    lg.delete_before_snapshot(snapshot)
    assert lg.start_offset() > 2
    for i in range(6, 9):
        position = _commit(lg, _offset_commit("g", i))
    assert image.advance(lg, position).image() == _full(lg, position)
    assert image.state.offsets[("g", "t", 0)][0] == 8


def test_folding_the_listener_hubs_batches_reads_nothing_more_and_equals_a_full_replay():
    from kraftwire.raft.listener import BytesSerde, ListenerHub

    lg = CountingLog()
    image = CommittedImage(LogState)

    class Folder:
        def handle_commit(self, batches):
            image.fold(lg, batches)

        def handle_load_snapshot(self, reader):
            raise AssertionError("no snapshot here")

        def handle_leader_change(self, leader):
            pass

    hub = ListenerHub(lg, BytesSerde(), max_bytes=1 << 20)
    hub.register(Folder(), None)
    _commit(lg, _produce(7, 0))
    hub.deliver()  # the first call catches up through advance()
    for i in range(1, 30):
        batch = _offset_commit(f"g{i % 3}", i) if i % 4 == 0 else _produce(1000 + i % 2, (i // 2) * 3)
        _commit(lg, batch)
        before = lg.read_bytes
        hub.deliver()
        assert lg.read_bytes - before == len(batch)  # the hub's one read of the new batch, nothing more
    assert image.state.image() == _full(lg, lg.end_offset())
    assert image.offset == lg.end_offset()
