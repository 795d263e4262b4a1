"""DeleteTopics at every version both serve: by name, by id (v6), unknown names and ids, duplicates, both or
neither of name and id (v6); each followed by Metadata for what should be gone or still there."""

from __future__ import annotations

import uuid

from conformance.runner import Step, TopicId, each_version
from conformance.steps import created, metadata

from kraftwire.protocol import messages as w

DT = w.DeleteTopicsRequest
A, B = "{ns}.a", "{ns}.b"
#: an id no topic has
UNKNOWN_ID = uuid.UUID("5f1a8d3c-0000-4000-8000-00000000beef")


def delete(version: int, *names: str, ids=()) -> Step:
    """By name (``names``) and, from v6, by id (``ids``: TopicId or uuid; a (name, id) pair sends both)."""
    if version < 6:
        return Step(DT(topic_names=list(names), timeout_ms=10000), version)
    states = [DT.DeleteTopicState(name=n, topic_id=uuid.UUID(int=0)) for n in names]
    for entry in ids:
        name, topic_id = entry if isinstance(entry, tuple) else (None, entry)
        states.append(DT.DeleteTopicState(name=name, topic_id=topic_id))
    return Step(DT(topics=states, timeout_ms=10000), version)


def _gone(*names):
    """Metadata until the deleted topics are unknown to the broker too."""
    return metadata(*names, until=lambda r: all(t.error_code == 3 for t in r.topics))


CASES = {
    "by-name": lambda v: [*created(A, B), delete(v, A), _gone(A), metadata(B)],
    "by-name-several": lambda v: [*created(A, B), delete(v, A, B), _gone(A, B)],
    "unknown-name": lambda v: [delete(v, A)],
    "invalid-name": lambda v: [delete(v, "{ns}/a"), delete(v, "")],
    "duplicate-name": lambda v: [*created(A), delete(v, A, A), metadata(A)],
    "known-and-unknown": lambda v: [*created(A), delete(v, A, B), _gone(A)],
    "metadata-topic": lambda v: [delete(v, "__cluster_metadata")],
    "nothing": lambda v: [delete(v)],
    "by-id": lambda v: [*created(A, B), delete(v, ids=[TopicId(A)]), _gone(A), metadata(B)] if v >= 6 else None,
    "unknown-id": lambda v: [delete(v, ids=[UNKNOWN_ID])] if v >= 6 else None,
    "duplicate-id": lambda v: [*created(A), delete(v, ids=[TopicId(A), TopicId(A)]), metadata(A)] if v >= 6 else None,
    "name-and-id": lambda v: [*created(A), delete(v, ids=[(A, TopicId(A))]), metadata(A)] if v >= 6 else None,
    "neither-name-nor-id": lambda v: [delete(v, ids=[uuid.UUID(int=0)])] if v >= 6 else None,
}

SCENARIOS = each_version("DeleteTopics", CASES)
