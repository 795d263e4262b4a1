"""The active controller's topic and partition decisions (``metadata.controller.topics``, ``partitions``,
``placement``, ``topic_configs``): every request per error code as Kafka answers it, Kafka's election order and epoch
rules, the striped placer's spread, and the broker lifecycle moving leaderships. Records are replayed through the
serde into the image, as a node that fetched them would."""

from __future__ import annotations

import random
import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata.controller import partitions as pc
from kraftwire.metadata.controller import topic_configs
from kraftwire.metadata.controller.brokers import BrokerControl
from kraftwire.metadata.controller.placement import PlacementError, UsableBroker, place
from kraftwire.metadata.controller.topics import ReplicationControl, name_error
from kraftwire.metadata.image import MIGRATING_DIR, MetadataImage, PartitionRegistration, replay_all
from kraftwire.metadata.version import BY_NAME, DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

CT = m.CreateTopicsRequest


def apply(img: MetadataImage, result) -> MetadataImage:
    return replay(img, result.records)


def cluster(brokers=(1, 2, 3), *, fenced=(), shutting=(), racks=None, level=DEFAULT.level, dirs=True):
    records = [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=level)]
    for b in brokers:
        records.append(m.RegisterBrokerRecord(
            broker_id=b, incarnation_id=uuid.UUID(int=b), broker_epoch=10 * b, end_points=[], features=[],
            rack=(racks or {}).get(b), fenced=b in fenced, in_controlled_shutdown=b in shutting,
            log_dirs=[uuid.UUID(int=1000 + b)] if dirs else []))
    return replay_all(records)


def ids():
    n = iter(range(100, 10_000))
    return lambda: uuid.UUID(int=next(n))


def control(**kw) -> ReplicationControl:
    return ReplicationControl(rng=random.Random(7), new_topic_id=ids(), **kw)


def topic(name, partitions=-1, rf=-1, *, assignments=(), configs=()):
    return CT.CreatableTopic(name=name, num_partitions=partitions, replication_factor=rf,
                             assignments=[CT.CreatableReplicaAssignment(partition_index=i, broker_ids=list(b))
                                          for i, b in assignments],
                             configs=[CT.CreatableTopicConfig(name=k, value=v) for k, v in configs])


def create(rc, img, *topics, validate_only=False):
    return rc.create_topics(img, CT(topics=list(topics), timeout_ms=30000, validate_only=validate_only))


def codes(res):
    return {t.name: t.error_code for t in res.response.topics}


# ================================================================================================================
# CreateTopics
# ================================================================================================================
def test_create_writes_topic_configs_then_partitions_with_isr_of_active_replicas_and_leader_first():
    rc = control()
    img = cluster()
    res = create(rc, img, topic("orders", 6, 3, configs=[("retention.ms", "1000")]))
    (t,) = res.response.topics
    assert t.error_code == ec.NONE and t.num_partitions == 6 and t.replication_factor == 3
    assert t.topic_id == uuid.UUID(int=100)
    kinds = [type(r.message).__name__ for r in res.records]
    assert kinds == ["TopicRecord", "ConfigRecord"] + ["PartitionRecord"] * 6
    for r in res.records[2:]:
        p = r.message
        assert sorted(p.replicas) == [1, 2, 3] and p.isr == p.replicas and p.leader == p.replicas[0]
        assert p.leader_epoch == 0 and p.partition_epoch == 0 and r.version == DEFAULT.partition_record_version
        assert p.directories == [uuid.UUID(int=1000 + b) for b in p.replicas]  # each broker's only log dir
    # leaders are spread: every broker leads two of the six
    leaders = [r.message.leader for r in res.records[2:]]
    assert sorted(leaders) == [1, 1, 2, 2, 3, 3]
    img = apply(img, res)
    assert img.topic("orders").partitions[5].replicas == tuple(res.records[-1].message.replicas)
    assert img.configs[(2, "orders")] == {"retention.ms": "1000"}
    configs = {c.name: (c.value, c.config_source) for c in t.configs}
    assert configs["retention.ms"] == ("1000", topic_configs.DYNAMIC_TOPIC_CONFIG)
    assert configs["cleanup.policy"] == ("delete", topic_configs.DEFAULT_CONFIG)


def test_create_defaults_and_validate_only():
    rc = control(default_partitions=3, default_replication_factor=2)
    img = cluster()
    res = create(rc, img, topic("a"), validate_only=True)
    assert codes(res) == {"a": ec.NONE} and res.records == ()
    assert res.response.topics[0].num_partitions == 3 and res.response.topics[0].replication_factor == 2
    res = create(rc, img, topic("a"))
    assert len(res.records) == 4


def test_fenced_brokers_are_followers_only_and_not_in_the_isr():
    rc = control()
    img = cluster(fenced=(3,))
    res = create(rc, img, topic("t", 4, 3))
    for r in res.records[1:]:
        assert 3 in r.message.replicas and 3 not in r.message.isr and r.message.leader != 3


