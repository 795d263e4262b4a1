"""The fuzzer against one combined node with SASL/PLAIN listeners and Kafka's StandardAuthorizer, as ``alice``, a
principal with no ACLs who is no super user: every API and version both listeners advertise — the quorum's and the
brokers' own APIs among them (Vote, BeginQuorumEpoch, Fetch on the controller listener, BrokerRegistration,
BrokerHeartbeat, AlterPartition...), which must be refused with CLUSTER_AUTHORIZATION_FAILED. Nothing alice sends may
change the metadata at all. A SASL listener is also fuzzed before any login: only ApiVersions and SaslHandshake
are answered there. Then the metadata log, read by Kafka's own tool."""

from __future__ import annotations

from fuzz.metadata_log import check_log

KIND = "authorizer"


def test_client_listener(fuzz):
    report = fuzz("client", 450)
    assert not report.failures and not report.aborted, report.render()


#: the quorum's and the brokers' own requests, each of which the run must have seen refused (decodable, answered)
INTER_NODE = {"Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "Fetch", "FetchSnapshot", "BrokerRegistration",
              "BrokerHeartbeat", "AlterPartition", "UnregisterBroker", "AllocateProducerIds", "AssignReplicasToDirs",
              "UpdateRaftVoter", "AddRaftVoter", "RemoveRaftVoter", "UpdateFeatures", "DescribeQuorum"}


def test_controller_listener(fuzz):
    report = fuzz("controller", 450)
    assert not report.failures and not report.aborted, report.render()
    if fuzz.whole:
        assert INTER_NODE <= set(report.refusals_checked), sorted(INTER_NODE - set(report.refusals_checked))


def test_before_login(fuzz):
    report = fuzz("before-login", 200)
    assert not report.failures and not report.aborted, report.render()


def test_metadata_log_is_one_kafka_could_have_written(fuzz_node):
    check_log(fuzz_node)
