"""The conformance runner's own rules, without nodes: mapping, keyed arrays, string normalisation, sentinels,
namespaces and the allow-list's patterns."""

from __future__ import annotations

import asyncio
import uuid

from conformance import allowed
from conformance.runner import (Comparison, Mapping, NotCoordinator, Scenario, Step, TopicId, _node, instantiate,
                                kafka_uuid_text, scoped, versions)

from kraftwire.protocol import messages as w

CR = w.CreateTopicsResponse
MR = w.MetadataResponse
K1, K2, O1, O2 = (uuid.UUID(int=n) for n in (1, 2, 3, 4))


def _created(*results) -> CR:
    return CR(throttle_time_ms=0, topics=[CR.CreatableTopicResult(name=n, topic_id=i, error_code=e, error_message=m)
                                          for n, i, e, m in results])


def _compare(kafka, ours, version=7, mapping=None):
    return [(d.path, d.kafka, d.kraftwire) for d in
            Comparison(mapping or Mapping(), "ns", version).run("CreateTopics", kafka, ours)]


def test_topic_ids_pair_up_and_must_stay_paired():
    mapping = Mapping()
    assert _compare(_created(("ns.a", K1, 0, None), ("ns.b", K2, 0, None)),
                    _created(("ns.a", O1, 0, None), ("ns.b", O2, 0, None)), mapping=mapping) == []
    # the next answer swaps them: both fields break the pairing
    diffs = _compare(_created(("ns.a", K1, 0, None)), _created(("ns.a", O2, 0, None)), mapping=mapping)
    assert [d[0] for d in diffs] == ["CreateTopics.topics[{ns}.a].topic_id"]


def test_a_sentinel_is_never_mapped():
    diffs = _compare(_created(("ns.a", K1, 0, None)), _created(("ns.a", uuid.UUID(int=0), 0, None)))
    assert [d[0] for d in diffs] == ["CreateTopics.topics[{ns}.a].topic_id"]


def test_keyed_arrays_report_missing_extra_and_order():
    diffs = _compare(_created(("ns.a", K1, 0, None), ("ns.b", K2, 0, None), ("ns.c", uuid.UUID(int=9), 0, None)),
                     _created(("ns.b", O2, 0, None), ("ns.a", O1, 0, None), ("ns.d", uuid.UUID(int=8), 0, None)))
    assert [d[0] for d in diffs] == ["CreateTopics.topics[{ns}.c]", "CreateTopics.topics[{ns}.d]",
                                     "CreateTopics.topics.<order>"]
    assert diffs[2][1:] == ("{ns}.a, {ns}.b", "{ns}.b, {ns}.a")


def test_arrays_with_repeated_keys_compare_by_position():
    diffs = _compare(_created(("ns.a", K1, 42, "Duplicate topic name.")),
                     _created(("ns.a", K1, 42, "Duplicate topic name."), ("ns.a", K1, 42, "Duplicate topic name.")))
    assert diffs[0][0] == "CreateTopics.topics.<length>"


def test_messages_compare_after_each_sides_ids_become_the_same_token():
    kafka = _created(("ns.a", K1, 36, f"Topic id {kafka_uuid_text(K1)} exists."))
    ours = _created(("ns.a", O1, 36, f"Topic id {kafka_uuid_text(O1)} exists."))
    assert _compare(kafka, ours) == []
    ours = _created(("ns.a", O1, 36, f"Topic id {kafka_uuid_text(K1)} exists."))  # kraftwire naming Kafka's id
    assert [d[0] for d in _compare(kafka, ours)] == ["CreateTopics.topics[{ns}.a].error_message"]


def test_times_agree_unless_a_sentinel_differs():
    def answer(throttle):
        return CR(throttle_time_ms=throttle, topics=[])

    assert _compare(answer(0), answer(12)) == []
    assert [d[0] for d in _compare(answer(-1), answer(0))] == ["CreateTopics.throttle_time_ms"]


def test_hosts_and_ports_map_inside_strings_too():
    mapping = Mapping()
    mapping.bind("host", "127.0.0.1", "localhost")
    mapping.bind("port", 9092, 19092)
    kafka = MR(brokers=[MR.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=9092)], topics=[])
    ours = MR(brokers=[MR.MetadataResponseBroker(node_id=1, host="localhost", port=19092)], topics=[])
    assert [(d.path) for d in Comparison(mapping, "ns", 12).run("Metadata", kafka, ours)] == []
    assert mapping.substitute("PLAINTEXT://127.0.0.1:9092", "kafka") == \
        mapping.substitute("PLAINTEXT://localhost:19092", "kraftwire")
    ours.brokers[0].port = 9092  # kraftwire advertising Kafka's port is a difference
    assert [d.path for d in Comparison(mapping, "ns", 12).run("Metadata", kafka, ours)] == ["Metadata.brokers[1].port"]


