"""The compression layer: Java-compatible framing on encode, lenient-but-bounded decode."""

from __future__ import annotations

import gzip
import os
import random

import cramjam
import pytest

from kraftwire.errors import CorruptRecordError
from kraftwire.records import api
from kraftwire.records import compression as comp

DATA = b"".join(b"record %d " % i + os.urandom(8) for i in range(5000))  # ~90 KB, several xerial/lz4 blocks


@pytest.mark.parametrize("codec_id", range(len(api.COMPRESSION_NAMES)))
def test_round_trip(codec_id):
    assert comp.decompress(codec_id, comp.compress(codec_id, DATA), len(DATA), 61) == DATA


def test_snappy_uses_xerial_framing_and_reads_raw_too():
    enc = comp.compress(api.COMPRESSION_SNAPPY, DATA)
    assert enc[:16] == b"\x82SNAPPY\x00" + (1).to_bytes(4, "big") + (1).to_bytes(4, "big")
    first_block_len = int.from_bytes(enc[16:20], "big")
    assert bytes(cramjam.snappy.decompress_raw(enc[20 : 20 + first_block_len])) == DATA[: comp.XERIAL_BLOCK_SIZE]
    raw = bytes(cramjam.snappy.compress_raw(DATA))
    assert comp.decompress(api.COMPRESSION_SNAPPY, raw, len(DATA), 0) == DATA


def test_lz4_frame_is_what_kafka_writes():
    enc = comp.compress(api.COMPRESSION_LZ4, DATA)
    assert enc[:4] == bytes.fromhex("04224d18")  # LZ4 frame magic
    flg, bd = enc[4], enc[5]
    assert flg >> 6 == 1  # version 01
    assert flg & 0x20  # block independence
    assert not flg & 0x10 and not flg & 0x08 and not flg & 0x04  # no block checksum, content size, content checksum
    assert (bd >> 4) & 0x7 == 4  # 64 KiB blocks


def test_gzip_is_deterministic_and_reads_concatenated_members():
    assert comp.compress(api.COMPRESSION_GZIP, DATA) == comp.compress(api.COMPRESSION_GZIP, DATA)
    two = gzip.compress(DATA[:1000]) + gzip.compress(DATA[1000:2000])
    assert comp.decompress(api.COMPRESSION_GZIP, two, 2000, 0) == DATA[:2000]


@pytest.mark.parametrize("codec_id", [1, 2, 3, 4])
def test_truncated_and_garbage_streams_fail_cleanly(codec_id):
    enc = comp.compress(codec_id, DATA)
    garbage = [random.Random(seed).randbytes(50) for seed in range(20)]
    for bad in (enc[: len(enc) // 2], enc[:-1], b"", b"\x00" * 10, *garbage):
        try:
            out = comp.decompress(codec_id, bad, len(DATA), 99)
        except CorruptRecordError as exc:  # garbage may also claim a huge size: a bomb
            assert exc.reason in (api.REASON_DECOMPRESSION_FAILED, api.REASON_DECOMPRESSION_BOMB)
            assert exc.position == 99
        else:  # a few garbage inputs are valid streams of something; never more than the limit
            assert len(out) <= len(DATA)


@pytest.mark.parametrize("codec_id", [1, 2, 3, 4])
def test_output_over_the_limit_is_a_bomb(codec_id):
    enc = comp.compress(codec_id, DATA)
    with pytest.raises(CorruptRecordError) as info:
        comp.decompress(codec_id, enc, len(DATA) - 1, 7)
    assert (info.value.reason, info.value.position) == (api.REASON_DECOMPRESSION_BOMB, 7)
    assert comp.decompress(codec_id, enc, len(DATA), 7) == DATA


def test_unknown_codec():
    with pytest.raises(CorruptRecordError) as info:
        comp.decompress(6, b"", 10, 3)
    assert info.value.reason == api.REASON_UNKNOWN_COMPRESSION
    with pytest.raises(ValueError):
        comp.compress(6, b"")
