"""The share-group admin APIs (KIP-932) at the edge: DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91),
DeleteShareGroupOffsets (92) and the share step of DeleteGroups — thin glue between the group coordinator's
decisions (``coordinator.group.share_admin``) and the share coordinator's state (``ShareApis.state_all``).

The checks before the coordinator are ``KafkaApis``': ``share.version`` 1 or above (UNSUPPORTED_VERSION), the group
ACL (DESCRIBE to describe, READ to alter, DELETE to delete offsets: GROUP_AUTHORIZATION_FAILED), then per topic
(DESCRIBE to describe, READ to alter or delete: TOPIC_AUTHORIZATION_FAILED for that topic alone; an altered topic
the metadata does not hold is UNKNOWN_TOPIC_OR_PARTITION before the coordinator sees it).

Describing named topics asks the share coordinator directly (Kafka's service does not consult the group shard);
describing all of them (null topics) reads the group's initialized partitions first. The lag needs each
partition's latest offset: this broker's log when it leads the partition, else a ListOffsets to its leader.
"""

from __future__ import annotations

import asyncio
import logging

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.share_admin import lag_wanted, offsets_from_summaries
from kraftwire.ids import ZERO_UUID
from kraftwire.metadata.features import share_groups_enabled
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.runtime.clocks import wall_ms as _now_ms

log = logging.getLogger("kraftwire.share")

#: Kafka's default messages this edge answers that ``error_codes`` does not hold
MESSAGES = {ec.UNSUPPORTED_VERSION: "The version of API is not supported."}
LIST_OFFSETS_VERSION = 6
LATEST_TIMESTAMP = -1
LIST_OFFSETS_TIMEOUT_S = 5.0


