"""A share group's dead-letter queue (KIP-1191, ``share.version`` 2; Kafka 4.4's ``ShareGroupDLQStateManager``):
the decisions, pure. The edge (``server/apis/share_dlq_apis.py``) reads the group and topic configs, creates the
topic, reads the original records and produces; it asks here whether it may, where to, and what to write.

* **Whether** (:func:`refusal`, Kafka's ``validateDlqTopic``, checked in its order, each its ``ConfigException``
  message): the group names a topic; it does not start with ``__``; an existing topic has
  ``errors.deadletterqueue.group.enable=true``; a missing one may be created
  (``errors.deadletterqueue.auto.create.topics.enable``); the name starts with the broker's
  ``errors.deadletterqueue.topic.name.prefix`` (default ``dlq.``; an empty prefix allows any name). A refused write
  is logged and the records are archived all the same.
* **A created topic** has the broker's default partitions and replication factor and :data:`CREATED_TOPIC_CONFIGS`.
* **Where**: source partition ``p`` goes to DLQ partition ``p % partitions``.
* **What** (:func:`dead_letter_records`): one record per offset, timestamped when written, with the key and value of
  the original only under the group's ``errors.deadletterqueue.copy.record.enable`` (else none), and Kafka's
  ``__dlq.errors.*`` headers: topic, partition, offset, group, delivery count, and the cause's message. They go in
  uncompressed batches of at most the DLQ topic's ``max.message.bytes`` (:func:`batches`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from kraftwire.records import RecordBatchBuilder

__all__ = ["AUTO_CREATE", "COPY_RECORD", "CREATED_TOPIC_CONFIGS", "DLQ_MAX_FETCH_BYTES", "GROUP_ENABLE", "PREFIX",
           "DeadLetterRecord", "batches", "copies_records", "copy_records", "dead_letter_records",
           "destination_partition", "refusal"]

#: the broker keys (cluster-wide dynamic) and the topic and group configs of the dead-letter queue
PREFIX = "errors.deadletterqueue.topic.name.prefix"
AUTO_CREATE = "errors.deadletterqueue.auto.create.topics.enable"
GROUP_ENABLE = "errors.deadletterqueue.group.enable"
COPY_RECORD = "errors.deadletterqueue.copy.record.enable"

#: the configs of a DLQ topic the broker creates (``ProduceRequestHandler.createTopicBuilder``)
CREATED_TOPIC_CONFIGS = ((GROUP_ENABLE, "true"), ("message.timestamp.type", "CreateTime"))

#: how much of the source partition one read for copied records takes (Kafka's DLQ_MAX_FETCH_BYTES)
DLQ_MAX_FETCH_BYTES = 1 << 20

_HEADER_PREFIX = "__dlq.errors."


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def copies_records(group_configs: Mapping[str, str]) -> bool:
    """Whether the group's DLQ records carry the originals' keys and values (``errors.deadletterqueue.copy.record
    .enable``, default false)."""
    return _true(group_configs.get(COPY_RECORD))


def refusal(group_id: str, topic: str | None, *, prefix: str | None, topic_exists: bool,
            topic_configs: Mapping[str, str | None], auto_create: str | None) -> str | None:
    """Why the group's records may not be written to its DLQ topic ``topic`` (None: they may)."""
    if not topic:
        return f"Configured DLQ topic name in share group: {group_id} is empty."
    if topic.startswith("__"):
        return f"Configured DLQ topic name in share group: {group_id} cannot start with __, topic: {topic}."
    if topic_exists and not _true(topic_configs.get(GROUP_ENABLE)):
        return f"DLQ is not enabled on configured DLQ topic for share group: {group_id}, topic: {topic}."
    if not topic_exists and not _true(auto_create):
        return ("DLQ topic does not exist and auto create is disabled on cluster for share group: "
                f"{group_id}, topic: {topic}.")
    if prefix and not topic.startswith(prefix):
        return ("Configured DLQ topic name does not comply with the DLQ topic prefix in share group: "
                f"{group_id}, topic: {topic}, prefix: {prefix}.")
    return None


def destination_partition(source_partition: int, partitions: int) -> int:
    """The DLQ partition a source partition's records go to."""
    return source_partition % partitions


@dataclass(frozen=True)
class DeadLetterRecord:
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]


def dead_letter_records(*, group_id: str, topic: str, partition: int, first_offset: int, last_offset: int,
                        delivery_count: int | None, cause: str | None,
                        originals: Mapping[int, tuple[bytes | None, bytes | None]] | None = None
                        ) -> list[DeadLetterRecord]:
    """The DLQ records of ``first_offset``..``last_offset`` of ``topic``-``partition``: ``originals`` (offset:
    (key, value)) when the group copies records — an offset the log no longer has gets none."""
    out = []
    for offset in range(first_offset, last_offset + 1):
        headers = [("topic", topic), ("partition", str(partition)), ("offset", str(offset)), ("group", group_id)]
        if delivery_count is not None:
            headers.append(("delivery.count", str(delivery_count)))
        if cause:
            headers.append(("message", cause))
        key, value = (originals or {}).get(offset, (None, None))
        out.append(DeadLetterRecord(key, value, tuple((_HEADER_PREFIX + k, v.encode()) for k, v in headers)))
    return out


def copy_records(batches_read, first_offset: int, last_offset: int) -> dict[int, tuple[bytes | None, bytes | None]]:
    """``{offset: (key, value)}`` of the data records in ``first_offset``..``last_offset`` among the record batches
    read from the source partition (control batches have none to copy)."""
    out = {}
    for batch in batches_read:
        if batch.is_control or batch.last_offset < first_offset or batch.base_offset > last_offset:
            continue
        for r in batch:
            if first_offset <= r.offset <= last_offset:
                out[r.offset] = (None if r.key is None else bytes(r.key), None if r.value is None else bytes(r.value))
    return out


def _built(records: list[DeadLetterRecord], timestamp_ms: int) -> RecordBatchBuilder:
    builder = RecordBatchBuilder()
    for r in records:
        builder.append(r.key, r.value, list(r.headers), timestamp=timestamp_ms)
    return builder


def batches(records: list[DeadLetterRecord], timestamp_ms: int, max_message_bytes: int) -> list[tuple[int, bytes]]:
    """``[(records in it, batch)]``: ``records`` in order in uncompressed v2 batches of at most
    ``max_message_bytes`` each — a single record larger than that goes alone (and the DLQ topic refuses it)."""
    out: list[tuple[int, bytes]] = []
    chunk: list[DeadLetterRecord] = []
    builder = RecordBatchBuilder()  # the chunk with the record being tried appended
    for r in records:
        builder.append(r.key, r.value, list(r.headers), timestamp=timestamp_ms)
        if chunk and builder.size_in_bytes() > max_message_bytes:
            out.append((len(chunk), _built(chunk, timestamp_ms).build()))
            chunk, builder = [], _built([r], timestamp_ms)
        chunk.append(r)
    if chunk:
        out.append((len(chunk), _built(chunk, timestamp_ms).build()))
    return out
