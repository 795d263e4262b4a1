"""A share-group consumer (KIP-932) on kraftwire's own protocol client, for ``console-share-consumer``: it joins the
group (ShareGroupHeartbeat with a member id of its own, as Kafka's ``KafkaShareConsumer``), fetches its assigned
partitions from their leaders in share sessions (ShareFetch, epoch 0 opens, +1 each request) and acknowledges every
record it delivered (ACCEPT, RELEASE or REJECT), piggy-backed on the next ShareFetch; closing acknowledges what is left
and ends each session (ShareAcknowledge at epoch -1), then leaves the group (member epoch -1).

Only the records of the acquired ranges are delivered (a fetched batch may hold others), each with its delivery
count. ``Acks`` is the pure part: the acknowledgement batches of a partition, consecutive offsets of one type merged
into one batch as Kafka's client sends them.
"""

from __future__ import annotations

import asyncio
import base64
import time
import uuid
from typing import NamedTuple

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w

ACCEPT, RELEASE, REJECT = 1, 2, 3
ACK_TYPES = {"accept": ACCEPT, "release": RELEASE, "reject": REJECT}
FETCH_WAIT_MS = 500
MAX_RECORDS = 500
CLOSE_EPOCH = -1


class Delivery(NamedTuple):
    """One record as the consumer hands it out."""

    topic: str
    topic_id: uuid.UUID
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: list
    delivery_count: int