class ShareAdminApis:
    def __init__(self, share_apis) -> None:
        self.share = share_apis
        self.node, self.md, self.groups = share_apis.node, share_apis.md, share_apis.groups
        self._tasks: set[asyncio.Task] = set()

    def register(self) -> None:
        d = self.node.dispatcher
        d.serve("DescribeShareGroupOffsets", self._spawning(self.describe_offsets))
        d.serve("AlterShareGroupOffsets", self._spawning(self.alter_offsets))
        d.serve("DeleteShareGroupOffsets", self._spawning(self.delete_offsets))

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def _spawning(self, handler):
        def serve(request, conn) -> None:
            self.spawn(handler(request, conn))
        return serve

    def spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("share admin request failed", exc_info=task.exception())

    # ================================================================================================ helpers
    def _allows(self, conn, kind, name: str, operation: int) -> bool:
        access = self.node.authorizer
        return access is None or access.allows(conn, kind, name, operation)

    def _lookup(self, name: str):
        topic = self.md.image.topic(name)
        return None if topic is None else (topic.id, len(topic.partitions))

    def _by_id(self, topic_id):
        for topic in self.md.image.topics.values():
            if topic.id == topic_id:
                return topic.name, len(topic.partitions)
        return None

    async def _write(self, p: int, result) -> int:
        """The group shard's records appended and committed (its replies sent): the write's error, 0 when none."""
        future = asyncio.get_running_loop().create_future()
        self.groups._write(p, result, lambda error: future.done() or future.set_result(error or 0))
        return await future

    async def _latest(self, keys: set) -> dict:
        """(topic id, partition) -> the partition's latest offset (its high watermark, Kafka's LATEST), or (error
        code, message) — from this broker's log when it leads, else from the leader by ListOffsets."""
        out: dict = {}
        remote: dict = {}
        for tid, index in keys:
            found = self._by_id(tid)
            hp = self.share.replicas.get_by_id(tid, index)
            if hp is not None and not hp.failed and not hp.state.epoch_error(-1, leader_only=True):
                out[(tid, index)] = hp.log.high_watermark()
            elif found is None:
                out[(tid, index)] = (ec.UNKNOWN_TOPIC_OR_PARTITION, ec.default_message(ec.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                reg = self.md.image.topic(found[0]).partitions.get(index)
                leader = -1 if reg is None else reg.leader
                remote.setdefault(leader, []).append((tid, found[0], index))
        for leader, parts in remote.items():
            out.update(await self._list_latest(leader, parts))
        return out

    async def _list_latest(self, leader: int, parts: list) -> dict:
        R = w.ListOffsetsRequest
        names = {name: tid for tid, name, _ in parts}
        by_name: dict = {}
        for _tid, name, index in parts:
            by_name.setdefault(name, []).append(R.ListOffsetsPartition(partition_index=index, current_leader_epoch=-1,
                                                                       timestamp=LATEST_TIMESTAMP))
        body = R(replica_id=-1, isolation_level=0, topics=[R.ListOffsetsTopic(name=n, partitions=ps)
                                                           for n, ps in by_name.items()])
        unavailable = (ec.LEADER_NOT_AVAILABLE, ec.default_message(ec.LEADER_NOT_AVAILABLE))
        if leader < 0:
            return {(tid, index): unavailable for tid, _n, index in parts}
        try:
            answer = await self.share.fetching.links.request(
                leader,
                lambda conn, _prepared: conn.request(body, LIST_OFFSETS_VERSION, timeout=LIST_OFFSETS_TIMEOUT_S))
        except Exception as exc:  # noqa: BLE001 - an unreachable leader: that partition's error, not the request's
            log.info("ListOffsets to %d for share lag: %s", leader, exc)
            return {(tid, index): unavailable for tid, _n, index in parts}
        out = {}
        for topic in answer.topics:
            for p in topic.partitions:
                key = (names.get(topic.name), p.partition_index)
                out[key] = (p.offset if not p.error_code else (p.error_code, ec.default_message(p.error_code)))
        return out

    # ================================================================================================ describe
    async def describe_offsets(self, request, conn) -> None:
        R = w.DescribeShareGroupOffsetsResponse
        enabled = share_groups_enabled(self.md.image.features)
        out = []
        for group in request.body.groups:
            if not enabled:
                out.append(R.DescribeShareGroupOffsetsResponseGroup(group_id=group.group_id, topics=[],
                                                                    error_code=ec.UNSUPPORTED_VERSION))
            elif not self._allows(conn, ResourceType.GROUP, group.group_id, Op.DESCRIBE):
                out.append(R.DescribeShareGroupOffsetsResponseGroup(group_id=group.group_id, topics=[],
                                                                    error_code=ec.GROUP_AUTHORIZATION_FAILED))
            else:
                out.append(await self._describe_group(group, conn))
        conn.send_response(R(throttle_time_ms=0, groups=out), request.version, request.header.correlation_id)

    async def _describe_group(self, group, conn):
        R = w.DescribeShareGroupOffsetsResponse
        gid = group.group_id
        P, T = R.DescribeShareGroupOffsetsResponsePartition, R.DescribeShareGroupOffsetsResponseTopic
        if group.topics is None:  # every initialized partition; then only the topics the principal may describe
            _p, shard = self.groups._route(gid)
            if shard is None:
                code = self.groups.route_error
                return R.DescribeShareGroupOffsetsResponseGroup(group_id=gid, topics=[], error_code=code,
                                                                error_message=ec.default_message(code))
            wanted = {}
            for tid, parts in shard.share_initialized_partitions(gid).items():
                found = self._by_id(tid)
                if found is not None:
                    wanted[tid] = (found[0], sorted(parts))
            topics = await self._summaries(gid, wanted)
            topics = [t for t in topics if self._allows(conn, ResourceType.TOPIC, t.topic_name, Op.DESCRIBE)]
            return R.DescribeShareGroupOffsetsResponseGroup(group_id=gid, topics=topics, error_code=0)
        wanted, missing, denied = {}, [], []
        for topic in group.topics:
            if not self._allows(conn, ResourceType.TOPIC, topic.topic_name, Op.DESCRIBE):
                code = ec.TOPIC_AUTHORIZATION_FAILED
                denied.append(T(topic_name=topic.topic_name, topic_id=ZERO_UUID, partitions=[
                    P(partition_index=p, start_offset=-1, leader_epoch=0, error_code=code,
                      error_message=ec.default_message(code)) for p in topic.partitions]))
                continue
            found = self._lookup(topic.topic_name)
            if found is None:  # absence of data, not an error (as OffsetFetch)
                missing.append(T(topic_name=topic.topic_name, topic_id=ZERO_UUID, partitions=[
                    P(partition_index=p, start_offset=-1, leader_epoch=0, error_code=0) for p in topic.partitions]))
            else:
                wanted[found[0]] = (topic.topic_name, list(topic.partitions))
        topics = await self._summaries(gid, wanted) if wanted else []
        return R.DescribeShareGroupOffsetsResponseGroup(group_id=gid, topics=topics + missing + denied, error_code=0)

    async def _summaries(self, gid: str, wanted: dict) -> list:
        """ReadShareGroupStateSummary of ``wanted`` (topic id -> (name, partitions)) and the answer's topics."""
        if not wanted:
            return []
        Q = w.ReadShareGroupStateSummaryRequest
        body = Q(group_id=gid, topics=[Q.ReadStateSummaryData(topic_id=tid, partitions=[
            Q.PartitionData(partition=p, leader_epoch=0) for p in parts]) for tid, (_name, parts) in wanted.items()])
        answer = await self.share.state_all("ReadShareGroupStateSummary", 1, body)
        keys = {(t.topic_id, p.partition) for t in answer.results for p in t.partitions if lag_wanted(p)}
        latest = await self._latest(keys) if keys else {}
        return offsets_from_summaries(answer.results, {tid: name for tid, (name, _) in wanted.items()}, latest)

    # ================================================================================================ alter
    async def alter_offsets(self, request, conn) -> None:
        R = w.AlterShareGroupOffsetsResponse
        body, version, cid = request.body, request.version, request.header.correlation_id
        refuse = _refuser(R, request, conn)

        if not share_groups_enabled(self.md.image.features):
            return refuse(ec.UNSUPPORTED_VERSION)
        gid = body.group_id
        if not self._allows(conn, ResourceType.GROUP, gid, Op.READ):
            return refuse(ec.GROUP_AUTHORIZATION_FAILED)
        merged: dict = {}  # topic name -> response topic, in the order first seen (Kafka's builder)
        passed = []
        for topic in body.topics:
            found = self._lookup(topic.topic_name)
            if not self._allows(conn, ResourceType.TOPIC, topic.topic_name, Op.READ):
                code = ec.TOPIC_AUTHORIZATION_FAILED
            elif found is None:
                code = ec.UNKNOWN_TOPIC_OR_PARTITION
            else:
                passed.append(topic)
                continue
            t = merged.setdefault(topic.topic_name, R.AlterShareGroupOffsetsResponseTopic(
                topic_name=topic.topic_name, topic_id=found[0] if found else ZERO_UUID, partitions=[]))
            t.partitions.extend(R.AlterShareGroupOffsetsResponsePartition(
                partition_index=p.partition_index, error_code=code, error_message=ec.default_message(code))
                for p in topic.partitions)
        if not gid:
            return refuse(ec.INVALID_GROUP_ID)
        p, shard = self.groups._route(gid)
        if shard is None:
            return refuse(self.groups.route_error)
        result, answer, init = shard.share_alter_offsets(gid, passed, self._lookup, _now_ms())
        error = await self._write(p, result)
        if error:
            return refuse(error)
        if answer.error_code:
            return refuse(answer.error_code, answer.error_message)
        failed = await self._initialize(p, init) if init is not None else {}
        for topic in answer.responses:
            t = merged.setdefault(topic.topic_name, R.AlterShareGroupOffsetsResponseTopic(
                topic_name=topic.topic_name, topic_id=topic.topic_id, partitions=[]))
            for part in topic.partitions:
                code, message = failed.get((topic.topic_id, part.partition_index), (part.error_code,
                                                                                     part.error_message))
                t.partitions.append(R.AlterShareGroupOffsetsResponsePartition(
                    partition_index=part.partition_index, error_code=code, error_message=message))
        conn.send_response(R(throttle_time_ms=0, error_code=0, responses=list(merged.values())), version, cid)

    async def _initialize(self, p: int, init) -> dict:
        """The altered start offsets initialized by the share coordinator: those initialized become so in the group;
        the failed ones are returned, (topic id, partition) -> (code, message)."""
        answer = await self.share.state_all("InitializeShareGroupState", 0, init.body())
        done, failed = {}, {}
        for topic in answer.results:
            for part in topic.partitions:
                if part.error_code:
                    failed[(topic.topic_id, part.partition)] = (part.error_code, part.error_message)
                else:
                    done.setdefault(topic.topic_id, []).append(part.partition)
        if failed:
            by_topic: dict = {}
            for tid, index in failed:
                by_topic.setdefault(tid, []).append(index)
            self.share._initialized(p, init.group_id, {}, by_topic)
        if done:
            self.share._initialized(p, init.group_id, done, {})
        return failed

    # ================================================================================================ delete offsets
    async def delete_offsets(self, request, conn) -> None:
        R = w.DeleteShareGroupOffsetsResponse
        body, version, cid = request.body, request.version, request.header.correlation_id
        refuse = _refuser(R, request, conn)

        if not share_groups_enabled(self.md.image.features):
            return refuse(ec.UNSUPPORTED_VERSION)
        gid = body.group_id
        if not self._allows(conn, ResourceType.GROUP, gid, Op.DELETE):
            return refuse(ec.GROUP_AUTHORIZATION_FAILED)
        T = R.DeleteShareGroupOffsetsResponseTopic
        denied, names = [], []
        for topic in body.topics:
            if self._allows(conn, ResourceType.TOPIC, topic.topic_name, Op.READ):
                names.append(topic.topic_name)
            else:
                code = ec.TOPIC_AUTHORIZATION_FAILED
                denied.append(T(topic_name=topic.topic_name, topic_id=ZERO_UUID, error_code=code,
                                error_message=ec.default_message(code)))
        if not gid:
            return refuse(ec.INVALID_GROUP_ID)
        p, shard = self.groups._route(gid)
        if shard is None:
            return refuse(self.groups.route_error)
        result, decided = shard.share_delete_offsets(gid, names, self._lookup)
        error = await self._write(p, result)
        if error or decided.error:
            return refuse(*(decided.error or (error,)))
        refused, deleted = list(decided.refused), {}
        if decided.delete:
            Q = w.DeleteShareGroupStateRequest
            answer = await self.share.state_all("DeleteShareGroupState", 0, Q(group_id=gid, topics=[
                Q.DeleteStateData(topic_id=tid, partitions=[Q.PartitionData(partition=i) for i in parts])
                for tid, parts in decided.delete.items()]))
            for topic in answer.results:
                name = (self._by_id(topic.topic_id) or (None, 0))[0]
                bad = next((part.error_code for part in topic.partitions if part.error_code), 0)
                if bad:
                    refused.append(T(topic_name=name, topic_id=topic.topic_id, error_code=bad,
                                     error_message=ec.default_message(bad)))
                else:
                    deleted[topic.topic_id] = name
        answers = []
        if deleted:
            _p, shard = self.groups._route(gid)
            if shard is None:
                return refuse(self.groups.route_error)
            result, answers = shard.share_offsets_deleted(gid, deleted)
            error = await self._write(p, result)
            if error:
                return refuse(error)
        conn.send_response(R(throttle_time_ms=0, error_code=0, responses=denied + answers + refused), version, cid)

    # ================================================================================================ DeleteGroups
    async def delete_share_groups(self, group_ids: list[str]) -> dict[str, int]:
        """DeleteGroups' share step (before the usual deletion): each empty share group's partitions move to deleting
        and their state is deleted by the share coordinator. Returns the groups that must not be deleted now, with
        their error (NON_EMPTY_GROUP, or the share coordinator's first error)."""
        errors: dict[str, int] = {}
        Q = w.DeleteShareGroupStateRequest
        for gid in group_ids:
            p, shard = self.groups._route(gid)
            if shard is None or gid not in shard.share_groups:
                continue
            result, code, delete = shard.share_group_deletion(gid, self._by_id)
            if code:
                errors[gid] = code
                continue
            error = await self._write(p, result)
            if error:
                errors[gid] = error
                continue
            if not delete:
                continue
            answer = await self.share.state_all("DeleteShareGroupState", 0, Q(group_id=gid, topics=[
                Q.DeleteStateData(topic_id=tid, partitions=[Q.PartitionData(partition=i) for i in parts])
                for tid, parts in delete.items()]))
            bad = next((part.error_code for t in answer.results for part in t.partitions if part.error_code), 0)
            if bad:
                log.info("share group %s: its share state not deleted (%s), the group stays", gid, bad)
                errors[gid] = bad
        return errors


def _refuser(R, request, conn):
    """The whole-request refusal of Alter/DeleteShareGroupOffsets: ``refuse(code, message=None)`` answers the code
    with the message given, else the code's default, and no topics."""
    def refuse(code: int, message: str | None = None) -> None:
        conn.send_response(R(throttle_time_ms=0, error_code=code, error_message=message or _message(code),
                             responses=[]), request.version, request.header.correlation_id)

    return refuse


def _message(code: int) -> str | None:
    return ec.default_message(code) or MESSAGES.get(code)
