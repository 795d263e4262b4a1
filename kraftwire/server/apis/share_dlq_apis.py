"""A share group's dead-letter queue on the partition leader (KIP-1191, ``share.version`` 2): the asyncio edge of
``kraftwire.replica.share_dlq``, as Kafka 4.4's ``ShareGroupDLQStateManager`` does it.

A run of ARCHIVING records (``SharePartition.dead_letters``) is checked against the group's and the cluster's DLQ
configs (``share_dlq.refusal``); a missing topic is created through the controller (CreateTopics, the broker's
default partitions and replication factor, ``errors.deadletterqueue.group.enable=true``); the original records are
read from this leader's log when the group copies them; the DLQ records are produced (acks=all, uncompressed, within
the DLQ topic's ``max.message.bytes``) to the leader of partition ``source partition % partitions`` over the
inter-broker links — this broker's own listener when it leads it. NOT_LEADER_OR_FOLLOWER, an unreachable leader and
a timeout are retried up to five times, backing off 1 s doubling to 30 s (with ±20 % jitter), as Kafka's; anything
else ends the write. ``write`` raises :class:`DeadLetterError` with why; the caller archives the records either way.
"""

from __future__ import annotations

import asyncio
import logging
import random

from kraftwire import error_codes as ec
from kraftwire.metadata.group_configs import DLQ_TOPIC, GROUP as GROUP_CONFIGS
from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from kraftwire.replica import share_dlq
from kraftwire.replica.share_partition import DeadLetter
from kraftwire.server.edge.broker_links import BrokerLinks
from kraftwire.server.runtime.clocks import wall_ms as _now_ms

log = logging.getLogger("kraftwire.share")

TOPIC_CONFIGS = 2  # ConfigResource.Type.TOPIC
PRODUCE_VERSION = 12  # topics by name
ATTEMPTS, BACKOFF_S, BACKOFF_MAX_S, JITTER = 5, 1.0, 30.0, 0.2
REQUEST_TIMEOUT_MS = 30_000
#: how long a created DLQ topic may take to appear with a leader for every partition
TOPIC_WAIT_S = 10.0
_RETRIABLE = (ec.NOT_LEADER_OR_FOLLOWER, ec.REQUEST_TIMED_OUT, ec.NETWORK_EXCEPTION)


class DeadLetterError(Exception):
    """Why a DLQ write did not happen (Kafka's ConfigException message, or the produce's error)."""