@pytest.mark.parametrize("name, code, needle", [
    ("", ec.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: the empty string is not allowed"),
    (".", ec.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: '.' is not allowed"),
    ("x" * 250, ec.INVALID_TOPIC_EXCEPTION, "is longer than the max allowed length 249"),
    ("bad name", ec.INVALID_TOPIC_EXCEPTION, "other than ASCII alphanumerics"),
    ("__cluster_metadata", ec.INVALID_REQUEST, "prohibited"),
    ("exists", ec.TOPIC_ALREADY_EXISTS, "Topic 'exists' already exists."),
    ("my_topic", ec.INVALID_TOPIC_EXCEPTION, "collides with existing topic: my.topic"),
])
def test_create_name_errors(name, code, needle):
    rc = control()
    img = apply(cluster(), create(rc, cluster(), topic("exists", 1, 1), topic("my.topic", 1, 1)))
    res = create(rc, img, topic(name, 1, 1), topic("fine", 1, 1))
    by_name = {t.name: t for t in res.response.topics}
    assert by_name[name].error_code == code and needle in by_name[name].error_message
    assert by_name["fine"].error_code == ec.NONE
    # only the valid topic is written
    assert [r.message.name for r in res.records if isinstance(r.message, m.TopicRecord)] == ["fine"]
    assert name_error("x" * 249) == ""


def test_duplicate_names_in_one_request_are_refused_once_after_the_others():
    """ControllerApis.createTopics (ControllerApisTest.testCreateTopics): a name given twice is taken out of the
    request and answered once, INVALID_REQUEST "Duplicate topic name.", after the other topics' results."""
    res = create(control(), cluster(), topic("d", 1, 1), topic("e", 1, 1), topic("d", 1, 1))
    assert [(t.name, t.error_code, t.error_message) for t in res.response.topics] == [
        ("e", ec.NONE, None), ("d", ec.INVALID_REQUEST, "Duplicate topic name.")]
    assert [r.message.name for r in res.records if isinstance(r.message, m.TopicRecord)] == ["e"]


@pytest.mark.parametrize("kw, code, needle", [
    (dict(rf=0), ec.INVALID_REPLICATION_FACTOR, "larger than 0"),
    (dict(rf=-2), ec.INVALID_REPLICATION_FACTOR, "larger than 0"),
    (dict(partitions=0), ec.INVALID_PARTITIONS, "non-positive"),
    (dict(rf=4), ec.INVALID_REPLICATION_FACTOR,
     "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because "
     "only 3 broker(s) are registered or some brokers have all their log directories cordoned."),
    (dict(configs=[("retention.ms", "soon")]), ec.INVALID_CONFIG, "retention.ms"),
    (dict(configs=[("no.such.key", "1")]), ec.INVALID_CONFIG, "Unknown topic config name: no.such.key"),
    (dict(configs=[("cleanup.policy", None)]), ec.INVALID_CONFIG, "Null value"),
    (dict(configs=[("min.insync.replicas", "0")]), ec.INVALID_CONFIG, "at least 1"),
    (dict(assignments=[(0, [1])], rf=1), ec.INVALID_REQUEST, "replication factor was not set to -1"),
    (dict(assignments=[(0, [1])], partitions=1), ec.INVALID_REQUEST, "numPartitions was not set to -1"),
    (dict(assignments=[(0, [1]), (0, [2])]), ec.INVALID_REPLICA_ASSIGNMENT, "multiple manual partition assignments"),
    (dict(assignments=[(0, [])]), ec.INVALID_REPLICA_ASSIGNMENT, "empty replica list"),
    (dict(assignments=[(0, [1, 9])]), ec.INVALID_REPLICA_ASSIGNMENT, "broker 9, but no such broker is registered"),
    (dict(assignments=[(0, [2, 2])]), ec.INVALID_REPLICA_ASSIGNMENT, "the broker 2 more than once"),
    (dict(assignments=[(0, [1, 2]), (1, [3])]), ec.INVALID_REPLICA_ASSIGNMENT, "not consistent with previous"),
    (dict(assignments=[(0, [1]), (2, [2])]), ec.INVALID_REPLICA_ASSIGNMENT, "consecutive 0-based"),
])
def test_create_argument_errors(kw, code, needle):
    res = create(control(), cluster(), topic("t", **{"partitions": kw.pop("partitions", -1) if "assignments" in kw
                                                      else kw.pop("partitions", 1), **kw}))
    (t,) = res.response.topics
    assert t.error_code == code and needle in t.error_message, t.error_message
    assert res.records == () and t.num_partitions == -1


def test_create_refuses_when_no_broker_can_lead():
    res = create(control(), cluster(fenced=(1, 2, 3)), topic("t", 1, 1))
    assert res.response.topics[0].error_code == ec.INVALID_REPLICATION_FACTOR
    assert "All brokers are currently fenced." in res.response.topics[0].error_message
    res = create(control(), cluster(fenced=(1,), shutting=(2, 3)), topic("t", -1, -1, assignments=[(0, [1, 2])]))
    assert res.response.topics[0].error_code == ec.INVALID_REPLICA_ASSIGNMENT
    assert "are fenced or in controlled shutdown" in res.response.topics[0].error_message


def test_manual_assignment_is_taken_as_given():
    res = create(control(), cluster(fenced=(3,)), topic("t", assignments=[(0, [3, 1]), (1, [2, 3])]))
    parts = [r.message for r in res.records[1:]]
    assert [(p.replicas, p.isr, p.leader) for p in parts] == [([3, 1], [1], 1), ([2, 3], [2], 2)]


def test_a_request_is_capped_at_ten_thousand_records():
    res = create(control(), cluster(), topic("big", 10_001, 1), topic("small", 2, 1))
    assert codes(res) == {"big": ec.POLICY_VIOLATION, "small": ec.NONE}
    res = create(control(), cluster(), topic("a", 6000, 1), topic("b", 6000, 1))
    assert codes(res) == {"a": ec.NONE, "b": ec.POLICY_VIOLATION} and len(res.records) == 6001


def test_directories_follow_the_metadata_version():
    old = cluster(level=BY_NAME["3.6-IV2"].level)
    res = create(control(), old, topic("t", 1, 1))
    assert res.records[1].message.directories == [] and res.records[1].version == 0
    res = create(control(), cluster(dirs=False), topic("t", 1, 1))
    assert res.records[1].message.directories == [MIGRATING_DIR]


# ================================================================================================================
# DeleteTopics, CreatePartitions
# ================================================================================================================
def test_delete_by_name_and_by_id():
    rc = control()
    img = apply(cluster(), create(rc, cluster(), topic("a", 2, 1, configs=[("retention.ms", "5")]), topic("b", 1, 1)))
    D = m.DeleteTopicsRequest
    res = rc.delete_topics(img, D(topics=[D.DeleteTopicState(name="a", topic_id=uuid.UUID(int=0)),
                                          D.DeleteTopicState(name=None, topic_id=img.topic("b").id),
                                          D.DeleteTopicState(name="nope", topic_id=uuid.UUID(int=0)),
                                          D.DeleteTopicState(name=None, topic_id=uuid.UUID(int=999))],
                                  timeout_ms=1000), 6)
    assert [(r.name, r.error_code) for r in res.response.responses] == [
        ("a", ec.NONE), ("b", ec.NONE), ("nope", ec.UNKNOWN_TOPIC_OR_PARTITION), (None, ec.UNKNOWN_TOPIC_ID)]
    img = apply(img, res)
    assert not img.topics and not img.topic_ids and (2, "a") not in img.configs
    old = rc.delete_topics(img, D(topic_names=["x", "x"], timeout_ms=1), 3)
    assert [(r.name, r.error_code) for r in old.response.responses] == [("x", ec.INVALID_REQUEST)]


def test_invalid_delete_topics_entries_are_answered_as_kafka_and_only_valid_entries_delete():
    """Mirrors Kafka's ControllerApisTest.testInvalidDeleteTopicsRequest: neither name nor id, both, a name or an
    id twice (answered once), a name whose topic is also given by id (answered once, the id's entry not at all)."""
    rc = control()
    img = apply(cluster(), create(rc, cluster(), topic("a", 1, 1), topic("b", 1, 1), topic("c", 1, 1)))
    D = m.DeleteTopicsRequest
    a, b, c, zero = img.topic("a").id, img.topic("b").id, img.topic("c").id, uuid.UUID(int=0)
    res = rc.delete_topics(img, D(topics=[D.DeleteTopicState(name=n, topic_id=i) for n, i in [
        (None, zero), ("a", b), ("a", zero), (None, a), (None, b), ("b", zero), ("b", zero), (None, c), (None, c)]],
        timeout_ms=1000), 6)
    assert [(r.name, r.topic_id, r.error_code, r.error_message) for r in res.response.responses] == [
        (None, zero, ec.INVALID_REQUEST, "Neither topic name nor id were specified."),
        ("a", b, ec.INVALID_REQUEST, "You may not specify both topic name and topic id."),
        ("a", a, ec.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied."),
        ("b", b, ec.NONE, None),
        ("b", zero, ec.INVALID_REQUEST, "Duplicate topic name."),
        (None, c, ec.INVALID_REQUEST, "Duplicate topic id.")]
    assert [r.message.topic_id for r in res.records] == [b]  # only the one entry that is valid


def test_create_partitions():
    rc = control()
    img = apply(cluster(), create(rc, cluster(), topic("t", 2, 2)))
    P = m.CreatePartitionsRequest

    def grow(count, assignments=None, name="t", validate_only=False):
        return rc.create_partitions(img, P(topics=[P.CreatePartitionsTopic(
            name=name, count=count,
            assignments=None if assignments is None else [P.CreatePartitionsAssignment(broker_ids=a)
                                                          for a in assignments])],
            timeout_ms=1000, validate_only=validate_only))

    res = grow(5)
    assert res.response.results[0].error_code == ec.NONE
    assert [(r.message.partition_id, len(r.message.replicas)) for r in res.records] == [(2, 2), (3, 2), (4, 2)]
    assert len(apply(img, res).topic("t").partitions) == 5
    assert grow(5, validate_only=True).records == ()
    res = grow(3, [[3, 1]])
    assert res.records[0].message.replicas == [3, 1]
    cases = [(grow(2), ec.INVALID_PARTITIONS, "already has 2"), (grow(1), ec.INVALID_PARTITIONS, "not be an increase"),
             (grow(4, [[1, 2]]), ec.INVALID_REPLICA_ASSIGNMENT, "but only 1 assignment"),
             (grow(3, [[1]]), ec.INVALID_REPLICA_ASSIGNMENT, "not consistent"),
             (grow(3, name="nope"), ec.UNKNOWN_TOPIC_OR_PARTITION, "")]
    for res, code, needle in cases:
        assert res.response.results[0].error_code == code and needle in (res.response.results[0].error_message or "")
        assert res.records == ()


def test_create_partitions_naming_a_topic_twice_answers_it_once_first_and_grows_the_rest():
    """Mirrors Kafka's ControllerApisTest.testCreatePartitionsRequest (its duplicate topic)."""
    rc = control()
    img = apply(cluster(), create(rc, cluster(), topic("t", 1, 1), topic("u", 1, 1)))
    P = m.CreatePartitionsRequest
    res = rc.create_partitions(img, P(topics=[P.CreatePartitionsTopic(name=n, count=2, assignments=None)
                                              for n in ("u", "t", "t", "t")], timeout_ms=1000, validate_only=False))
    assert [(r.name, r.error_code, r.error_message) for r in res.response.results] == [
        ("t", ec.INVALID_REQUEST, "Duplicate topic name."), ("u", ec.NONE, None)]
    assert [(r.message.topic_id, r.message.partition_id) for r in res.records] == [(img.topic("u").id, 1)]


def test_create_partitions_answers_in_kafkas_hash_set_order():
    """Kafka 4.4 answered CreatePartitions-v1-grow-several's two topics b, a (ControllerApis collects the names in a
    java.util.HashSet and asks its controller in that order); the topics grow in that order too."""
    rc = control()
    a, b = "CreatePartitions-v1-grow-several.a", "CreatePartitions-v1-grow-several.b"
    img = apply(cluster(), create(rc, cluster(), topic(a, 1, 1), topic(b, 1, 1)))
    P = m.CreatePartitionsRequest
    res = rc.create_partitions(img, P(topics=[P.CreatePartitionsTopic(name=n, count=2, assignments=None)
                                              for n in (a, b)], timeout_ms=1000, validate_only=False))
    assert [r.name for r in res.response.results] == [b, a]
    assert [r.message.topic_id for r in res.records] == [img.topic(b).id, img.topic(a).id]


# ================================================================================================================
# elections, AlterPartition, ElectLeaders
# ================================================================================================================
def part(replicas, isr, leader, *, le=0, pe=0, recovery=0):
    return PartitionRegistration(tuple(replicas), (), tuple(isr), (), (), leader, recovery, le, pe)


@pytest.mark.parametrize("p, active, election, expected", [
    (part([1, 2, 3], [1, 2, 3], 2), {1, 2, 3}, pc.ONLINE, (2, False)),  # the current leader stays
    (part([1, 2, 3], [1, 2, 3], 2), {1, 2, 3}, pc.PREFERRED, (1, False)),
    (part([1, 2, 3], [2, 3], 2), {1, 2, 3}, pc.PREFERRED, (2, False)),  # preferred not in the ISR
    (part([1, 2, 3], [1, 3], 2), {1, 3}, pc.ONLINE, (1, False)),  # first valid in replica order
    (part([1, 2, 3], [3], -1), {1, 2}, pc.ONLINE, (-1, False)),
    (part([1, 2, 3], [3], -1), {1, 2}, pc.UNCLEAN, (1, True)),
    (part([1, 2, 3], [3], -1), set(), pc.UNCLEAN, (-1, False)),
])
def test_election_order(p, active, election, expected):
    assert pc.elect(p, p.isr, lambda b: b in active, election) == expected


def test_change_records_bump_epochs_only_as_kafka_does():
    mv = DEFAULT
    p = part([1, 2, 3], [1, 2, 3], 1, le=4, pe=9)
    shrink = pc.partition_change(mv, uuid.UUID(int=5), 0, p, acceptable=lambda b: True, isr=(1, 2))
    assert shrink.message.leader == -2 and shrink.message.isr == [1, 2]  # no leader epoch bump from 3.6-IV0
    old = pc.partition_change(BY_NAME["3.5-IV2"], uuid.UUID(int=5), 0, p, acceptable=lambda b: True, isr=(1, 2))
    assert old.message.leader == 1  # before 3.6-IV0 a shrink rewrites the leader (epoch bump)
    assert pc.partition_change(mv, uuid.UUID(int=5), 0, p, acceptable=lambda b: True) is None  # no-op: no record
    lost = pc.partition_change(mv, uuid.UUID(int=5), 0, part([1], [1], 1), acceptable=lambda b: False, isr=())
    assert lost.message.leader == -1 and lost.message.isr is None  # the ISR is never written empty
    unclean = pc.partition_change(mv, uuid.UUID(int=5), 0, part([1, 2], [1], -1), acceptable=lambda b: b == 2,
                                  election=pc.UNCLEAN)
    assert unclean.message.leader == 2 and unclean.message.isr == [2] and unclean.message.leader_recovery_state == 1
    img = replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=mv.level),
                      m.TopicRecord(name="t", topic_id=uuid.UUID(int=5)),
                      m.PartitionRecord(partition_id=0, topic_id=uuid.UUID(int=5), replicas=[1, 2, 3], isr=[1, 2, 3],
                                        leader=1, leader_epoch=4, partition_epoch=9), shrink.message])
    after = img.topics[uuid.UUID(int=5)].partitions[0]
    assert (after.leader_epoch, after.partition_epoch, after.isr) == (4, 10, (1, 2))


