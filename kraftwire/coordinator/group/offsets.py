"""Committed offsets: OffsetCommit, TxnOffsetCommit, OffsetFetch's reads and answer, and the expiry of old offsets
(Kafka's offset retention): a part of ``GroupShard``."""

from __future__ import annotations

from typing import Callable

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group.model import (COMPLETING, DEAD, EMPTY, PREPARING, STABLE, Group, OffsetEntry,
                                               Result)
from kraftwire.protocol import messages as w


#: OffsetCommit and OffsetFetch name topics by id from v10 (KIP-848): an id the metadata does not know is answered
#: UNKNOWN_TOPIC_ID for each of its partitions (an OffsetCommit's before the topic checks, among the refusals that
#: come first; an OffsetFetch's after the topics read, as Kafka 4.4 answers both)
TOPIC_IDS_SINCE = 10
#: TxnOffsetCommit names topics by id from v6 (KIP-1319), answered as OffsetCommit v10
TXN_TOPIC_IDS_SINCE = 6


def offset_fetch_response(version: int, groups: list, topic_ids=None) -> object:
    """The OffsetFetch answer for ``groups``: [(group id, error, [(topic, [(partition, entry or None)])])] — one
    group before v8 (per-partition errors before v2), a list of groups from v8. A partition may come as (partition,
    None, error) for an error of its own (UNSTABLE_OFFSET_COMMIT). From v10 each topic is answered by its id,
    ``topic_ids[topic]``."""
    R = w.OffsetFetchResponse
    ids = topic_ids or {}

    def perr(item, default: int = 0) -> int:
        return item[2] if len(item) > 2 else default

    def value(e):
        return (-1, -1, "") if e is None else (e.offset, e.leader_epoch, e.metadata or "")

    if version >= 8:  # a group's own error stands alone, without its topics (NOT_COORDINATOR too, as Kafka answers)
        return R(throttle_time_ms=0, groups=[R.OffsetFetchResponseGroup(group_id=gid, error_code=err, topics=[
        ] if err else [
            R.OffsetFetchResponseTopics(name=name, topic_id=ids.get(name), partitions=[
                R.OffsetFetchResponsePartitions(
                    partition_index=i, committed_offset=value(e)[0], committed_leader_epoch=value(e)[1],
                    metadata=value(e)[2], error_code=perr(item)) for item in parts for i, e in [item[:2]]])
                for name, parts in topics]) for gid, err, topics in groups])
    _gid, err, topics = groups[0]
    if err and version >= 2:
        return R(throttle_time_ms=0, error_code=err, topics=[])
    return R(throttle_time_ms=0, error_code=0, topics=[R.OffsetFetchResponseTopic(name=name, partitions=[
        R.OffsetFetchResponsePartition(partition_index=i, committed_offset=value(e)[0],
                                       committed_leader_epoch=value(e)[1], metadata=value(e)[2],
                                       error_code=err or perr(item)) for item in parts for i, e in [item[:2]]])
        for name, parts in topics])


def refused_first(order: list[tuple[str, list[int]]], refused) -> list[tuple[str, list[int]]]:
    """The topics and partitions of an OffsetCommit answer in Kafka's order: its response builder takes the
    partitions refused before the coordinator is asked (``refused``: an unauthorized topic, an unknown partition)
    first, each topic where its first refused partition puts it, then the coordinator's; ``order`` is the request's
    [(topic, [partition, ...])]."""
    def refused_in(name, idx):
        return [i for i in idx if (name, i) in refused]

    first = [(n, refused_in(n, idx) + [i for i in idx if (n, i) not in refused]) for n, idx in order
             if refused_in(n, idx)]
    return first + [(n, idx) for n, idx in order if not refused_in(n, idx)]


def fetch_requests(body, version: int) -> list:
    """[(group id, member id, member epoch, [(topic, [partition])] or None)] an OffsetFetch asks for."""
    if version >= 8:
        return [(g.group_id, g.member_id if version >= 9 else None, g.member_epoch if version >= 9 else -1,
                 None if g.topics is None else [(t.name, list(t.partition_indexes)) for t in g.topics])
                for g in body.groups]
    return [(body.group_id, None, -1,
             None if body.topics is None else [(t.name, list(t.partition_indexes)) for t in body.topics])]


def _failing(result: Result, token, api: str, response) -> Callable[[int], Result]:
    """``fail(code)`` for an offset commit refused as a whole: every partition of ``response`` (already listing each
    one) answered ``code``, and ``result`` with that reply."""
    def fail(code: int) -> Result:
        for t in response.topics:
            for p in t.partitions:
                p.error_code = code
        result.reply(token, api, response)
        return result
    return fail


