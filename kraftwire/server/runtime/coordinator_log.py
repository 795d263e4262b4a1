"""Where a coordinator is and its internal topic: FindCoordinator's answer for a key of ``__consumer_offsets`` or
``__transaction_state``, and the creation of such a topic by the active controller. (Loading a coordinator's
partition is the coordinator runtime's: ``kraftwire.coordinator.runtime``.)"""

from __future__ import annotations

import logging
from typing import Callable

from kraftwire import error_codes as ec
from kraftwire.coordinator.partitioning import partition_for
from kraftwire.metadata import answers
from kraftwire.protocol import messages as w


def coordinator_of(image, topic: str, key: str, listener: str):
    """FindCoordinator's (error, message, node id, host, port) for ``key`` of the internal ``topic``: the leader of
    the partition Kafka's hash picks, at its endpoint on ``listener``; None while the topic does not exist."""
    t = image.topic(topic)
    if t is None or not t.partitions:
        return None
    reg = t.partitions.get(partition_for(key, len(t.partitions)))
    ep = answers.broker_endpoint(image, reg.leader, listener) if reg is not None and reg.leader >= 0 else None
    if ep is None:
        return (ec.COORDINATOR_NOT_AVAILABLE, None, -1, "", -1)
    return (ec.NONE, None, reg.leader, ep.host, ep.port)


def create_internal_topic(kraft, name: str, partitions: int, replication_factor: int, configs, done: Callable) -> None:
    """Ask the active controller (through ``kraft``, the node's KraftApis) to create the internal topic ``name``
    with ``configs`` ((key, value) pairs); the outcome is logged and ``done()`` called once it is answered."""
    CT = w.CreateTopicsRequest
    body = CT(topics=[CT.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=replication_factor, assignments=[],
        configs=[CT.CreatableTopicConfig(name=k, value=v) for k, v in configs])], timeout_ms=30_000,
        validate_only=False)
    log = logging.getLogger("kraftwire.coordinator")

    def answered(response) -> None:
        done()
        for t in response.topics:
            if t.error_code not in (0, ec.TOPIC_ALREADY_EXISTS):
                log.warning("creating %s: %s (%s)", name, ec.name_of(t.error_code), t.error_message)
            else:
                log.info("created %s with %d partitions", name, partitions)

    kraft.call("CreateTopics", body, 5, answered)