def _one_topic(rc, img, replicas=(1, 2, 3), unclean=False):
    configs = [("unclean.leader.election.enable", "true")] if unclean else []
    img = apply(img, create(rc, img, topic("t", assignments=[(0, list(replicas))], configs=configs)))
    return img, img.topic("t")


def alter(rc, img, t, isr, *, sender=None, broker_epoch=None, le=None, pe=None, version=3, recovery=0, epochs=None):
    p = t.partitions[0]
    A = m.AlterPartitionRequest
    sender = p.leader if sender is None else sender
    states = [A.BrokerState(broker_id=b, broker_epoch=(epochs or {}).get(b, -1)) for b in isr]
    req = A(broker_id=sender, broker_epoch=10 * sender if broker_epoch is None else broker_epoch,
            topics=[A.TopicData(topic_id=t.id, partitions=[A.PartitionData(
                partition_index=0, leader_epoch=p.leader_epoch if le is None else le, new_isr=list(isr),
                new_isr_with_epochs=states, leader_recovery_state=recovery,
                partition_epoch=p.partition_epoch if pe is None else pe)])])
    return rc.alter_partition(img, req, version)


def test_alter_partition_shrinks_and_expands_the_isr():
    rc = control()
    img, t = _one_topic(rc, cluster())
    res = alter(rc, img, t, [1, 2])
    out = res.response.topics[0].partitions[0]
    assert out.error_code == ec.NONE and out.isr == [1, 2] and out.partition_epoch == 1 and out.leader_epoch == 0
    img = apply(img, res)
    t = img.topic("t")
    assert t.partitions[0].isr == (1, 2)
    res = alter(rc, img, t, [1, 2, 3], epochs={3: 30})
    assert res.response.topics[0].partitions[0].isr == [1, 2, 3]