class DeadLetterWriter:
    def __init__(self, node, metadata, replicas, kraft) -> None:
        self.node, self.md, self.replicas, self.kraft = node, metadata, replicas, kraft
        self.links = BrokerLinks(node, "share-group-dlq")
        self._rng = random.Random()

    async def close(self) -> None:
        await self.links.close()

    async def write(self, group_id: str, topic_id, partition: int, letter: DeadLetter) -> None:
        image = self.md.image
        group = image.configs.get((GROUP_CONFIGS, group_id), {})
        name = group.get(DLQ_TOPIC)
        configs = self.replicas.broker_configs()
        topic = image.topic(name) if name else None
        topic_configs = self.topic_configs(name) if topic else {}
        why = share_dlq.refusal(group_id, name, prefix=configs.value(share_dlq.PREFIX), topic_exists=topic is not None,
                                topic_configs=topic_configs, auto_create=configs.value(share_dlq.AUTO_CREATE))
        if why:
            raise DeadLetterError(why)
        if topic is None:
            await self._create(name)
            topic_configs = self.topic_configs(name)
        source = next((t.name for t in image.topics.values() if t.id == topic_id), str(topic_id))
        originals = None
        if share_dlq.copies_records(group):
            originals = self._originals(topic_id, partition, letter)
        records = share_dlq.dead_letter_records(
            group_id=group_id, topic=source, partition=partition, first_offset=letter.first_offset,
            last_offset=letter.last_offset, delivery_count=letter.delivery_count, cause=letter.cause,
            originals=originals)
        max_bytes = int(topic_configs.get("max.message.bytes") or configs.value("message.max.bytes") or 1048588)
        meters = self.node.share_meters
        for count, batch in share_dlq.batches(records, _now_ms(), max_bytes):
            try:
                await self._produce(group_id, name, partition, batch)
            except DeadLetterError:
                meters.dead_letters(group_id, meters.FAILED)
                raise
            meters.dead_letters(group_id, meters.RECORDS, count)

    def topic_configs(self, name: str) -> dict:
        """The DLQ topic's effective configs (its own over the broker's defaults), as the image has them."""
        return self.replicas.broker_configs().topic_config(self.md.image.configs.get((TOPIC_CONFIGS, name), {}))

    async def _create(self, name: str) -> None:
        """CreateTopics of the DLQ topic through the controller; TOPIC_ALREADY_EXISTS (another leader was first) is
        as good. Then wait until every partition has a leader in this broker's image."""
        CT = w.CreateTopicsRequest
        body = CT(topics=[CT.CreatableTopic(
            name=name, num_partitions=-1, replication_factor=-1, assignments=[],
            configs=[CT.CreatableTopicConfig(name=k, value=v) for k, v in share_dlq.CREATED_TOPIC_CONFIGS])],
            timeout_ms=REQUEST_TIMEOUT_MS, validate_only=False)
        answered = asyncio.get_running_loop().create_future()
        self.kraft.call("CreateTopics", body, 7, lambda r: answered.done() or answered.set_result(r))
        result = (await answered).topics[0]
        if result.error_code not in (ec.NONE, ec.TOPIC_ALREADY_EXISTS):
            raise DeadLetterError(f"Unable to create DLQ topic {name}: {ec.name_of(result.error_code)} "
                                  f"({result.error_message})")
        log.info("created dead-letter topic %s", name)
        await self._led(name)

    async def _led(self, name: str):
        deadline = asyncio.get_running_loop().time() + TOPIC_WAIT_S
        while True:
            topic = self.md.image.topic(name)
            if topic is not None and topic.partitions and all(p.leader >= 0 for p in topic.partitions.values()):
                return topic
            if asyncio.get_running_loop().time() >= deadline:
                raise DeadLetterError(f"DLQ topic partition leaders for topic {name} could not be found.")
            await asyncio.sleep(0.05)

    def _originals(self, topic_id, partition: int, letter: DeadLetter) -> dict:
        """The original records' keys and values, read from this leader's log (what it no longer has is left
        out)."""
        hp = self.replicas.get_by_id(topic_id, partition)
        if hp is None:
            return {}
        out: dict = {}
        offset = max(letter.first_offset, hp.log.start_offset())
        while offset <= letter.last_offset:
            data = bytes(hp.log.read(offset, share_dlq.DLQ_MAX_FETCH_BYTES).records)  # whole batches
            read = list(read_batches(data, validate=False))
            if not read:
                break
            out.update(share_dlq.copy_records(read, letter.first_offset, letter.last_offset))
            offset = read[-1].last_offset + 1
        return out

    async def _produce(self, group_id: str, name: str, source_partition: int, batch: bytes) -> None:
        """One DLQ batch produced, retried as Kafka's writer retries; each request sent counts in the group's
        DeadLetterQueueTotalProduceRequestsPerSec. Raises ``DeadLetterError`` when given up."""
        P = w.ProduceRequest
        meters = self.node.share_meters
        for attempt in range(1, ATTEMPTS + 1):
            topic = await self._led(name)
            index = share_dlq.destination_partition(source_partition, len(topic.partitions))
            leader = topic.partitions[index].leader
            body = P(transactional_id=None, acks=-1, timeout_ms=REQUEST_TIMEOUT_MS, topic_data=[P.TopicProduceData(
                name=name, partition_data=[P.PartitionProduceData(index=index, records=batch)])])
            meters.dead_letters(group_id, meters.PRODUCES)
            try:
                answer = await self.links.request(leader, lambda conn, _p: conn.request(
                    body, PRODUCE_VERSION, timeout=REQUEST_TIMEOUT_MS / 1000))
                part = answer.responses[0].partition_responses[0]
                code, message = part.error_code, part.error_message
            except (OSError, asyncio.TimeoutError) as exc:  # ConnectionError is an OSError
                code, message = ec.NETWORK_EXCEPTION, str(exc)
            if code == ec.NONE:
                return
            if code not in _RETRIABLE or attempt == ATTEMPTS:
                raise DeadLetterError(f"Unable to produce to DLQ topic {name}-{index}: {ec.name_of(code)}"
                                      + (f" ({message})" if message else ""))
            backoff = min(BACKOFF_S * 2 ** (attempt - 1), BACKOFF_MAX_S)
            await asyncio.sleep(backoff * self._rng.uniform(1 - JITTER, 1 + JITTER))
