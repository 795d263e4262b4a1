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
        "AssignReplicasToDirs": m.AssignReplicasToDirsRequest(broker_id=4, broker_epoch=10),
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
