"""Loading a coordinator's state from its internal-topic partition (``__consumer_offsets``, ``__transaction_state``).

``replay_partition`` hands every batch of the partition's log, from its start, to ``take(batch, pos)`` (``pos``: the
first offset not yet taken, so a batch the previous chunk already covered in part is only taken from there), a
chunk of ``LOAD_CHUNK`` bytes per turn of the event loop, so that the broker keeps serving everyone else while a
large partition loads. The group and the transaction coordinators differ only in what they do with a batch.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from kraftwire.records import read_batches

#: bytes of the partition replayed per turn of the event loop while a shard loads
LOAD_CHUNK = 1 << 20


async def replay_partition(lg, still_current: Callable[[], bool], take: Callable[[object, int], None]) -> int | None:
    """Replay ``lg`` from its start into ``take``; the offset after the last batch taken, or None when
    ``still_current()`` turned False meanwhile (the leadership moved on: the shard is dropped)."""
    pos = lg.start_offset()
    while still_current() and pos < lg.end_offset():
        info = lg.read(pos, LOAD_CHUNK)
        if not len(info.records):
            break
        for batch in read_batches(info.records):
            if batch.last_offset < pos:
                continue
            take(batch, pos)
            pos = batch.last_offset + 1
        await asyncio.sleep(0)  # let the loop serve everyone else between chunks
    return pos if still_current() else None


def coordinator_of(image, topic: str, key: str, listener: str):
    """FindCoordinator's (error, message, node id, host, port) for ``key`` of the internal ``topic``: the leader of
    the partition Kafka's hash picks, at its endpoint on ``listener``; None while the topic does not exist."""
    from kraftwire import error_codes as ec
    from kraftwire.coordinator.partitioning import partition_for
    from kraftwire.metadata import answers

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
    import logging

    from kraftwire import error_codes as ec
    from kraftwire.protocol import messages as w

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