@pytest.mark.parametrize("kw, code", [
    (dict(broker_epoch=99), "stale"),
    (dict(le=1), ec.NOT_CONTROLLER),
    (dict(pe=1), ec.NOT_CONTROLLER),
    (dict(sender=2, broker_epoch=20), ec.INVALID_REQUEST),
    (dict(isr=[1, 4]), ec.INVALID_REQUEST),
    (dict(isr=[2, 3]), ec.INVALID_REQUEST),
    (dict(isr=[1, 2], recovery=1), ec.INVALID_REQUEST),
    (dict(isr=[1, 3], epochs={3: 31}), ec.INELIGIBLE_REPLICA),
])
def test_alter_partition_errors(kw, code):
    rc = control()
    img, t = _one_topic(rc, cluster())
    isr = kw.pop("isr", [1, 2])
    res = alter(rc, img, t, isr, **kw)
    if code == "stale":
        assert res.response.error_code == ec.STALE_BROKER_EPOCH
    else:
        assert res.response.topics[0].partitions[0].error_code == code
    assert res.records == ()


def test_alter_partition_with_old_epochs_and_unknown_topics():
    rc = control()
    img, t = _one_topic(rc, cluster())
    img = apply(img, alter(rc, img, t, [1, 2]))
    t2 = img.topic("t")
    # a leader that has not seen its own last change: its partition epoch is behind
    res = alter(rc, img, t2, [1], pe=0)
    assert res.response.topics[0].partitions[0].error_code == ec.INVALID_UPDATE_VERSION
    fenced = apply(img, BrokerControl("c", 9000).heartbeat(img, m.BrokerHeartbeatRequest(
        broker_id=2, broker_epoch=20, current_metadata_offset=99, want_fence=True, want_shut_down=False), now_ms=0))
    res = alter(rc, fenced, fenced.topic("t"), [1, 2])
    assert res.response.topics[0].partitions[0].error_code == ec.INELIGIBLE_REPLICA
    A = m.AlterPartitionRequest
    req = A(broker_id=1, broker_epoch=10, topics=[A.TopicData(topic_id=uuid.UUID(int=77),
                                                              partitions=[A.PartitionData(partition_index=0)])])
    assert rc.alter_partition(img, req, 3).response.topics[0].partitions[0].error_code == ec.UNKNOWN_TOPIC_ID
    stale_leader = alter(rc, img, t2, [1, 2], le=-1)
    assert stale_leader.response.topics[0].partitions[0].error_code == ec.FENCED_LEADER_EPOCH


