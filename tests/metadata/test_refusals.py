"""A controller request refused as a whole (NOT_CONTROLLER, REQUEST_TIMED_OUT) carries the code on every entry it
named, and the answer encodes at every version the node serves."""

from __future__ import annotations

import pytest

from kraftwire import error_codes as ec
from kraftwire.ids import UUID
from kraftwire.metadata.controller.refusals import APIS, refusal
from kraftwire.protocol import codec, served
from kraftwire.protocol import messages as m

TOPIC_ID = UUID(int=7)


def _requests():
    CT, DT, CP = m.CreateTopicsRequest, m.DeleteTopicsRequest, m.CreatePartitionsRequest
    EL, IAC, AC, UF = m.ElectLeadersRequest, m.IncrementalAlterConfigsRequest, m.AlterConfigsRequest, m.UpdateFeaturesRequest
    return {
        "BrokerRegistration": m.BrokerRegistrationRequest(broker_id=4),
        "ControllerRegistration": m.ControllerRegistrationRequest(controller_id=3000),
        "BrokerHeartbeat": m.BrokerHeartbeatRequest(broker_id=4, broker_epoch=10),
        "CreateTopics": CT(topics=[CT.CreatableTopic(name="a", num_partitions=1, replication_factor=1),
                                   CT.CreatableTopic(name="b", num_partitions=1, replication_factor=1)]),
        "DeleteTopics": DT(topics=[DT.DeleteTopicState(name="a", topic_id=TOPIC_ID)], topic_names=["a"]),
        "CreatePartitions": CP(topics=[CP.CreatePartitionsTopic(name="a", count=3)]),
        "AlterPartition": m.AlterPartitionRequest(broker_id=4, broker_epoch=10),
        "ElectLeaders": EL(topic_partitions=[EL.TopicPartitions(topic="a", partitions=[0, 1])]),
        "IncrementalAlterConfigs": IAC(resources=[IAC.AlterConfigsResource(resource_type=2, resource_name="a")]),
        "AlterConfigs": AC(resources=[AC.AlterConfigsResource(resource_type=2, resource_name="a")]),
        "UpdateFeatures": UF(feature_updates=[UF.FeatureUpdateKey(feature="metadata.version", max_version_level=21)]),
        "AllocateProducerIds": m.AllocateProducerIdsRequest(broker_id=4, broker_epoch=10),
        "UnregisterBroker": m.UnregisterBrokerRequest(broker_id=4),
        "UnregisterController": m.UnregisterControllerRequest(controller_id=3001),
        "AssignReplicasToDirs": m.AssignReplicasToDirsRequest(broker_id=4, broker_epoch=10),
        "CreateAcls": m.CreateAclsRequest(creations=[
            m.CreateAclsRequest.AclCreation(resource_type=2, resource_name=n, resource_pattern_type=3,
                                            principal="User:a", host="*", operation=3, permission_type=3)
            for n in ("a", "b")]),
        "DeleteAcls": m.DeleteAclsRequest(filters=[
            m.DeleteAclsRequest.DeleteAclsFilter(resource_type_filter=1, resource_name_filter=None,
                                                 pattern_type_filter=1, principal_filter=None, host_filter=None,
                                                 operation=1, permission_type=1)] * 2),
        "AlterUserScramCredentials": m.AlterUserScramCredentialsRequest(
            deletions=[m.AlterUserScramCredentialsRequest.ScramCredentialDeletion(name="bob", mechanism=1)],
            upsertions=[m.AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
                name=n, mechanism=2, iterations=4096, salt=b"s", salted_password=b"p") for n in ("carol", "bob")]),
        "DescribeUserScramCredentials": m.DescribeUserScramCredentialsRequest(users=[
            m.DescribeUserScramCredentialsRequest.UserName(name=n) for n in ("carol", "bob")]),
        "AlterPartitionReassignments": m.AlterPartitionReassignmentsRequest(topics=[
            m.AlterPartitionReassignmentsRequest.ReassignableTopic(name="a", partitions=[
                m.AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=0, replicas=[1, 2]),
                m.AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=1, replicas=None)])]),
        "ListPartitionReassignments": m.ListPartitionReassignmentsRequest(topics=[
            m.ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics(name="a", partition_indexes=[0])]),
        "AlterClientQuotas": m.AlterClientQuotasRequest(entries=[m.AlterClientQuotasRequest.EntryData(
            entity=[m.AlterClientQuotasRequest.EntityData(entity_type="user", entity_name=n)],
            ops=[m.AlterClientQuotasRequest.OpData(key="producer_byte_rate", value=1.0, remove=False)])
            for n in ("carol", None)]),
        "DescribeClientQuotas": m.DescribeClientQuotasRequest(components=[
            m.DescribeClientQuotasRequest.ComponentData(entity_type="user", match_type=2, match=None)]),
    }


def test_every_controller_api_has_a_refusal():
    assert set(_requests()) == APIS


