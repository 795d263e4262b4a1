"""Requests Apache Kafka refuses whatever else they say, as the node decodes them: for these the fuzzer knows the
answer without asking Kafka, so a node that accepts one is caught even though it logged nothing and kept its
invariants. Each rule names where Kafka checks it; each returns what in the answer breaks it ("" when nothing).

* CreateTopics / CreatePartitions naming a topic twice: every result for that name is INVALID_REQUEST ("Duplicate
  topic name.": ControllerApis.createTopics / createPartitions check it before anything else).
* DeleteTopics naming a topic twice, or one entry with both a name and an id (v6+): INVALID_REQUEST for it
  (ControllerApis.deleteTopics).
* Produce v3+ whose records for a partition hold two or more record batches, or none: that partition is refused
  (ProduceRequest.validateRecords: INVALID_RECORD, or an earlier refusal such as UNKNOWN_TOPIC_OR_PARTITION).
"""

from __future__ import annotations

import struct
from collections import Counter

from kraftwire.ids import ZERO_UUID
from kraftwire.metadata.controller.controllers import SECURITY_PROTOCOLS
from kraftwire.protocol.messages import Base
from kraftwire.replica.fetch_sessions import SESSIONS_SINCE, shard_index
from kraftwire.replica.producers import TV_UNKNOWN

NONE, INVALID_REQUEST = 0, 42
MAX_STRING_BYTES = 32767
#: the longest text Kafka's error messages add around a name they quote (a generous bound)
QUOTE_ROOM = 256


def batch_count(records) -> int:
    """Whole record batches in a records value, by their Length fields (garbage counts as none)."""
    n, pos = 0, 0
    while records is not None and pos + 12 <= len(records):
        (length,) = struct.unpack_from(">i", records, pos + 8)
        if length <= 0 or pos + 12 + length > len(records):
            break
        n, pos = n + 1, pos + 12 + length
    return n


def _duplicate_topics(request, answer) -> str:
    names = Counter(t.name for t in request.body.topics)
    twice = {name for name, n in names.items() if n > 1}
    results = answer.topics if request.api.name == "CreateTopics" else answer.results
    wrong = [(r.name, r.error_code) for r in results if r.name in twice and r.error_code != INVALID_REQUEST]
    return f"topics named twice must be INVALID_REQUEST, got {wrong}" if wrong else ""


def _delete_topics(request, answer) -> str:
    body = request.body
    if request.version < 6:
        twice = {n for n, count in Counter(body.topic_names).items() if count > 1}
        wrong = [(r.name, r.error_code) for r in answer.responses if r.name in twice and r.error_code != INVALID_REQUEST]
        return f"topics named twice must be INVALID_REQUEST, got {wrong}" if wrong else ""
    both = {(t.name, t.topic_id) for t in body.topics if t.name is not None and t.topic_id != ZERO_UUID}
    wrong = [(r.name, str(r.topic_id), r.error_code) for r in answer.responses
             if (r.name, r.topic_id) in both and r.error_code != INVALID_REQUEST]
    return f"entries with both a name and an id must be INVALID_REQUEST, got {wrong}" if wrong else ""


def not_one_batch(records) -> bool:
    """Records Kafka's ProduceRequest.validateRecords refuses outright: none at all, or two or more batches."""
    return records is not None and (len(records) == 0 or batch_count(records) >= 2)


def _produce(request, answer) -> str:
    if request.version < 3:
        return ""
    bad = {(t.name, p.index) for t in request.body.topic_data for p in t.partition_data if not_one_batch(p.records)}
    wrong = [(t.name, p.index) for t in answer.responses for p in t.partition_responses
             if (t.name, p.index) in bad and p.error_code == NONE]
    return f"partitions whose records are not exactly one record batch were accepted: {wrong}" if wrong else ""


RULES = {"CreateTopics": _duplicate_topics, "CreatePartitions": _duplicate_topics, "DeleteTopics": _delete_topics,
         "Produce": _produce}