def test_elect_leaders_preferred_and_unclean():
    rc = control()
    img, t = _one_topic(rc, cluster())
    E = m.ElectLeadersRequest

    def elect(kind, partitions=(0,), all_partitions=False):
        tp = None if all_partitions else [E.TopicPartitions(topic="t", partitions=list(partitions))]
        return rc.elect_leaders(img, E(election_type=kind, topic_partitions=tp, timeout_ms=1000), 2)

    res = elect(0)
    assert res.response.replica_election_results[0].partition_result[0].error_code == ec.ELECTION_NOT_NEEDED
    assert elect(0, all_partitions=True).response.replica_election_results[0].partition_result == []
    assert elect(0, (5,)).response.replica_election_results[0].partition_result[0].error_code == \
        ec.UNKNOWN_TOPIC_OR_PARTITION
    # move leadership to 2 (broker 1 fenced), then bring 1 back: a preferred election returns it
    bc = BrokerControl("c", 9000)
    hb = m.BrokerHeartbeatRequest
    img = apply(img, bc.heartbeat(img, hb(broker_id=1, broker_epoch=10, current_metadata_offset=99, want_fence=True,
                                          want_shut_down=False), now_ms=0))
    assert img.topic("t").partitions[0].leader == 2 and img.topic("t").partitions[0].isr == (2, 3)
    assert elect(0).response.replica_election_results[0].partition_result[0].error_code == \
        ec.PREFERRED_LEADER_NOT_AVAILABLE
    img = apply(img, bc.heartbeat(img, hb(broker_id=1, broker_epoch=10, current_metadata_offset=99, want_fence=False,
                                          want_shut_down=False), now_ms=1))
    # back in service but not in the ISR yet: still not available
    assert elect(0).response.replica_election_results[0].partition_result[0].error_code == \
        ec.PREFERRED_LEADER_NOT_AVAILABLE
    img = apply(img, alter(rc, img, img.topic("t"), [2, 3, 1]))
    res = elect(0)
    assert res.response.replica_election_results[0].partition_result[0].error_code == ec.NONE
    img = apply(img, res)
    assert img.topic("t").partitions[0].leader == 1
    assert elect(1).response.replica_election_results[0].partition_result[0].error_code == ec.ELECTION_NOT_NEEDED