def test_requests_get_the_namespace_and_each_sides_topic_id():
    D = w.DeleteTopicsRequest
    template = D(topics=[D.DeleteTopicState(name=None, topic_id=TopicId("{ns}.a"))], timeout_ms=1)
    sent = instantiate(template, "S", {"S.a": K1})
    assert sent.topics[0].topic_id == K1 and template.topics[0].topic_id == TopicId("{ns}.a")
    assert instantiate(w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(name="{ns}.x")]), "S",
                       {}).topics[0].name == "S.x"


def test_scope_keeps_only_the_namespaces_topics():
    answer = MR(topics=[MR.MetadataResponseTopic(name=n) for n in ("S.a", "T.a", "S-other.a", "__consumer_offsets")])
    assert [t.name for t in scoped(answer, "S").topics] == ["S.a"]


def test_scenario_ids_and_versions():
    scenario = Scenario("CreateTopics", 7, "valid", [Step(w.CreateTopicsRequest(), 7)])
    assert scenario.id == scenario.namespace == "CreateTopics-v7-valid"
    assert list(versions("CreateTopics")) == [2, 3, 4, 5, 6, 7]  # Kafka 4 serves from 2, kraftwire to 7


def test_allow_list_patterns_have_one_wildcard():
    pattern = allowed._regex("Metadata-v*-x")
    assert pattern.fullmatch("Metadata-v10-x") and not pattern.fullmatch("Metadata-v10-xy")
    literal = allowed._regex("CreateTopics.topics[{ns}.a].error_message")
    assert literal.fullmatch("CreateTopics.topics[{ns}.a].error_message")
    assert not literal.fullmatch("CreateTopics.topics[n].error_message")


def test_order_is_not_compared_only_where_kafkas_order_carries_nothing():
    """DeleteTopics' results are shuffled by Kafka on purpose: their order is not compared, their elements are;
    another keyed array (CreateTopics' results) keeps its order compared."""
    DR = w.DeleteTopicsResponse

    def deleted(*names, code=0):
        return DR(throttle_time_ms=0, responses=[DR.DeletableTopicResult(name=n, topic_id=uuid.UUID(int=0),
                                                                         error_code=code, error_message=None)
                                                 for n in names])

    def compare(api, kafka, ours):
        return [d.path for d in Comparison(Mapping(), "ns", 6).run(api, kafka, ours)]

    assert compare("DeleteTopics", deleted("ns.a", "ns.b"), deleted("ns.b", "ns.a")) == []
    assert compare("DeleteTopics#2", deleted("ns.a", "ns.b"), deleted("ns.b", "ns.a", code=3)) == [
        "DeleteTopics#2.responses[{ns}.b].error_code", "DeleteTopics#2.responses[{ns}.a].error_code"]
    assert _compare(_created(("ns.a", K1, 0, None), ("ns.b", K2, 0, None)),
                    _created(("ns.b", O2, 0, None), ("ns.a", O1, 0, None))) == [
        ("CreateTopics.topics.<order>", "{ns}.a, {ns}.b", "{ns}.b, {ns}.a")]


def test_documentation_is_compared_by_presence_only():
    """A key's documentation is each side's own prose: present on both is equal whatever the words, missing on one
    side differs."""
    R = w.DescribeConfigsResponse

    def described(doc):
        return R(throttle_time_ms=0, results=[R.DescribeConfigsResult(
            error_code=0, error_message="", resource_type=2, resource_name="ns.a", configs=[
                R.DescribeConfigsResourceResult(name="retention.ms", value="1", read_only=False, config_source=5,
                                                is_sensitive=False, synonyms=[], config_type=5, documentation=doc)])])

    def compare(kafka, ours):
        return [d.path for d in Comparison(Mapping(), "ns", 4).run("DescribeConfigs", kafka, ours)]

    assert compare(described("Kafka's words"), described("ours")) == []
    assert compare(described("Kafka's words"), described(None)) == [
        "DescribeConfigs.results[2,{ns}.a].configs[retention.ms].documentation"]