class Offsets:
    """The offset requests over ``self.offsets`` / ``self.committed`` (a ``GroupShard`` mixin)."""

    def offset_commit(self, body, version: int, token, now_ms: int) -> Result:
        """OffsetCommit for topics the edge checked: ``body.topics`` lists only partitions to write; the edge merges
        the answers with its own refusals (unknown topics)."""
        result = Result()
        R = w.OffsetCommitResponse
        answer = [R.OffsetCommitResponseTopic(name=t.name, partitions=[
            R.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=0)
            for p in t.partitions]) for t in body.topics]

        fail = _failing(result, token, "OffsetCommit", R(throttle_time_ms=0, topics=answer))

        generation = body.generation_id_or_member_epoch if version >= 1 else -1
        member_id = body.member_id if version >= 1 else ""
        instance_id = body.group_instance_id if version >= 7 else None
        consumer_group = self.consumer_groups.get(body.group_id)
        g = self.groups.get(body.group_id)
        if consumer_group is not None:
            if generation < 0 and not member_id:
                if consumer_group.members:  # an admin's commit needs an empty group
                    return fail(ec.UNKNOWN_MEMBER_ID)
            else:
                cm = consumer_group.members.get(member_id)
                if cm is None:
                    return fail(ec.UNKNOWN_MEMBER_ID)
                if version < 9:
                    return fail(ec.UNSUPPORTED_VERSION)  # a consumer-protocol member commits with v9+
                if generation != cm.epoch:
                    return fail(ec.STALE_MEMBER_EPOCH)
        elif g is None:
            if generation >= 0:
                # Kafka 4.x: GROUP_ID_NOT_FOUND from v9 (it works for both protocols), ILLEGAL_GENERATION before
                return fail(ec.GROUP_ID_NOT_FOUND if version >= 9 else ec.ILLEGAL_GENERATION)
            g = self._get_or_create(body.group_id, now_ms)  # a "simple" group: offsets without membership
        else:
            code = _classic_commit_error(g, member_id, instance_id, generation)
            if code:
                return fail(code)
            if g.state in (STABLE, PREPARING):  # the commit keeps the member's session (Kafka's rule)
                m = g.members[member_id]
                m.deadline_ms = now_ms + m.session_ms
        expire = -1  # none: the group's retention applies
        if version in (2, 3, 4) and body.retention_time_ms != -1:  # Kafka: any RetentionTimeMs but -1 is one
            expire = (now_ms + body.retention_time_ms + 2**63) % 2**64 - 2**63  # a Java long: wraps, never fails
        for t, rt in zip(body.topics, answer):
            for p, rp in zip(t.partitions, rt.partitions):
                metadata = p.committed_metadata or ""
                if len(metadata.encode("utf-8")) > self.config.offset_metadata_max_bytes:
                    rp.error_code = ec.OFFSET_METADATA_TOO_LARGE
                    continue
                epoch = p.committed_leader_epoch if version >= 6 else -1
                result.records.append((cr.offset_commit_key(body.group_id, t.name, p.partition_index),
                                       cr.offset_commit_value(p.committed_offset, epoch, metadata, now_ms, expire)))
        result.reply(token, "OffsetCommit", R(throttle_time_ms=0, topics=answer))
        return result

    def txn_offset_commit(self, body, version: int, token, now_ms: int) -> Result:
        """TxnOffsetCommit for partitions the edge checked: the records are the OffsetCommit ones; the edge appends
        them as a transactional batch of the producer, and they stay pending until its marker (``complete_txn``).
        A v3+ request naming a member is checked against the group as Kafka checks it (unknown member, stale
        generation, fenced static instance)."""
        result = Result()
        R = w.TxnOffsetCommitResponse
        answer = [R.TxnOffsetCommitResponseTopic(name=t.name, partitions=[
            R.TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=0)
            for p in t.partitions]) for t in body.topics]

        fail = _failing(result, token, "TxnOffsetCommit", R(throttle_time_ms=0, topics=answer))

        if not body.group_id:
            return fail(ec.INVALID_GROUP_ID)
        generation = body.generation_id_or_member_epoch if version >= 3 else -1
        member_id = body.member_id if version >= 3 else ""
        instance_id = body.group_instance_id if version >= 3 else None
        consumer_group = self.consumer_groups.get(body.group_id)
        g = self.groups.get(body.group_id)
        if consumer_group is not None and member_id:
            cm = consumer_group.members.get(member_id)
            if cm is None:
                return fail(ec.UNKNOWN_MEMBER_ID)
            if generation >= 0 and generation != cm.epoch:
                return fail(ec.ILLEGAL_GENERATION)
        elif g is not None and g.state == DEAD:
            return fail(ec.COORDINATOR_NOT_AVAILABLE)
        elif g is not None and (member_id or generation >= 0):
            if g.fenced(member_id, instance_id):
                return fail(ec.FENCED_INSTANCE_ID)
            if member_id and member_id not in g.members:
                return fail(ec.UNKNOWN_MEMBER_ID)
            if generation >= 0 and generation != g.generation:
                return fail(ec.ILLEGAL_GENERATION)
        elif g is None and consumer_group is None:
            self._get_or_create(body.group_id, now_ms)  # Kafka creates the (simple) group for the offsets
        for t, rt in zip(body.topics, answer):
            for p, rp in zip(t.partitions, rt.partitions):
                metadata = p.committed_metadata or ""
                if len(metadata.encode("utf-8")) > self.config.offset_metadata_max_bytes:
                    rp.error_code = ec.OFFSET_METADATA_TOO_LARGE
                    continue
                epoch = p.committed_leader_epoch if version >= 2 else -1
                result.records.append((cr.offset_commit_key(body.group_id, t.name, p.partition_index),
                                       cr.offset_commit_value(p.committed_offset, epoch, metadata, now_ms, -1)))
        result.reply(token, "TxnOffsetCommit", R(throttle_time_ms=0, topics=answer))
        return result

    def fetch_error(self, group_id: str, member_id: str | None, member_epoch: int) -> int:
        """OffsetFetch v9 from a consumer-protocol member: its epoch must be current (STALE_MEMBER_EPOCH)."""
        group = self.consumer_groups.get(group_id)
        if group is None or not member_id:
            return 0
        m = group.members.get(member_id)
        if m is None:
            return ec.UNKNOWN_MEMBER_ID
        return ec.STALE_MEMBER_EPOCH if member_epoch != m.epoch else 0

    def committed_offsets(self, group_id: str, topics: list[tuple[str, list[int]]] | None
                          ) -> list[tuple[str, list[tuple[int, OffsetEntry | None]]]]:
        """OffsetFetch: the committed offsets asked for (``topics`` None: every partition the group has one for)."""
        held = self.committed.get(group_id, {})
        if topics is None:
            wanted: dict[str, list[int]] = {}
            for topic, part in held:
                wanted.setdefault(topic, []).append(part)
            topics = [(t, sorted(ps)) for t, ps in sorted(wanted.items())]
        return [(t, [(p, held.get((t, p))) for p in parts]) for t, parts in topics]

    def _expire_offsets(self, now_ms: int, result: Result) -> None:
        """Kafka's offset expiration: explicit expiry times, else ``offsets.retention.ms`` counted from when an Empty
        group became empty (from the commit for groups without membership); a group with members keeps the offsets of
        the topics it subscribes to. An Empty group left without offsets is deleted."""
        retention = self.config.offsets_retention_ms
        for group_id in sorted(self.offsets):
            g = self.groups.get(group_id)
            if g is not None and g.state not in (EMPTY, STABLE):
                continue
            subscribed = g.subscribed_topics() if g is not None and g.members else set()
            if g is not None and g.members and (g.protocol_type != "consumer" or subscribed is None):
                continue  # Kafka keeps every offset of a live non-consumer group or one it cannot read
            consumer_group = self.consumer_groups.get(group_id)
            if consumer_group is not None:  # a KIP-848 group keeps what its members subscribe to; the rest by age
                subscribed = consumer_group.subscribed_topic_names()
            expired = []
            for tp, e in self.offsets[group_id].items():
                if e.expire_timestamp != -1:
                    gone = now_ms >= e.expire_timestamp
                elif g is not None and g.state == EMPTY and g.protocol_type:
                    gone = now_ms - g.state_ms >= retention
                else:
                    gone = now_ms - e.commit_timestamp >= retention
                if gone and tp[0] not in subscribed:
                    expired.append(tp)
            for tp in sorted(expired):
                result.records.append((cr.offset_commit_key(group_id, *tp), None))
            if expired and len(expired) == len(self.offsets[group_id]) and consumer_group is None and (g is None or (
                    g.state == EMPTY and not g.members)):
                result.records.append((cr.group_metadata_key(group_id), None))
                self.groups.pop(group_id, None)