def test_auto_leader_rebalance_moves_leadership_back_to_an_available_preferred_replica():
    rc = control()
    img, _ = _one_topic(rc, cluster())
    assert rc.balance_leaders(img) is None  # every leader preferred
    bc = BrokerControl("c", 9000)
    hb = m.BrokerHeartbeatRequest
    img = apply(img, bc.heartbeat(img, hb(broker_id=1, broker_epoch=10, current_metadata_offset=99, want_fence=True,
                                          want_shut_down=False), now_ms=0))
    img = apply(img, bc.heartbeat(img, hb(broker_id=1, broker_epoch=10, current_metadata_offset=99, want_fence=False,
                                          want_shut_down=False), now_ms=1))
    assert img.topic("t").partitions[0].leader == 2
    assert rc.balance_leaders(img) is None  # the preferred replica is not in the ISR yet
    img = apply(img, alter(rc, img, img.topic("t"), [2, 3, 1]))
    res = rc.balance_leaders(img)
    assert res is not None and len(res.records) == 1 and res.response is None
    img = apply(img, res)
    p = img.topic("t").partitions[0]
    assert p.leader == 1 and p.leader_epoch > 1
    assert rc.balance_leaders(img) is None


def test_unclean_election_needs_an_acceptable_replica():
    rc = control()
    img, t = _one_topic(rc, cluster(), replicas=(1, 2))
    bc = BrokerControl("c", 9000)
    hb = m.BrokerHeartbeatRequest
    img = apply(img, alter(rc, img, t, [1]))
    img = apply(img, bc.heartbeat(img, hb(broker_id=1, broker_epoch=10, current_metadata_offset=9, want_fence=True,
                                          want_shut_down=False), now_ms=0))
    p = img.topic("t").partitions[0]
    assert p.leader == -1 and p.isr == (1,)  # the last ISR member stays; nobody leads
    E = m.ElectLeadersRequest
    res = rc.elect_leaders(img, E(election_type=1, topic_partitions=[E.TopicPartitions(topic="t", partitions=[0])],
                                  timeout_ms=1), 2)
    assert res.response.replica_election_results[0].partition_result[0].error_code == ec.NONE
    p = apply(img, res).topic("t").partitions[0]
    assert p.leader == 2 and p.isr == (2,) and p.leader_recovery_state == pc.RECOVERING
    # with broker 2 gone too, nobody is eligible
    img2 = apply(img, bc.heartbeat(img, hb(broker_id=2, broker_epoch=20, current_metadata_offset=9, want_fence=True,
                                           want_shut_down=False), now_ms=1))
    res = rc.elect_leaders(img2, E(election_type=1, topic_partitions=[E.TopicPartitions(topic="t", partitions=[0])],
                                   timeout_ms=1), 2)
    assert res.response.replica_election_results[0].partition_result[0].error_code == \
        ec.ELIGIBLE_LEADERS_NOT_AVAILABLE