def test_describe_log_dirs_partitions_order_is_not_compared():
    """Kafka's DescribeLogDirs lists a topic's partitions in the order of the identity hash codes of its log objects
    (runner.ORDER_CARRIES_NOTHING); their fields are still compared."""
    R = w.DescribeLogDirsResponse

    def dirs(*partitions):
        return R(throttle_time_ms=0, error_code=0, results=[R.DescribeLogDirsResult(
            error_code=0, log_dir="/d", topics=[R.DescribeLogDirsTopic(name="ns.a", partitions=[
                R.DescribeLogDirsPartition(partition_index=p, partition_size=s, offset_lag=0, is_future_key=False)
                for p, s in partitions])], total_bytes=-1, usable_bytes=-1)])

    def compare(kafka, ours):
        return [d.path for d in Comparison(Mapping(), "ns", 4).run("DescribeLogDirs", kafka, ours)]

    assert compare(dirs((1, 0), (0, 0)), dirs((0, 0), (1, 0))) == []
    assert compare(dirs((1, 0), (0, 0)), dirs((0, 0), (1, 5))) == [
        "DescribeLogDirs.results[0].topics[{ns}.a].partitions[1].partition_size"]


def test_acl_orders_are_not_compared_but_their_entries_are():
    """Kafka's DescribeAcls groups bindings in hash maps whose hashes are enums' identity hash codes, different in
    each JVM run (runner.ORDER_CARRIES_NOTHING): the order of resources and entries is free, their content is not."""
    R = w.DescribeAclsResponse

    def described(*resources):
        return R(throttle_time_ms=0, error_code=0, error_message=None, resources=[
            R.DescribeAclsResource(resource_type=2, resource_name=name, pattern_type=3, acls=[
                R.AclDescription(principal=p, host="*", operation=op, permission_type=3) for p, op in acls])
            for name, acls in resources])

    def compare(kafka, ours):
        return [d.path for d in Comparison(Mapping(), "ns", 3).run("DescribeAcls", kafka, ours)]

    a, b = ("ns.a", [("User:x", 3), ("User:y", 4)]), ("ns.b", [("User:x", 3)])
    assert compare(described(a, b), described(b, (a[0], a[1][::-1]))) == []
    assert compare(described(a, b), described(b, (a[0], [("User:x", 3), ("User:y", 5)])))[0].startswith(
        "DescribeAcls.resources[2,{ns}.a]")


def test_controller_of_several_brokers_must_be_an_alive_broker_of_each_side():
    """On a cluster of several brokers each side names a controller of its own choosing (Kafka: a random alive
    broker): runner.named_controller accepts any broker the answer lists, and nothing else."""
    R = w.DescribeClusterResponse

    def cluster(controller, *ids):
        return R(throttle_time_ms=0, error_code=0, error_message=None, cluster_id="c", controller_id=controller,
                 brokers=[R.DescribeClusterBroker(broker_id=i, host="h", port=9092, rack=None) for i in ids],
                 cluster_authorized_operations=-2147483648)

    def compare(kafka, ours, picked=True):
        return [d.path for d in Comparison(Mapping(), "ns", 0, picked_controller=picked).run("DescribeCluster",
                                                                                             kafka, ours)]

    assert compare(cluster(2, 1, 2, 3), cluster(1, 1, 2, 3)) == []
    assert compare(cluster(2, 1, 2), cluster(3, 1, 2)) == ["DescribeCluster.controller_id"]
    assert compare(cluster(-1, 1, 2), cluster(1, 1, 2)) == ["DescribeCluster.controller_id"]
    assert compare(cluster(2, 1, 2, 3), cluster(1, 1, 2, 3), picked=False) == ["DescribeCluster.controller_id"]


class _Cluster:
    """A pair's side as :func:`conformance.runner._node` sees it: three nodes, node 2 down, node 3 coordinating
    after one answer that it is still loading."""

    nodes = {"kafka": {1: None, 2: None, 3: None}}
    down = {2}

    def __init__(self) -> None:
        self.asked = []

    async def ask(self, side, body, version):
        self.asked.append((side, body.key, body.key_type, version))
        loading = len(self.asked) == 1
        return w.FindCoordinatorResponse(error_code=14 if loading else 0, node_id=-1 if loading else 3)


def test_not_coordinator_picks_a_running_node_the_side_did_not_elect():
    cluster = _Cluster()
    assert asyncio.run(_node(cluster, "kafka", NotCoordinator("{ns}.t", 1), "ns")) == 1
    assert cluster.asked == [("kafka", "ns.t", 1, 3)] * 2  # asked again while the coordinator loaded
    assert asyncio.run(_node(cluster, "kafka", 2, "ns")) == 2  # a node named is taken as it is
