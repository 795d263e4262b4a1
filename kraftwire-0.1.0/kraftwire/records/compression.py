"""Compression codecs of RecordBatch v2: gzip, snappy, lz4, zstd — through the well-kept libraries.

Encoding follows what Java producers write, so Java consumers read our batches:

* gzip: a single gzip member (``mtime=0`` so the output is deterministic).
* snappy: the xerial block framing (``\\x82SNAPPY\\x00``, version 1, compatible 1, then
  int32-length-prefixed raw snappy blocks of at most 32 KiB input). Decoding accepts both
  xerial-framed and raw snappy.
* lz4: an LZ4 frame with independent 64 KiB blocks and no content size or checksum, as Kafka's
  ``KafkaLZ4BlockOutputStream`` writes it.
* zstd: one zstd frame.

Decompression is bounded: output larger than ``limit`` bytes is ``REASON_DECOMPRESSION_BOMB``,
and no codec ever allocates more than about ``limit`` bytes, whatever sizes the input claims.
Any other failure is ``REASON_DECOMPRESSION_FAILED``. Both raise ``CorruptRecordError`` at the
given position (the batch's records section).
"""

from __future__ import annotations

import gzip
import struct
import zlib

import cramjam
import lz4.frame
import zstandard

from kraftwire.errors import CorruptRecordError
from kraftwire.records.api import (
    COMPRESSION_GZIP,
    COMPRESSION_LZ4,
    COMPRESSION_NONE,
    COMPRESSION_SNAPPY,
    COMPRESSION_ZSTD,
    REASON_DECOMPRESSION_BOMB,
    REASON_DECOMPRESSION_FAILED,
    REASON_UNKNOWN_COMPRESSION,
)

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, compatible version
XERIAL_VERSION = 1
XERIAL_COMPATIBLE = 1
XERIAL_BLOCK_SIZE = 32 * 1024
_XERIAL_BLOCK_LEN = struct.Struct(">i")

_ZSTD_COMPRESSOR = zstandard.ZstdCompressor(level=3)
_ZSTD_DECOMPRESSOR = zstandard.ZstdDecompressor()
_ZSTD_CHUNK = 128 * 1024


#: Kafka's default compression levels (KIP-390: compression.gzip.level -1 is zlib's default, 6)
DEFAULT_LEVELS = {COMPRESSION_GZIP: 6, COMPRESSION_LZ4: 9, COMPRESSION_ZSTD: 3}


def compress(codec: int, data, level: int | None = None) -> bytes:
    """Compress the records section *data* with codec id *codec* (0..4), at *level* (KIP-390's
    ``compression.<codec>.level``; None or gzip's -1: Kafka's default; snappy has none)."""
    if codec == COMPRESSION_GZIP:
        return gzip.compress(data, compresslevel=6 if level is None or level < 0 else level, mtime=0)
    if codec == COMPRESSION_SNAPPY:
        return _xerial_encode(data)
    if codec == COMPRESSION_LZ4:
        return lz4.frame.compress(
            bytes(data),
            compression_level=0 if level is None or level == DEFAULT_LEVELS[COMPRESSION_LZ4] else min(level, 16),
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            store_size=False,
        )
    if codec == COMPRESSION_ZSTD:
        if level is None or level == DEFAULT_LEVELS[COMPRESSION_ZSTD]:
            return _ZSTD_COMPRESSOR.compress(data)
        return zstandard.ZstdCompressor(level=level).compress(data)
    if codec == COMPRESSION_NONE:
        return bytes(data)
    raise ValueError(f"unknown compression id {codec}")


def decompress(codec: int, data, limit: int, position: int) -> bytes:
    """Decompress *data* (codec id *codec*) to at most *limit* bytes, else ``CorruptRecordError``."""
    try:
        if codec == COMPRESSION_GZIP:
            out = _gzip_decode(data, limit)
        elif codec == COMPRESSION_SNAPPY:
            out = _snappy_decode(data, limit)
        elif codec == COMPRESSION_LZ4:
            out = _lz4_decode(data, limit)
        elif codec == COMPRESSION_ZSTD:
            out = _zstd_decode(data, limit)
        elif codec == COMPRESSION_NONE:
            out = bytes(data)
        else:
            raise CorruptRecordError(REASON_UNKNOWN_COMPRESSION, position)
    except _Bomb:
        raise CorruptRecordError(REASON_DECOMPRESSION_BOMB, position) from None
    except CorruptRecordError:
        raise
    except Exception:  # every library's own error type means the same thing here
        raise CorruptRecordError(REASON_DECOMPRESSION_FAILED, position) from None
    if out is None:
        raise CorruptRecordError(REASON_DECOMPRESSION_FAILED, position)
    if len(out) > limit:
        raise CorruptRecordError(REASON_DECOMPRESSION_BOMB, position)
    return out