def test_unfencing_elects_leaderless_partitions_and_a_topic_allowing_unclean_elects_at_once():
    rc = control()
    img, t = _one_topic(rc, cluster(), replicas=(1,))
    bc = BrokerControl("c", 9000)
    hb = m.BrokerHeartbeatRequest
    img = apply(img, bc.heartbeat(img, hb(broker_id=1, broker_epoch=10, current_metadata_offset=9, want_fence=True,
                                          want_shut_down=False), now_ms=0))
    assert img.topic("t").partitions[0].leader == -1
    res = bc.heartbeat(img, hb(broker_id=1, broker_epoch=10, current_metadata_offset=99, want_fence=False,
                               want_shut_down=False), now_ms=1)
    assert [type(r.message).__name__ for r in res.records] == ["BrokerRegistrationChangeRecord",
                                                               "PartitionChangeRecord"]
    p = apply(img, res).topic("t").partitions[0]
    assert p.leader == 1 and p.leader_epoch == 2  # lost once (epoch 1), back (epoch 2)
    # unclean allowed on the topic: fencing the last ISR member elects another replica straight away
    rc2 = control()
    img2, _ = _one_topic(rc2, cluster(), replicas=(1, 2), unclean=True)
    img2 = apply(img2, alter(rc2, img2, img2.topic("t"), [1]))
    img2 = apply(img2, bc.heartbeat(img2, hb(broker_id=1, broker_epoch=10, current_metadata_offset=9, want_fence=True,
                                             want_shut_down=False), now_ms=0))
    p = img2.topic("t").partitions[0]
    assert p.leader == 2 and p.isr == (2,) and p.leader_recovery_state == pc.RECOVERING


# ================================================================================================================
# placement
# ================================================================================================================
class JavaMockRandom:
    """java.util.Random's nextInt(bound) over the generator of Kafka's test MockRandom (seed 17), so the placer's
    answers can be compared with the ones Kafka's StripedReplicaPlacerTest expects."""

    def __init__(self, state: int = 17) -> None:
        self.state = state

    def _next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & (2**64 - 1)
        return self.state >> (64 - bits)

    def randrange(self, bound: int) -> int:
        r = self._next(31)
        m_ = bound - 1
        if bound & m_ == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if u - r + m_ < 2**31:
                return r
            u = self._next(31)


def _rack_list(brokers):
    from kraftwire.metadata.controller.placement import _RackList

    return _RackList([UsableBroker(*b) for b in brokers], JavaMockRandom())