def _classic_commit_error(g: Group, member_id: str, instance_id: str | None, generation: int) -> int:
    """Why a (non-transactional) OffsetCommit into classic group ``g`` is refused, 0 if it is not; in the order of
    Kafka 4.x's group coordinator (``ClassicGroup.validateOffsetCommit``): Dead; an empty group takes a commit without
    a generation; a commit naming a member (or a generation, or an instance) needs the static instance held by that
    member, the member and its generation; one naming none needs an empty group; only then a group completing its
    rebalance answers REBALANCE_IN_PROGRESS (the member is current, it just has not synced)."""
    if g.state == DEAD:
        return ec.COORDINATOR_NOT_AVAILABLE
    if generation < 0 and g.state == EMPTY:
        return 0
    if generation >= 0 or member_id or instance_id is not None:
        if instance_id is not None:
            holder = g.static.get(instance_id)
            if holder is None:
                return ec.UNKNOWN_MEMBER_ID
            if holder != member_id:
                return ec.FENCED_INSTANCE_ID
        if member_id not in g.members:
            return ec.UNKNOWN_MEMBER_ID
        if generation != g.generation:
            return ec.ILLEGAL_GENERATION
    else:
        return ec.UNKNOWN_MEMBER_ID  # no member named, and the group has members
    return ec.REBALANCE_IN_PROGRESS if g.state == COMPLETING else 0
