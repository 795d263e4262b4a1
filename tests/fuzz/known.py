"""TEMPORARY — known findings of the fuzzer that are being fixed on other branches (issue #37's list, by item
number). A case that matches one, as the node decodes it, is not sent (the stall of item 1 would take the node down
for the rest of the run) and is counted instead; the run's summary lists every case that matched, by seed, stream
and index.

Delete each entry when its fix is merged (and this module, with its one use in ``runner.Runner.run``, with the
last): the fuzzer then sends those cases and fails where the bug is still there — a stall (1), a traceback (7/9,
8), a partition written twice to the metadata log (2), or a request Kafka refuses accepted (2, 3, 6: see
``kafka_rules``). ``KRAFTWIRE_FUZZ_SEND_KNOWN=1`` sends them now, to check a fix.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from fuzz.generator import CATASTROPHIC_REGEXES
from fuzz.kafka_rules import not_one_batch
from kraftwire.ids import ZERO_UUID
from kraftwire.protocol.messages import Base


def _strings(msg):
    """Every string in a decoded message."""
    for f in msg._info.fields:
        value = getattr(msg, f.attr)
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str):
                yield item
            elif isinstance(item, Base):
                yield from _strings(item)


def _redos(request) -> bool:
    return request.api.name == "ConsumerGroupHeartbeat" and request.version >= 1 and \
        request.body.subscribed_topic_regex in CATASTROPHIC_REGEXES


def _create_partitions_twice(request) -> bool:
    return request.api.name == "CreatePartitions" and max(Counter(t.name for t in request.body.topics).values(),
                                                          default=0) > 1


def _delete_by_name_and_id(request) -> bool:
    return request.api.name == "DeleteTopics" and request.version >= 6 and any(
        t.name is not None and t.topic_id != ZERO_UUID for t in request.body.topics)


def _not_one_batch(request) -> bool:
    return request.api.name == "Produce" and request.version >= 3 and any(
        not_one_batch(p.records) for t in request.body.topic_data for p in t.partition_data)


def _long_string(request) -> bool:
    return any(len(s.encode("utf-8", "surrogatepass")) > 32767 for s in _strings(request.body))


def _metadata_null_name(request) -> bool:
    return request.api.name == "Metadata" and request.version in (10, 11) and any(
        t.name is None for t in request.body.topics or ())


@dataclass(frozen=True)
class Known:
    item: str  # the item number(s)
    what: str
    matches: Callable


KNOWN: tuple[Known, ...] = (
    Known("1", "ConsumerGroupHeartbeat regex with nested quantifiers stalls the node (python re)", _redos),
    Known("2", "CreatePartitions naming a topic twice", _create_partitions_twice),
    Known("3", "DeleteTopics with both a name and an id", _delete_by_name_and_id),
    # (the fuzzer also found empty records accepted: Kafka's same check, ProduceRequest.validateRecords, refuses both)
    Known("6", "two record batches, or none, in one Produce partition", _not_one_batch),
    Known("7/9", "a string longer than 32,767 bytes", _long_string),
    Known("8", "Metadata v10/v11 naming a topic by id with a null name", _metadata_null_name),
)


def known_finding(request) -> Known | None:
    """The known finding a request (as the node decodes it; None: it does not decode) would hit, unless
    KRAFTWIRE_FUZZ_SEND_KNOWN=1 asks to send it anyway."""
    if request is None or os.environ.get("KRAFTWIRE_FUZZ_SEND_KNOWN") == "1":
        return None
    return next((k for k in KNOWN if k.matches(request)), None)