def test_placement_matches_kafkas_goldens():
    # Kafka's StripedReplicaPlacerTest, same brokers in the same order, same random source
    single = _rack_list([(3, None, False), (1, None, True), (0, None, False), (4, None, False), (2, None, False)])
    assert [single.place(4) for _ in range(5)] == [[3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0],
                                                   [0, 4, 3, 2]]
    fenced = _rack_list([(3, None, False), (1, None, True), (2, None, False)])
    assert [fenced.place(3) for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]
    racks = _rack_list([(11, "1", False), (10, "1", False), (30, "3", False), (31, "3", False), (21, "2", False),
                        (20, "2", True)])
    assert racks.names == ["1", "2", "3"]
    assert [racks.place(4) for _ in range(3)] == [[11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]
    assert place([UsableBroker(0, None, False), UsableBroker(1, None, True)], 3, 1, JavaMockRandom()) == [[0]] * 3
    counts: dict[tuple, int] = {}
    for r in place([UsableBroker(i, None, False) for i in range(4)], 200, 2, JavaMockRandom()):
        counts[tuple(r)] = counts.get(tuple(r), 0) + 1
    assert counts == {(0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16, (2, 0): 13,
                      (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


def test_placement_puts_replicas_in_distinct_brokers_and_racks():
    brokers = [UsableBroker(i, f"r{i % 3}", False) for i in range(1, 10)]
    placed = place(brokers, 90, 3, random.Random(3))
    rack = {b.id: b.rack for b in brokers}
    assert all(len({rack[b] for b in r}) == 3 for r in placed)  # one replica per rack when there are three
    assert all(len(set(r)) == 3 for r in placed)
    assert {r[0] for r in placed} == set(range(1, 10))  # every broker leads some


@pytest.mark.parametrize("brokers, rf, needle", [
    ([UsableBroker(1, None, False)], 0, "must be positive"),
    ([UsableBroker(1, None, True)], 1, "All brokers are currently fenced."),
    ([UsableBroker(1, None, False)], 2, "only 1 broker(s) are registered"),
])
def test_placement_refusals(brokers, rf, needle):
    with pytest.raises(PlacementError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        place(brokers, 1, rf, random.Random(0))


def test_topic_config_checks():
    """The refusals read as Kafka 4.4's (each message checked against a running Kafka: kafka-configs --alter)."""
    assert topic_configs.check("cleanup.policy", "compact,delete") == ""
    assert topic_configs.check("cleanup.policy", "foo") == \
        "Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete"
    assert "must be one of" in topic_configs.check("compression.type", "brotli")
    assert topic_configs.check("min.cleanable.dirty.ratio", "2") == \
        "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"
    assert topic_configs.check("min.cleanable.dirty.ratio", "-1") == \
        "Invalid value -1.0 for configuration min.cleanable.dirty.ratio: Value must be at least 0"
    assert topic_configs.check("compression.gzip.level", "0") == \
        "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1"
    assert topic_configs.check("compression.gzip.level", "-1") == ""
    assert topic_configs.check("retention.ms", "abc") == \
        "Invalid value abc for configuration retention.ms: Not a number of type LONG"
    assert "true or false" in topic_configs.check("preallocate", "yes")
    assert topic_configs.check("segment.bytes", str(1024 * 1024)) == ""
    assert "at least 1048576" in topic_configs.check("segment.bytes", "1000")
    assert "Not a number" in topic_configs.check("segment.bytes", str(2**31))


def test_a_preferred_election_on_a_leaderless_partition_takes_any_valid_leader_as_kafka_does():
    img = replay_all([m.TopicRecord(name="t", topic_id=uuid.UUID(int=9)),
                      m.PartitionRecord(partition_id=0, topic_id=uuid.UUID(int=9), replicas=[3, 2], isr=[3, 2],
                                        leader=-1, leader_epoch=4)], cluster(fenced=(3,)))
    E = m.ElectLeadersRequest
    res = control().elect_leaders(img, E(election_type=0, topic_partitions=[E.TopicPartitions(topic="t",
                                                                                               partitions=[0])],
                                         timeout_ms=1), 2)
    assert res.response.replica_election_results[0].partition_result[0].error_code == ec.NONE
    assert apply(img, res).topic("t").partitions[0].leader == 2


@pytest.mark.parametrize("version, code, message", [(6, ec.TOPIC_DELETION_DISABLED, None),
                                                    (3, ec.TOPIC_DELETION_DISABLED, None),
                                                    (2, ec.INVALID_REQUEST, "Topic deletion is disabled.")])
def test_the_controllers_delete_topic_enable_false_refuses_deletion(version, code, message):
    """Kafka's ControllerApis.deleteTopics with delete.topic.enable=false: TopicDeletionDisabledException (no
    message, as Kafka 4.4 answered in the conformance run) from v3, InvalidRequestException 'Topic deletion is
    disabled.' before; nothing written."""
    img = replay_all([m.TopicRecord(name="t", topic_id=uuid.UUID(int=9))], cluster())
    rc = ReplicationControl(rng=random.Random(0), new_topic_id=lambda: uuid.UUID(int=1),
                            static_config={"delete.topic.enable": "false"})
    D = m.DeleteTopicsRequest
    req = (D(topics=[D.DeleteTopicState(name="t", topic_id=uuid.UUID(int=0))], timeout_ms=1000) if version >= 6
           else D(topic_names=["t"], timeout_ms=1000))
    res = rc.delete_topics(img, req, version)
    assert res.records == ()
    assert [(r.error_code, r.error_message) for r in res.response.responses] == [(code, message)]
