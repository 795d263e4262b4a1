"""How Kafka 4.4 words and shapes the answers its ACLs refuse, as the "sasl-acl" conformance run found them
(issue #36, ``tests/conformance/scenarios/authorization.py``): the messages of items ControllerApis refuses, a created
topic's configs hidden from a principal without DESCRIBE_CONFIGS, OffsetCommit's refused partitions listed first and
OffsetDelete's unreadable topics answered TOPIC_AUTHORIZATION_FAILED."""

from __future__ import annotations

from coordinator.test_group_shard import CFG

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.shard import GroupShard, refused_first
from kraftwire.metadata.controller.refusals import acl_message
from kraftwire.metadata.controller.topics import hide_configs
from kraftwire.protocol import messages as w


def test_the_messages_of_items_the_controller_refuses():
    assert acl_message("CreateTopics", ec.TOPIC_AUTHORIZATION_FAILED) == "Authorization failed."
    assert acl_message("CreatePartitions", ec.TOPIC_AUTHORIZATION_FAILED) is None
    for api in ("DeleteTopics", "AlterConfigs", "IncrementalAlterConfigs"):
        assert acl_message(api, ec.TOPIC_AUTHORIZATION_FAILED) == "Topic authorization failed."
        assert acl_message(api, ec.GROUP_AUTHORIZATION_FAILED) == "Group authorization failed."
    # a broker's configs are refused by the broker itself, without a message
    assert acl_message("IncrementalAlterConfigs", ec.CLUSTER_AUTHORIZATION_FAILED) is None
    assert acl_message("DeleteTopics", ec.UNKNOWN_TOPIC_ID) is None


def test_a_created_topic_hides_its_configs_from_who_may_not_describe_them():
    R = w.CreateTopicsResponse
    created = R.CreatableTopicResult(name="a", error_code=0, topic_config_error_code=0, num_partitions=3,
                                     replication_factor=1, configs=[R.CreatableTopicConfigs(name="x", value="1")])
    hide_configs(created)
    assert (created.topic_config_error_code, created.num_partitions, created.replication_factor, created.configs) == (
        ec.TOPIC_AUTHORIZATION_FAILED, -1, -1, [])
    refused = R.CreatableTopicResult(name="b", error_code=ec.TOPIC_ALREADY_EXISTS, topic_config_error_code=0)
    hide_configs(refused)
    assert refused.topic_config_error_code == 0


def test_offset_commit_lists_refused_partitions_first():
    order = [("a", [0, 1]), ("b", [0]), ("c", [2, 3])]
    refused = {("b", 0): ec.TOPIC_AUTHORIZATION_FAILED, ("c", 3): ec.UNKNOWN_TOPIC_OR_PARTITION}
    assert refused_first(order, refused) == [("b", [0]), ("c", [3, 2]), ("a", [0, 1])]
    assert refused_first(order, {}) == order


def test_offset_delete_answers_an_unreadable_topic_topic_authorization_failed():
    D = w.OffsetDeleteRequest
    shard = GroupShard(0, CFG)
    C = w.OffsetCommitRequest
    shard.offset_commit(C(group_id="g", generation_id_or_member_epoch=-1, member_id="", topics=[
        C.OffsetCommitRequestTopic(name="t", partitions=[C.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=5)])]), 8, "c", 0)
    request = D(group_id="g", topics=[D.OffsetDeleteRequestTopic(name=n, partitions=[
        D.OffsetDeleteRequestPartition(partition_index=0)]) for n in ("t", "u", "missing")])
    answer = shard.offset_delete(request, [("t", 0)], "d", frozenset({"u"})).replies[-1].body
    assert [(t.name, t.partitions[0].error_code) for t in answer.topics] == [
        ("t", 0), ("u", ec.TOPIC_AUTHORIZATION_FAILED), ("missing", ec.UNKNOWN_TOPIC_OR_PARTITION)]