@pytest.mark.parametrize("api", sorted(APIS))
def test_a_refusal_names_the_code_everywhere_and_encodes_at_every_served_version(api):
    request = _requests()[api]
    lo, hi = served.versions(api)
    for version in range(lo, hi + 1):
        body = refusal(api, request, version, ec.NOT_CONTROLLER, "not the controller")
        codec.encode(body, version)  # every field valid at that version
        codes = _codes(body)
        assert codes and set(codes) == {ec.NOT_CONTROLLER}, (api, version, body)


def test_per_entry_answers_list_every_entry():
    reqs = _requests()
    assert [t.name for t in refusal("CreateTopics", reqs["CreateTopics"], 7, ec.REQUEST_TIMED_OUT).topics] == ["a", "b"]
    assert [(r.name, r.topic_id) for r in refusal("DeleteTopics", reqs["DeleteTopics"], 6, 7).responses] == [
        ("a", TOPIC_ID)]
    elect = refusal("ElectLeaders", reqs["ElectLeaders"], 2, ec.NOT_CONTROLLER)
    assert [(p.partition_id, p.error_code) for p in elect.replica_election_results[0].partition_result] == [
        (0, ec.NOT_CONTROLLER), (1, ec.NOT_CONTROLLER)]


def test_a_scram_refusal_names_each_user_once_sorted():
    body = refusal("AlterUserScramCredentials", _requests()["AlterUserScramCredentials"], 0, ec.NOT_CONTROLLER, "no")
    assert [(r.user, r.error_code, r.error_message) for r in body.results] == [
        ("bob", ec.NOT_CONTROLLER, "no"), ("carol", ec.NOT_CONTROLLER, "no")]


def test_acl_refusals_answer_each_creation_and_filter():
    """Kafka's CreateAclsRequest/DeleteAclsRequest.getErrorResponse: one result per creation or filter (also how
    Kafka answers them without an authorizer: SECURITY_DISABLED "No Authorizer is configured.")."""
    reqs = _requests()
    created = refusal("CreateAcls", reqs["CreateAcls"], 3, ec.SECURITY_DISABLED, "No Authorizer is configured.")
    assert [(r.error_code, r.error_message) for r in created.results] == [
        (ec.SECURITY_DISABLED, "No Authorizer is configured.")] * 2
    deleted = refusal("DeleteAcls", reqs["DeleteAcls"], 1, ec.NOT_CONTROLLER)
    assert [(r.error_code, r.error_message, r.matching_acls) for r in deleted.filter_results] == [
        (ec.NOT_CONTROLLER, None, [])] * 2


def _codes(body) -> list[int]:
    """Every error code in ``body`` that is not 0 (ElectLeaders v0 has no top-level code)."""
    out = []

    def walk(obj):
        for name in getattr(obj, "__slots__", ()):
            value = getattr(obj, name, None)
            if name == "error_code" and value:
                out.append(value)
            elif isinstance(value, list):
                for item in value:
                    walk(item)
    walk(body)
    return out


def test_an_update_features_refusal_names_no_feature():
    """UpdateFeaturesResponse.createWithErrors: an error at the top, no result (the conformance run,
    UpdateFeatures-v1-no-acl)."""
    body = refusal("UpdateFeatures", _requests()["UpdateFeatures"], 1, ec.CLUSTER_AUTHORIZATION_FAILED)
    assert (body.error_code, body.results) == (ec.CLUSTER_AUTHORIZATION_FAILED, [])


def test_a_scram_describe_refusal_has_one_nameless_result_per_user():
    """DescribeUserScramCredentialsRequest.getErrorResponse (the conformance run, DescribeUserScramCredentials-v0-
    not-super-user)."""
    body = refusal("DescribeUserScramCredentials", _requests()["DescribeUserScramCredentials"], 0,
                   ec.CLUSTER_AUTHORIZATION_FAILED)
    assert [(r.user, r.error_code, r.error_message) for r in body.results] == [
        ("", ec.CLUSTER_AUTHORIZATION_FAILED, None)] * 2 and body.error_message is None


def test_a_client_quota_refusal_lists_every_entity_as_asked():
    """AlterClientQuotasRequest.getErrorResponse: every entry with its entity data as listed; DescribeClientQuotas:
    the code at the top and no entries."""
    body = refusal("AlterClientQuotas", _requests()["AlterClientQuotas"], 1, ec.NOT_CONTROLLER, "no")
    assert [(r.error_code, r.error_message, [(e.entity_type, e.entity_name) for e in r.entity])
            for r in body.entries] == [(ec.NOT_CONTROLLER, "no", [("user", "carol")]),
                                       (ec.NOT_CONTROLLER, "no", [("user", None)])]
    body = refusal("DescribeClientQuotas", _requests()["DescribeClientQuotas"], 1, ec.CLUSTER_AUTHORIZATION_FAILED)
    assert (body.error_code, body.entries) == (ec.CLUSTER_AUTHORIZATION_FAILED, None)
