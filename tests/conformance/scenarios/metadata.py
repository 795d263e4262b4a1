"""Metadata at every version both serve: all topics, named topics, unknown and illegal names with auto-creation
allowed or not, duplicates, authorized operations (v8+), topic ids (v10+: in answers; v12: asked by id)."""

from __future__ import annotations

import uuid

from conformance.runner import Step, TopicId, each_version, no_error
from conformance.steps import created, led

from kraftwire.protocol import messages as w

MD = w.MetadataRequest
A, B = "{ns}.a", "{ns}.b"


def ask(version: int, *names, allow: bool = False, until=None, scope: bool = False, topic_ops: bool = False,
        cluster_ops: bool = False) -> Step:
    """Metadata at ``version`` for ``names`` (None: every topic; a TopicId or uuid entry asks by id, v10+)."""
    if names == (None,):
        topics = None if version >= 1 else []
    else:
        topics = [MD.MetadataRequestTopic(name=None, topic_id=n) if isinstance(n, (TopicId, uuid.UUID))
                  else MD.MetadataRequestTopic(name=n) for n in names]
    return Step(MD(topics=topics, allow_auto_topic_creation=allow, include_cluster_authorized_operations=cluster_ops,
                   include_topic_authorized_operations=topic_ops), version, until=until, scope=scope)


CASES = {
    "all-topics": lambda v: [*created(A, B, partitions=2), ask(v, None, scope=True)],
    "named": lambda v: [*created(A, partitions=3), ask(v, A)],
    "named-several": lambda v: [*created(A, B), ask(v, B, A)],
    "empty-list": lambda v: [*created(A), ask(v, scope=True)],
    "unknown-no-auto-create": lambda v: [ask(v, A), ask(v, A)] if v >= 4 else None,
    "auto-create": lambda v: [ask(v, A, allow=True), ask(v, A, allow=True, until=no_error)],
    "known-and-unknown": lambda v: [*created(A), ask(v, B, A)] if v >= 4 else None,
    "known-and-auto-created": lambda v: [*created(A), ask(v, B, A, allow=True),
                                         ask(v, A, B, allow=True, until=led(".b"))],
    "invalid-name": lambda v: [ask(v, "{ns}/a", allow=True), ask(v, "", allow=True)],
    "metadata-topic": lambda v: [ask(v, "__cluster_metadata", allow=True)],
    "duplicate-names": lambda v: [*created(A), ask(v, A, A)],
    "authorized-operations": lambda v: [*created(A), ask(v, A, topic_ops=True, cluster_ops=v <= 10)] if v >= 8
    else None,
    "by-topic-id": lambda v: [*created(A), ask(v, TopicId(A))] if v >= 10 else None,
    "by-unknown-topic-id": lambda v: [ask(v, uuid.UUID("5f1a8d3c-0000-4000-8000-00000000beef"))] if v >= 10
    else None,
}

#: on nodes whose file sets auto.create.topics.enable=false: a client allowing it creates nothing
NO_AUTO_CREATE = {
    "broker-no-auto-create": lambda v: [ask(v, A, allow=True), ask(v, A, "{ns}/b", allow=True)],
}

SCENARIOS = each_version("Metadata", CASES) + each_version("Metadata", NO_AUTO_CREATE, config="no-auto-create")
