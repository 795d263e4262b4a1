"""Record batches for the log tests, and ``LogHarness``: one log implementation opened, reopened and crashed in a
temp dir."""

from __future__ import annotations


from kraftwire.records import RecordBatchBuilder


def make_batch(count: int = 1, *, value_size: int = 10, base_offset: int = 0, epoch: int = -1,
               control: bool = False, timestamp: int = 1_700_000_000_000, tag: int = 0) -> bytes:
    b = RecordBatchBuilder(base_offset=base_offset, partition_leader_epoch=epoch, is_control=control)
    for i in range(count):
        value = bytes([(tag + i) % 256]) * value_size
        b.append(b"k%d" % i, value, timestamp=timestamp + i)
    return b.build()


class LogHarness:
    """Opens, reopens and crashes one log implementation in a temp dir."""

    def __init__(self, kind: str, tmp_path) -> None:
        self.kind = kind
        self.dir = str(tmp_path / "__cluster_metadata-0")
        self.log = None

    def open(self, **kwargs):
        if self.kind == "memory":
            from kraftwire.log.memory import MemoryLog

            if self.log is None:
                self.log = MemoryLog(**kwargs)
            return self.log
        from kraftwire.log.segmented import SegmentedLog

        if self.kind == "segmented-tiny":  # roll every few batches, index every batch: multi-segment everywhere
            kwargs = {"segment_bytes": 300, "index_interval_bytes": 50, **kwargs}
        self.log = SegmentedLog(self.dir, **kwargs)
        return self.log

    def reopen_clean(self, **kwargs):
        if self.kind == "memory":
            return self.log  # a clean shutdown of a memory log keeps everything
        self.log.close()
        return self.open(**kwargs)

    def crash(self, **kwargs):
        """Hard kill + power loss: everything after the flushed offset is gone."""
        if self.kind == "memory":
            self.log.crash()
            return self.log
        self.log._simulate_power_loss()
        return self.open(**kwargs)