class _Bomb(Exception):
    pass


# ---------------------------------------------------------------------------------------- gzip


def _gzip_decode(data, limit: int):
    """Concatenated gzip members (as java.util.zip.GZIPInputStream reads them), bounded."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    first = d.decompress(data, limit + 1)
    if len(first) > limit:
        raise _Bomb
    if d.eof and not d.unused_data:
        return first  # the common case: one member, no copies
    if not d.eof:
        return None  # input ended inside the member: truncated
    out = bytearray(first)
    rest = d.unused_data
    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while True:
            chunk = d.decompress(rest, limit - len(out) + 1)
            out += chunk
            if len(out) > limit:
                raise _Bomb
            if d.eof:
                break
            if d.unconsumed_tail:
                rest = d.unconsumed_tail
                continue
            return None
        rest = d.unused_data
    return bytes(out)


# -------------------------------------------------------------------------------------- snappy


def _xerial_encode(data) -> bytes:
    data = memoryview(data)
    parts = [XERIAL_HEADER.pack(XERIAL_MAGIC, XERIAL_VERSION, XERIAL_COMPATIBLE)]
    for start in range(0, len(data), XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + XERIAL_BLOCK_SIZE]))
        parts.append(_XERIAL_BLOCK_LEN.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _raw_snappy_length(block) -> int:
    """The uncompressed length a raw snappy block declares (its little-endian varint preamble)."""
    result = shift = 0
    for i in range(min(len(block), 5)):
        b = block[i]
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result
        shift += 7
    return -1


def _raw_snappy_decode(block, room: int) -> bytes:
    declared = _raw_snappy_length(block)
    if declared < 0:
        return None
    if declared > room:
        raise _Bomb
    out = bytes(cramjam.snappy.decompress_raw(bytes(block)))
    if len(out) != declared:
        return None
    return out


def _snappy_decode(data, limit: int):
    data = memoryview(data)
    if len(data) >= XERIAL_HEADER.size and bytes(data[: len(XERIAL_MAGIC)]) == XERIAL_MAGIC:
        parts, total, pos = [], 0, XERIAL_HEADER.size
        while pos < len(data):
            if pos + _XERIAL_BLOCK_LEN.size > len(data):
                return None
            (n,) = _XERIAL_BLOCK_LEN.unpack_from(data, pos)
            pos += _XERIAL_BLOCK_LEN.size
            if n < 0 or pos + n > len(data):
                return None
            part = _raw_snappy_decode(data[pos : pos + n], limit - total)
            if part is None:
                return None
            parts.append(part)
            total += len(part)
            pos += n
        return b"".join(parts)
    return _raw_snappy_decode(data, limit)


# ----------------------------------------------------------------------------------------- lz4


def _lz4_decode(data, limit: int):
    d = lz4.frame.LZ4FrameDecompressor()
    out = d.decompress(data, max_length=limit + 1)
    if len(out) > limit:
        raise _Bomb
    if not d.eof:
        return None
    return out


# ---------------------------------------------------------------------------------------- zstd


def _zstd_decode(data, limit: int):
    size = zstandard.frame_content_size(data)
    if size >= 0:
        # The frame declares its size: check it, then one exact-size decompression that also
        # verifies the frame is complete.
        if size > limit:
            raise _Bomb
        return _ZSTD_DECOMPRESSOR.decompress(data, max_output_size=max(size, 1))
    # Unknown size (streaming writers such as zstd-jni): a bounded streaming pass first, then
    # a second pass that can tell whether the frame was complete (the streaming API cannot).
    total = 0
    parts = []
    for chunk in _ZSTD_DECOMPRESSOR.read_to_iter(data, write_size=_ZSTD_CHUNK):
        total += len(chunk)
        if total > limit:
            raise _Bomb
        parts.append(chunk)
    obj = _ZSTD_DECOMPRESSOR.decompressobj()
    obj.decompress(data)
    if not obj.eof:
        return None
    return b"".join(parts)