class Acks:
    """The acknowledgements a partition owes: offset ranges, each with one type, in the order given."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []  # [first, last, type]

    def add(self, offset: int, kind: int) -> None:
        last = self.batches[-1] if self.batches else None
        if last is not None and last[1] + 1 == offset and last[2] == kind:
            last[1] = offset
        else:
            self.batches.append([offset, offset, kind])

    def take(self) -> list[tuple[int, int, int]]:
        out, self.batches = [tuple(b) for b in self.batches], []
        return out


def deliveries(topic: str, topic_id, partition: int, data, records: bytes | None) -> list[Delivery]:
    """The records of ``records`` inside the partition's acquired ranges (``data.acquired_records``), with their
    delivery counts, in offset order."""
    from kraftwire.records import read_batches

    ranges = [(r.first_offset, r.last_offset, r.delivery_count) for r in data.acquired_records]
    if not records or not ranges:
        return []
    out = []
    for batch in read_batches(records):
        if batch.is_control:
            continue
        for rec in batch:
            count = next((c for first, last, c in ranges if first <= rec.offset <= last), None)
            if count is not None:
                out.append(Delivery(topic, topic_id, partition, rec.offset, rec.timestamp, batch.timestamp_type,
                                    rec.key, rec.value, list(rec.headers), count))
    return out


def member_id() -> str:
    """A member id as Kafka's client makes one: a random UUID in URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class ShareConsumer:
    def __init__(self, admin, group: str, topic: str, timeout_s: float) -> None:
        self.admin, self.group, self.topic, self.timeout = admin, group, topic, timeout_s
        self.member_id, self.epoch = member_id(), 0
        self.assigned: dict = {}  # topic id -> partitions
        self.next_beat = 0.0
        self.interval_s = 5.0
        self.sessions: dict[int, int] = {}  # leader -> next share session epoch
        self.acks: dict[tuple[int, int], Acks] = {}  # (topic id, partition) -> acknowledgements owed
        self.names: dict = {}
        self.leaders: dict = {}

    async def heartbeat(self, leaving: bool = False) -> None:
        body = w.ShareGroupHeartbeatRequest(
            group_id=self.group, member_id=self.member_id, member_epoch=CLOSE_EPOCH if leaving else self.epoch,
            rack_id=None, subscribed_topic_names=[self.topic] if self.epoch == 0 and not leaving else None)
        error, answer = await self.admin.on_coordinator(self.group, body, 1, lambda a: a.error_code)
        if error:
            raise ConsumerError(f"{ec.java_exception(error)}" + (f" ({answer.error_message})"
                                                                 if answer is not None and answer.error_message
                                                                 else ""))
        if leaving:
            return
        self.epoch = answer.member_epoch
        self.interval_s = max(answer.heartbeat_interval_ms, 100) / 1000
        self.next_beat = time.monotonic() + self.interval_s
        if answer.assignment is not None:
            self.assigned = {tp.topic_id: sorted(tp.partitions) for tp in answer.assignment.topic_partitions}
            await self._locate()

    async def _locate(self) -> None:
        md = await self.admin.metadata([self.topic])
        for t in md.topics:
            self.names[t.topic_id] = t.name
            for p in t.partitions:
                self.leaders[(t.topic_id, p.partition_index)] = p.leader_id

    async def poll(self) -> list[Delivery]:
        """One round: a heartbeat when due, then a ShareFetch to each leader of the assignment (acknowledging what
        was delivered since); the records delivered."""
        if time.monotonic() >= self.next_beat:
            await self.heartbeat()
        by_leader: dict[int, list[tuple]] = {}
        for tid, parts in self.assigned.items():
            for p in parts:
                by_leader.setdefault(self.leaders.get((tid, p), -1), []).append((tid, p))
        by_leader.pop(-1, None)
        if not by_leader:
            await asyncio.sleep(FETCH_WAIT_MS / 1000)
            return []
        out: list[Delivery] = []
        for leader, keys in by_leader.items():
            out.extend(await self._fetch(leader, keys))
        return out

    def _epoch(self, leader: int) -> int:
        epoch = self.sessions.get(leader, 0)
        self.sessions[leader] = epoch + 1 if epoch < 2 ** 31 - 1 else 1
        return epoch

    async def _fetch(self, leader: int, keys: list) -> list[Delivery]:
        F = w.ShareFetchRequest
        topics: dict = {}
        for tid, p in keys:
            owed = self.acks.get((tid, p))
            topics.setdefault(tid, []).append(F.FetchPartition(partition_index=p, acknowledgement_batches=[
                F.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=[k])
                for f, last, k in (owed.take() if owed else [])]))
        body = F(group_id=self.group, member_id=self.member_id, share_session_epoch=self._epoch(leader),
                 max_wait_ms=FETCH_WAIT_MS, min_bytes=1, max_bytes=1 << 20, max_records=MAX_RECORDS,
                 batch_size=MAX_RECORDS, topics=[F.FetchTopic(topic_id=t, partitions=ps) for t, ps in topics.items()],
                 forgotten_topics_data=[])
        answer = await (await self.admin.broker(leader)).request(body, 1, timeout=self.timeout + FETCH_WAIT_MS / 1000)
        if answer.error_code:
            self.sessions.pop(leader, None)  # a refused session: the next request opens a new one
            if answer.error_code in (ec.SHARE_SESSION_NOT_FOUND, ec.INVALID_SHARE_SESSION_EPOCH):
                return []
            raise ConsumerError(ec.java_exception(answer.error_code))
        out = []
        for t in answer.responses:
            for p in t.partitions:
                if p.error_code in (ec.NOT_LEADER_OR_FOLLOWER, ec.UNKNOWN_TOPIC_OR_PARTITION):
                    await self._locate()
                    continue
                out.extend(deliveries(self.names.get(t.topic_id, self.topic), t.topic_id, p.partition_index, p,
                                      p.records))
        return out

    def acknowledge(self, d: Delivery, kind: int) -> None:
        self.acks.setdefault((d.topic_id, d.partition), Acks()).add(d.offset, kind)

    async def close(self) -> None:
        """What is owed acknowledged and each session ended (ShareAcknowledge at epoch -1), then the group left."""
        A = w.ShareAcknowledgeRequest
        for leader in list(self.sessions):
            topics: dict = {}
            for (tid, p), owed in self.acks.items():
                if self.leaders.get((tid, p)) == leader:
                    batches = owed.take()
                    if batches:
                        topics.setdefault(tid, []).append(A.AcknowledgePartition(
                            partition_index=p, acknowledgement_batches=[
                                A.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=[k])
                                for f, last, k in batches]))
            body = A(group_id=self.group, member_id=self.member_id, share_session_epoch=CLOSE_EPOCH,
                     topics=[A.AcknowledgeTopic(topic_id=t, partitions=ps) for t, ps in topics.items()])
            try:
                await (await self.admin.broker(leader)).request(body, 1, timeout=self.timeout)
            except (OSError, asyncio.TimeoutError):
                pass  # the session ends with the connection anyway
        self.sessions.clear()
        if self.epoch:
            await self.heartbeat(leaving=True)


class ConsumerError(Exception):
    pass