def broken_rule(request, answer) -> str:
    """What in ``answer`` breaks Kafka's rules for ``request`` (both decoded), or ""."""
    rule = RULES.get(request.api.name)
    return rule(request, answer) if rule is not None else ""


def kafka_fails_too(request) -> bool:
    """Does Kafka 4.4 answer this request with UNKNOWN_SERVER_ERROR itself (an exception escaping its handler), so
    the same answer from the node is Kafka's, not a fault? Checked against Kafka by the conformance run:

    * ListOffsets v2+ with an isolation level other than 0 and 1 (``IsolationLevel.forId`` throws), every partition;
    * a consumer's Fetch v4+ with such an isolation level, the whole request (from v7 unless an incremental session
      epoch has it refused first with FETCH_SESSION_ID_NOT_FOUND);
    * IncrementalAlterConfigs with an operation outside 0..3 (``OpType.forId`` throws);
    * Metadata v12+ naming a topic with neither a name nor an id (a null name reaches its lookups);
    * any request holding a string within ``QUOTE_ROOM`` bytes of the 32,767-byte limit: an answer quoting it in an
      error message ("No such topic as <name>") cannot be written, and Kafka sends the request's error answer with
      UNKNOWN_SERVER_ERROR instead (``harness.bad_input.unwritable_answers``, checked against Kafka 4.4);
    * a Fetch v7+ naming a session id in no shard of the fetch-session cache (negative beyond the first shard's
      range, or from 2**31-8 up): Kafka's ``getCacheShard`` throws, the whole request
      (``kraftwire.replica.fetch_sessions.shard_index``);
    * a ControllerRegistration listing a listener whose security protocol Kafka does not know
      (``ListenerInfo.fromControllerRegistrationRequest`` throws a RuntimeException);
    * a WriteTxnMarkers v2+ marker of transaction version -1 (TV_UNKNOWN: ``ProducerAppendInfo.appendEndTxnMarker``
      throws IllegalArgumentException for a coordinator's append), each partition it reaches the log of
      (``kraftwire.replica.producers``)."""
    if request is None:
        return False
    name, body = request.api.name, request.body
    if any(len(s.encode("utf-8")) > MAX_STRING_BYTES - QUOTE_ROOM for s in _strings(body)):
        return True
    if name == "ListOffsets":
        return request.version >= 2 and body.isolation_level not in (0, 1)
    if name == "ControllerRegistration":
        return any(listener.security_protocol not in SECURITY_PROTOCOLS for listener in body.listeners or ())
    if name == "Fetch":
        if request.version >= SESSIONS_SINCE and body.session_id != 0 and shard_index(body.session_id) is None:
            return True
        incremental = request.version >= 7 and body.session_epoch not in (0, -1)
        return request.version >= 4 and body.isolation_level not in (0, 1) and not incremental \
            and _fetch_replica(request) < 0
    if name == "WriteTxnMarkers":
        return request.version >= 2 and any(m.transaction_version == TV_UNKNOWN for m in body.markers or ())
    if name == "IncrementalAlterConfigs":
        return any(c.config_operation not in (0, 1, 2, 3) for r in body.resources or () for c in r.configs or ())
    if name == "Metadata":
        return request.version >= 12 and any(
            t.name is None and t.topic_id in (None, ZERO_UUID) for t in body.topics or ())
    return False


def _fetch_replica(request) -> int:
    """The replica id a Fetch names: the body's below v15, the replica state's from v15 (-1 without one)."""
    if request.version < 15:
        return request.body.replica_id
    state = request.body.replica_state
    return state.replica_id if state is not None else -1


def _strings(msg):
    """Every string of a decoded message, those of its structs and arrays included."""
    for f in msg._info.fields:
        value = getattr(msg, f.attr)
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str):
                yield item
            elif isinstance(item, Base):
                yield from _strings(item)
