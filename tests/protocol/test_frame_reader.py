"""``FrameReader``: frames received straight into buffers (the server's and the client's BufferedProtocol), however
the stream is cut into reads; a frame too large for the scratch buffer is received into its own buffer in place."""

from __future__ import annotations

import random
import struct

import pytest

from kraftwire.errors import ProtocolError
from kraftwire.protocol.framing import FrameReader


def _stream(frames: list[bytes]) -> bytes:
    return b"".join(struct.pack(">i", len(f)) + f for f in frames)


@pytest.mark.parametrize("seed", range(200))
def test_frames_come_out_whole_whatever_the_reads(seed):
    rnd = random.Random(seed)
    sizes = [0, 1, 3, 100, 5000, 70_000, 200_000]
    frames = [rnd.randbytes(rnd.choice(sizes) if rnd.random() < 0.5 else rnd.randint(0, 300))
              for _ in range(rnd.randint(1, 8))]
    stream = _stream(frames)
    reader = FrameReader(scratch_bytes=rnd.choice([16, 1024, 65536]))
    got, pos = [], 0
    while pos < len(stream):
        buf = reader.get_buffer()
        assert len(buf) > 0
        n = min(len(buf), rnd.randint(1, 100_000), len(stream) - pos)
        buf[:n] = stream[pos:pos + n]
        pos += n
        got += reader.buffer_updated(n)
    assert [bytes(f) for f in got] == frames
    assert [bytes(f) for f in FrameReader().feed(stream)] == frames


def test_a_large_frame_is_received_in_its_own_buffer():
    frame = bytes(range(256)) * 1000
    reader = FrameReader(scratch_bytes=1024, max_scratch_bytes=1024)  # a scratch buffer that never grows
    stream = _stream([frame])
    first = reader.get_buffer()
    first[:1024] = stream[:1024]
    assert reader.buffer_updated(1024) == []
    rest = reader.get_buffer()
    assert len(rest) == len(frame) - 1020  # exactly what the frame still needs: the socket fills it in place
    rest[:] = stream[1024:]
    [got] = reader.buffer_updated(len(rest))
    assert got == frame and rest.obj is got


@pytest.mark.parametrize("prefix", [-1, 11])
def test_a_bad_size_prefix_is_refused_before_anything_is_allocated(prefix):
    with pytest.raises(ProtocolError):
        FrameReader(max_size=10).feed(struct.pack(">i", prefix))


def test_the_scratch_buffer_grows_for_a_stream_of_frames_it_can_hold_only():
    """A read that fills the scratch buffer grows it, unless the frame it ends in gets a buffer of its own anyway
    (larger than any scratch buffer): growing then would only allocate."""
    reader = FrameReader(scratch_bytes=1024, max_scratch_bytes=4096)
    large, small = bytes(10_000), [bytes(range(200)) * 3] * 10
    stream = _stream([large] + small)
    buf = reader.get_buffer()
    buf[:] = stream[:1024]
    assert reader.buffer_updated(1024) == []
    rest = reader.get_buffer()
    assert len(rest) == len(large) - 1020  # the large frame's own buffer; the scratch buffer did not grow
    rest[:] = stream[1024:1024 + len(rest)]
    assert reader.buffer_updated(len(rest)) == [large]
    pos = 1024 + len(rest)
    buf = reader.get_buffer()
    assert len(buf) == 1024
    buf[:] = stream[pos:pos + 1024]
    got = reader.buffer_updated(1024)
    assert len(reader.get_buffer()) == 4096 - (1024 - 604)  # filled by frames it can hold: grown to 4096
    pos += 1024
    while pos < len(stream):
        buf = reader.get_buffer()
        n = min(len(buf), len(stream) - pos)
        buf[:n] = stream[pos:pos + n]
        pos += n
        got += reader.buffer_updated(n)
    assert got == small
