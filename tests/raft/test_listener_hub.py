"""The listener hub: every listener gets every committed batch once, in order, from one read per position; records
are decoded only for a listener that asks for them."""

from __future__ import annotations

from kraftwire.log.memory import MemoryLog
from kraftwire.raft.listener import BytesSerde, ListenerHub
from kraftwire.records import RecordBatchBuilder


def _batch(*values):
    b = RecordBatchBuilder()
    for v in values:
        b.append(None, v, timestamp=0)
    return b.build()


class CountingLog:
    def __init__(self, log):
        self.inner = log
        self.reads = 0

    def read(self, *args, **kwargs):
        self.reads += 1
        return self.inner.read(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)


class CountingSerde(BytesSerde):
    def __init__(self):
        self.decoded = 0

    def deserialize(self, data):
        self.decoded += 1
        return super().deserialize(data)


class Collector:
    def __init__(self, decode):
        self.decode = decode
        self.offsets = []
        self.values = []

    def handle_commit(self, batches):
        for b in batches:
            self.offsets.append((b.base_offset, b.last_offset, b.record_count))
            if self.decode:
                self.values.extend(b.records)

    def handle_load_snapshot(self, reader):
        raise AssertionError("no snapshot here")

    def handle_leader_change(self, leader):
        pass


def _log(*batches):
    log = MemoryLog()
    for values in batches:
        log.append_as_leader(_batch(*values), 1)
    log.flush()
    return log


def test_one_read_serves_every_listener_at_the_same_position_and_only_readers_decode():
    log = CountingLog(_log([b"a", b"b"], [b"c"]))
    serde = CountingSerde()
    hub = ListenerHub(log, serde, max_bytes=1 << 20)
    counting, decoding = Collector(decode=False), Collector(decode=True)
    hub.register(counting, None)
    hub.register(decoding, None)
    log.update_high_watermark(3)
    hub.deliver()
    assert counting.offsets == decoding.offsets == [(0, 1, 2), (2, 2, 1)]
    assert decoding.values == [b"a", b"b", b"c"]
    assert log.reads == 1
    assert serde.decoded == 3  # once per record, for the one listener that asked
    hub.deliver()  # nothing new: nothing read, nothing delivered twice
    assert log.reads == 1 and len(counting.offsets) == 2


def test_a_listener_registered_late_catches_up_without_repeats_for_the_others():
    inner = _log([b"a"], [b"b", b"c"])
    inner.update_high_watermark(3)
    hub = ListenerHub(inner, BytesSerde(), max_bytes=1 << 20)
    early = Collector(decode=True)
    hub.register(early, None)
    hub.deliver()
    inner.append_as_leader(_batch(b"d"), 1)
    inner.flush()
    inner.update_high_watermark(4)
    late = Collector(decode=True)
    hub.register(late, None)
    hub.deliver()
    assert early.values == late.values == [b"a", b"b", b"c", b"d"]
    assert early.offsets == late.offsets


def test_the_high_watermark_bounds_delivery():
    log = _log([b"a"], [b"b"])
    log.update_high_watermark(1)
    hub = ListenerHub(log, BytesSerde(), max_bytes=1 << 20)
    c = Collector(decode=True)
    hub.register(c, None)
    hub.deliver()
    assert c.values == [b"a"]


def test_serializing_an_append_uses_serialize_all_when_the_serde_has_it():
    from kraftwire.raft.listener import serializer_of

    class Upper:
        def serialize(self, record):
            return record.upper().encode()

        def deserialize(self, data):
            return data.decode()

    assert serializer_of(Upper())(["a", "b"]) == [b"A", b"B"]
    values = [b"x", bytearray(b"y"), memoryview(b"z")]
    out = serializer_of(BytesSerde())(values)
    assert out == [b"x", b"y", b"z"] and all(type(v) is bytes for v in out)
    assert out[0] is values[0]  # bytes pass through without a copy
