"""NOT_COORDINATOR: every group and transaction request sent to a node of the "three-node" pair that is not the
coordinator of its group or transactional id (:class:`conformance.runner.NotCoordinator`: each side's own
coordinator, found with FindCoordinator, is avoided on that side), at every version both serve. The node answers
without looking further, so the requests are otherwise valid and name no state."""

from __future__ import annotations

from dataclasses import replace

from conformance.data_steps import (
    A, G, add_offsets, add_partitions, commit, describe_groups, end_txn, heartbeat, init_producer_id, join, leave,
    offset_fetch, sync, txn_offset_commit)
from conformance.runner import NotCoordinator, Step, each_version
from conformance.scenarios.three_node import CONFIG, placed

from kraftwire.protocol import messages as w

T = "{ns}.t"
#: the topic the offset requests name: placed on broker 1 (an answer names no replicas, but Kafka checks that a
#: committed topic exists before it asks the coordinator)
TOPIC = placed(A, (0, [1]))


def elsewhere(step: Step, key: str = G, key_type: int = 0) -> Step:
    """``step`` sent, on each side, to a node that does not coordinate ``key`` (no ``until``: its answer is the
    point, not a coordinator's readiness)."""
    return replace(step, node=NotCoordinator(key, key_type), until=None)


def txn(step: Step) -> Step:
    return elsewhere(step, T, 1)


CH, CD = w.ConsumerGroupHeartbeatRequest, w.ConsumerGroupDescribeRequest
#: per API, function(version) -> the steps
CASES = {
    "JoinGroup": lambda v: [elsewhere(join(v, member_id="{ns}-m"))],
    "SyncGroup": lambda v: [elsewhere(sync(v, generation=1, member_id="{ns}-m", assign=False))],
    "Heartbeat": lambda v: [elsewhere(heartbeat(v, generation=1, member_id="{ns}-m"))],
    "LeaveGroup": lambda v: [elsewhere(leave(v, G, "{ns}-m"))],
    "DescribeGroups": lambda v: [elsewhere(describe_groups(v, G))],
    "DeleteGroups": lambda v: [elsewhere(Step(w.DeleteGroupsRequest(groups_names=[G]), v))],
    "OffsetCommit": lambda v: [*TOPIC, elsewhere(commit(v, (A, 0, 1)))],
    "OffsetFetch": lambda v: [*TOPIC, elsewhere(offset_fetch(v, (A, [0])))],
    "OffsetDelete": lambda v: [*TOPIC, elsewhere(Step(w.OffsetDeleteRequest(group_id=G, topics=[
        w.OffsetDeleteRequest.OffsetDeleteRequestTopic(name=A, partitions=[
            w.OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=0)])]), v))],
    "ConsumerGroupHeartbeat": lambda v: [elsewhere(Step(CH(
        group_id=G, member_id="{ns}-m", member_epoch=0, rebalance_timeout_ms=3000, subscribed_topic_names=[A],
        topic_partitions=[]), v))],
    "ConsumerGroupDescribe": lambda v: [elsewhere(Step(CD(group_ids=[G], include_authorized_operations=False), v))],
    "TxnOffsetCommit": lambda v: [*TOPIC, elsewhere(txn_offset_commit(v, (A, 0, 1), producer_id=1000, epoch=0))],
    "InitProducerId": lambda v: [txn(init_producer_id(v, T))],
    "AddPartitionsToTxn": lambda v: [*TOPIC, txn(add_partitions(v, (A, [0]), producer_id=1000, epoch=0,
                                                                verify_only=v >= 4))],
    "AddOffsetsToTxn": lambda v: [txn(add_offsets(v, producer_id=1000, epoch=0))],
    "EndTxn": lambda v: [txn(end_txn(v, producer_id=1000, epoch=0))],
}

SCENARIOS = [scenario for api, make in CASES.items()
             for scenario in each_version(api, {"not-coordinator": make}, config=CONFIG)]
