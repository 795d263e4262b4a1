"""A topic's ``compression.type`` on the leader's append path (Kafka's LogValidator with BrokerCompressionType),
pure: records in, records out.

``compression.type=producer`` (Kafka's default) keeps each batch as the producer compressed it. Any other value is
the codec the log keeps: a produced batch in another codec is rebuilt in it — same records, keys, values, headers
and timestamps, same producer id, epoch, base sequence and transactional flag — at the topic's level for that codec
(KIP-390: ``compression.gzip.level``, ``compression.lz4.level``, ``compression.zstd.level``; gzip's -1 is zlib's
default). ``uncompressed`` decompresses. A batch already in the target codec stays as it is, whatever its level, as
in Kafka (only a change of codec rebuilds).
"""

from __future__ import annotations

from typing import Mapping

from kraftwire.records import RecordBatchBuilder, read_batches

#: compression.type values -> the codec name of kraftwire.records ("producer" keeps the batch's own)
_CODECS = {"uncompressed": "none", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd"}


def target_codec(compression_type: str, source: str) -> str:
    """The codec a batch compressed with ``source`` is kept in under ``compression.type``."""
    return source if compression_type == "producer" else _CODECS[compression_type]


def level(cfg: Mapping[str, str | None], codec: str) -> int | None:
    """The topic's KIP-390 level for ``codec`` (None: the codec's default)."""
    raw = cfg.get(f"compression.{codec}.level")
    if raw is None:
        return None
    value = int(raw)
    return None if codec == "gzip" and value == -1 else value


def recompress(raw: bytes, cfg: Mapping[str, str | None], batches=None) -> bytes | None:
    """``raw`` (validated data batches) rebuilt where the topic's ``compression.type`` asks for another codec; None
    when every batch is already kept as it is. ``batches``: the headers of ``raw`` when the caller read them
    (``validate_batches(..., headers=True)``), else they are read here."""
    compression_type = (cfg.get("compression.type") or "producer").strip().lower()
    if compression_type == "producer":
        return None
    out: list[bytes] = []
    changed = False
    view = memoryview(raw)
    for batch in read_batches(raw, validate=False) if batches is None else batches:
        codec = target_codec(compression_type, batch.compression)
        if codec == batch.compression or batch.is_control:
            out.append(bytes(view[batch.position:batch.position + batch.size_in_bytes]))
            continue
        changed = True
        builder = RecordBatchBuilder(base_offset=batch.base_offset, partition_leader_epoch=batch.partition_leader_epoch,
                                     compression=codec, is_transactional=batch.is_transactional,
                                     producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                                     base_sequence=batch.base_sequence, timestamp_type=batch.timestamp_type,
                                     compression_level=level(cfg, codec))
        for record in batch:
            builder.append(record.key, record.value, headers=record.headers, timestamp=record.timestamp)
        out.append(builder.build())
    return b"".join(out) if changed else None
