"""Eligible leader replicas (KIP-966) in the pure controller: the partition change rules mirrored from Kafka 4.4's
PartitionChangeBuilderTest ELR cases (in the mode Kafka's ReplicationControlManager always uses: the last known
leader kept in LastKnownElr), the broker lifecycle moving replicas into and out of the ELR (fencing, unfencing, a
registration after an unclean shutdown), and min.insync.replicas becoming cluster-level while ELR is on. Records go
through the serde into the image, as a node that fetched them would see them."""

from __future__ import annotations

import random
import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata import features as ft
from kraftwire.metadata.controller import elr
from kraftwire.metadata.controller import partitions as pc
from kraftwire.metadata.controller import topics
from kraftwire.metadata.controller.brokers import BrokerControl
from kraftwire.metadata.controller.configs import ConfigControl
from kraftwire.metadata.controller.topics import ReplicationControl
from kraftwire.metadata.image import NO_LEADER, PartitionRegistration, replay_all
from kraftwire.metadata.version import BY_NAME, DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

TOPIC_ID = uuid.UUID(int=77)
MV = DEFAULT  # PartitionChangeRecord v2 (ELR fields) from 4.0-IV1


def part(replicas, isr, leader, *, elr_=(), lke=(), recovery=0):
    return PartitionRegistration(tuple(replicas), (), tuple(isr), (), (), leader, recovery, 100, 200,
                                 tuple(elr_), tuple(lke))


def change(p, *, acceptable=lambda b: True, min_isr=3, enabled=True, **kw):
    out = pc.partition_change(MV, TOPIC_ID, 0, p, acceptable=acceptable, elr=enabled, min_isr=min_isr, **kw)
    return None if out is None else out.message


def fields(record):
    """The fields a change sets, by name (None: unchanged), ready to compare with Kafka's expected record."""
    return {"leader": record.leader, "isr": record.isr, "elr": record.eligible_leader_replicas,
            "lke": record.last_known_elr, "recovery": record.leader_recovery_state}


def merged(p, record):
    img = replay_all([m.TopicRecord(name="t", topic_id=TOPIC_ID),
                      m.PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=list(p.replicas), isr=list(p.isr),
                                        removing_replicas=[], adding_replicas=[], leader=p.leader,
                                        leader_recovery_state=p.leader_recovery_state, leader_epoch=p.leader_epoch,
                                        partition_epoch=p.partition_epoch, eligible_leader_replicas=list(p.elr),
                                        last_known_elr=list(p.last_known_elr))])
    return replay_all([record], img).topics[TOPIC_ID].partitions[0]


# ================================================================================================================
# PartitionChangeBuilderTest
# ================================================================================================================
def test_isr_shrink_below_min_isr_moves_the_leavers_to_the_elr():
    """testEligibleLeaderReplicas_IsrShrinkBelowMinISR."""
    p = part([1, 2, 3, 4], [1, 2, 3, 4], 1)
    r = change(p, acceptable=lambda b: b != 3, election=pc.PREFERRED, isr=(1, 2))
    assert fields(r) == {"leader": -2, "isr": [1, 2], "elr": [3, 4], "lke": None, "recovery": -1}
    after = merged(p, r)
    assert after.elr == (3, 4) and after.last_known_elr == ()
    # without ELR nothing but the ISR changes (the version < 2 half of Kafka's test)
    r = change(p, acceptable=lambda b: b != 3, election=pc.PREFERRED, isr=(1, 2), enabled=False)
    assert fields(r) == {"leader": -2, "isr": [1, 2], "elr": None, "lke": None, "recovery": -1}


def test_isr_expand_to_min_isr_empties_elr_and_last_known_elr():
    """testEligibleLeaderReplicas_IsrExpandAboveMinISR."""
    p = part([1, 2, 3, 4], [1, 2], 1, elr_=[3], lke=[4])
    r = change(p, acceptable=lambda b: b != 3, election=pc.PREFERRED, isr=(1, 2, 3))
    assert fields(r) == {"leader": -2, "isr": [1, 2, 3], "elr": [], "lke": [], "recovery": -1}
    after = merged(p, r)
    assert after.elr == () and after.last_known_elr == () and after.partition_epoch == 201


def test_a_new_isr_member_not_in_the_elr_leaves_the_elr_as_it_is():
    """testEligibleLeaderReplicas_IsrAddNewMemberNotInELR. In the controller's mode (the last known leader kept in
    LastKnownElr) a partition keeping its leader has LastKnownElr cleared."""
    p = part([1, 2, 3, 4], [1], 1, elr_=[3], lke=[2])
    r = change(p, acceptable=lambda b: b != 3, election=pc.PREFERRED, isr=(1, 4))
    assert fields(r) == {"leader": -2, "isr": [1, 4], "elr": None, "lke": [], "recovery": -1}
    assert merged(p, r).elr == (3,)


def test_an_unclean_shutdown_replica_leaves_the_elr():
    """testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr (the controller's mode)."""
    p = part([1, 2, 3, 4], [1], 1, elr_=[2, 3])
    r = change(p, acceptable=lambda b: b != 3, election=pc.PREFERRED, unclean_shutdown=(3,))
    assert fields(r) == {"leader": -2, "isr": None, "elr": [2], "lke": None, "recovery": -1}


def test_an_elr_member_is_elected_cleanly_when_the_isr_is_empty():
    """testEligibleLeaderReplicas_ElrCanBeElected (lastKnownLeaderEnabled)."""
    p = part([1, 2, 3, 4], [1], 1, elr_=[3])
    r = change(p, acceptable=lambda b: b != 1, election=pc.PREFERRED, isr=())
    assert fields(r) == {"leader": 3, "isr": [3], "elr": [1], "lke": None, "recovery": -1}
    after = merged(p, r)
    assert (after.isr, after.elr, after.last_known_elr, after.leader_epoch) == ((3,), (1,), (), 101)


def test_the_isr_can_shrink_to_zero_and_the_last_leader_is_remembered():
    """testEligibleLeaderReplicas_IsrCanShrinkToZero (lastKnownLeaderEnabled)."""
    p = part([1, 2, 3, 4], [1, 2, 3, 4], 1)
    r = change(p, acceptable=lambda b: False, election=pc.PREFERRED, isr=())
    assert fields(r) == {"leader": NO_LEADER, "isr": [], "elr": [1, 2, 3, 4], "lke": [1], "recovery": -1}
    after = merged(p, r)
    assert (after.isr, after.elr, after.last_known_elr) == ((), (1, 2, 3, 4), (1,))
    # a later change (replica 2 shut down uncleanly) does not rewrite the last known leader
    again = change(after, acceptable=lambda b: False, election=pc.PREFERRED, unclean_shutdown=(2,))
    assert again.last_known_elr is None and again.eligible_leader_replicas == [1, 3, 4]


def test_the_last_known_leader_is_elected_uncleanly_when_isr_and_elr_are_empty():
    """testEligibleLeaderReplicas_ElectLastKnownLeader."""
    p = part([1, 2, 3, 4], [], NO_LEADER, lke=[1])
    r = change(p, election=pc.PREFERRED, isr=())
    assert fields(r) == {"leader": 1, "isr": [1], "elr": None, "lke": [], "recovery": pc.RECOVERING}
    after = merged(p, r)
    assert (after.isr, after.elr, after.last_known_elr) == ((1,), (), ())


def test_the_last_known_leader_is_not_elected_while_the_elr_has_a_member():
    """testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail."""
    p = part([1, 2, 3, 4], [], NO_LEADER, elr_=[3], lke=[1])
    assert change(p, acceptable=lambda b: b != 3, election=pc.PREFERRED, isr=()) is None


def test_an_unavailable_last_known_leader_is_not_elected():
    """Kafka 4.4's canElectLastKnownLeader refuses a last known leader that is not an acceptable leader."""
    p = part([1, 2, 3], [], NO_LEADER, lke=[1])
    assert change(p, acceptable=lambda b: b != 1, isr=()) is None


def test_an_unclean_election_clears_the_elr():
    """testUncleanLeaderElection with ELR on: the unclean leader is the ISR alone, RECOVERING, and the ELR goes (its
    members may hold records the new leader never had)."""
    p = part([1, 2, 3], [], NO_LEADER, elr_=[2], lke=[1])
    r = change(p, acceptable=lambda b: b == 3, election=pc.UNCLEAN, isr=())
    assert fields(r) == {"leader": 3, "isr": [3], "elr": [], "lke": [], "recovery": pc.RECOVERING}


def test_without_elr_the_isr_is_never_written_empty():
    p = part([1, 2, 3], [1], 1)
    r = change(p, acceptable=lambda b: b != 1, isr=(), enabled=False)
    assert fields(r) == {"leader": NO_LEADER, "isr": None, "elr": None, "lke": None, "recovery": -1}


def test_the_elr_list_is_in_kafkas_order():
    """Kafka collects the ELR through a HashSet of small broker ids, which iterates them ascending."""
    p = part([5, 3, 9, 1], [9, 5], 9, elr_=[3])
    assert pc.target_elr(p, (), 3) == (3, 5, 9)
    assert pc.target_elr(p, (5,), 3) == (3, 9)
    assert pc.target_elr(p, (5, 9, 1), 3) == ()


# ================================================================================================================
# the broker lifecycle (ReplicationControlManagerTest ELR cases)
# ================================================================================================================
def elr_cluster(brokers=(1, 2, 3), *, enabled=True, min_isr="2"):
    records = [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)]
    if enabled:
        records.append(m.FeatureLevelRecord(name=ft.ELR_VERSION, feature_level=1))
    records.append(m.ConfigRecord(resource_type=4, resource_name="", name="min.insync.replicas", value=min_isr))
    for b in brokers:
        records.append(m.RegisterBrokerRecord(
            broker_id=b, incarnation_id=uuid.UUID(int=b), broker_epoch=10 * b, end_points=[], features=[],
            rack=None, fenced=False, in_controlled_shutdown=False, log_dirs=[uuid.UUID(int=1000 + b)]))
    img = replay_all(records)
    rc = ReplicationControl(rng=random.Random(7), new_topic_id=lambda: TOPIC_ID)
    CT = m.CreateTopicsRequest
    res = rc.create_topics(img, CT(topics=[CT.CreatableTopic(
        name="t", num_partitions=-1, replication_factor=-1, configs=[],
        assignments=[CT.CreatableReplicaAssignment(partition_index=0, broker_ids=list(brokers))])],
        timeout_ms=30000, validate_only=False))
    return replay(img, res.records)


def fence(img, broker):
    b = img.brokers[broker]
    return replay(img, BrokerControl("c", 9000).heartbeat(img, m.BrokerHeartbeatRequest(
        broker_id=broker, broker_epoch=b.epoch, current_metadata_offset=img.offset, want_fence=True,
        want_shut_down=False), now_ms=0).records)


def p0(img):
    return img.topics[TOPIC_ID].partitions[0]


def test_fencing_isr_members_fills_the_elr_then_empties_the_isr_and_unfencing_elects_from_the_elr():
    """ReplicationControlManagerTest.testElrEnabledWhenFencingBrokers-style: min ISR 2 over 3 replicas; each
    fenced ISR member below min ISR joins the ELR; the last one leaves the ISR empty, the leader -1 and itself as
    the last known leader; unfencing an ELR member elects it cleanly."""
    img = elr_cluster()
    assert (p0(img).isr, p0(img).leader) == ((1, 2, 3), 1)
    img = fence(img, 1)  # ISR 2 = min ISR: no ELR yet
    assert (p0(img).isr, p0(img).elr, p0(img).leader) == ((2, 3), (), 2)
    img = fence(img, 2)  # 1 left while the ISR still held min ISR: only 2 is eligible
    assert (p0(img).isr, p0(img).elr, p0(img).leader) == ((3,), (2,), 3)
    img = fence(img, 3)
    assert (p0(img).isr, p0(img).elr, p0(img).last_known_elr, p0(img).leader) == ((), (2, 3), (3,), NO_LEADER)
    assert topics.unfenced_changes(img, 1) == []  # not eligible: stays leaderless rather than lose records
    img = replay(img, topics.unfenced_changes(img, 2))
    assert (p0(img).isr, p0(img).elr, p0(img).last_known_elr, p0(img).leader) == ((2,), (3,), (), 2)
    assert p0(img).leader_recovery_state == pc.RECOVERED  # a clean election


def test_without_elr_fencing_keeps_the_last_isr_member():
    img = elr_cluster(enabled=False)
    for b in (1, 2, 3):
        img = fence(img, b)
    assert (p0(img).isr, p0(img).elr, p0(img).leader) == ((3,), (), NO_LEADER)


def register(img, broker, *, previous_epoch, version=4):
    R = m.BrokerRegistrationRequest
    req = R(broker_id=broker, cluster_id="c", incarnation_id=uuid.UUID(int=500 + broker), listeners=[],
            features=[R.Feature(name=FEATURE_NAME, min_supported_version=1, max_supported_version=DEFAULT.level),
                      R.Feature(name=ft.ELR_VERSION, min_supported_version=0, max_supported_version=1)],
            rack=None, log_dirs=[uuid.UUID(int=1000 + broker)], previous_broker_epoch=previous_epoch)
    res = BrokerControl("c", 9000).register(img, req, next_offset=img.offset + 1, now_ms=0, version=version)
    assert res.response.error_code == ec.NONE
    return res.records


def test_a_broker_back_from_an_unclean_shutdown_leaves_the_elr():
    """ReplicationControlManagerTest.testUncleanShutdownBrokerElrEnabled-style: a new incarnation whose previous
    broker epoch is not the one the controller holds (its clean shutdown marker missing: -1) is removed from every
    ELR; one naming the right epoch keeps its place."""
    img = elr_cluster()
    for b in (1, 2, 3):
        img = fence(img, b)
    assert p0(img).elr == (2, 3)
    clean = register(img, 2, previous_epoch=img.brokers[2].epoch)
    assert [type(r.message).__name__ for r in clean] == ["RegisterBrokerRecord"]
    unclean = register(img, 2, previous_epoch=-1)
    assert [type(r.message).__name__ for r in unclean] == ["PartitionChangeRecord", "RegisterBrokerRecord"]
    after = replay(img, unclean)
    assert (p0(after).elr, p0(after).last_known_elr) == ((3,), (3,))
    # before BrokerRegistration v3 there is no previous epoch: every new incarnation counts as unclean
    assert len(register(img, 2, previous_epoch=img.brokers[2].epoch, version=2)) == 2


def test_an_unclean_isr_member_leaves_the_isr_without_joining_the_elr():
    img = elr_cluster()
    img = fence(img, 1)
    img = fence(img, 2)  # ISR [3], ELR [2]
    after = replay(img, register(img, 3, previous_epoch=-1))
    assert (p0(after).isr, p0(after).elr, p0(after).last_known_elr, p0(after).leader) == ((), (2,), (3,), -1)


def test_the_effective_min_isr_is_the_topics_at_most_its_replication_factor():
    img = elr_cluster(min_isr="3")
    assert topics.KAFKA_DEFAULTS.elr_options(img, "t") == {"elr": True, "min_isr": 3}
    two = elr_cluster(brokers=(1, 2), min_isr="3")
    assert topics.KAFKA_DEFAULTS.elr_options(two, "t") == {"elr": True, "min_isr": 2}
    assert topics.KAFKA_DEFAULTS.elr_options(elr_cluster(enabled=False), "t") == {}


# ================================================================================================================
# min.insync.replicas is cluster-level while ELR is on (ConfigurationControlManagerTest)
# ================================================================================================================
def alter(img, resource_type, name, key, value, op=0):
    R = m.IncrementalAlterConfigsRequest
    return ConfigControl().incremental_alter(img, R(resources=[R.AlterConfigsResource(
        resource_type=resource_type, resource_name=name,
        configs=[R.AlterableConfig(name=key, config_operation=op, value=value)])], validate_only=False))


def test_broker_level_min_isr_is_refused_while_elr_is_on():
    img = elr_cluster()
    res = alter(img, 4, "1", "min.insync.replicas", "2")
    (r,) = res.response.responses
    assert (r.error_code, r.error_message) == (ec.INVALID_CONFIG, elr.BROKER_LEVEL_REFUSED)
    assert r.error_message == "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
    assert res.records == ()
    removal = alter(img, 4, "", "min.insync.replicas", None, op=1).response.responses[0]
    assert (removal.error_code, removal.error_message) == (
        ec.INVALID_CONFIG, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
    # without ELR both are fine
    assert alter(elr_cluster(enabled=False), 4, "1", "min.insync.replicas", "2").response.responses[0].error_code == 0


def test_changing_min_isr_clears_the_elrs_it_measured():
    """ConfigurationControlManagerTest's ClearElrRecord cases: a topic's change names it, the cluster's clears all;
    the replay empties ELR and LastKnownElr with a partition epoch bump."""
    img = elr_cluster()
    for b in (1, 2):
        img = fence(img, b)
    assert p0(img).elr == (2,)
    res = alter(img, 2, "t", "min.insync.replicas", "1")
    assert [type(r.message).__name__ for r in res.records] == ["ConfigRecord", "ClearElrRecord"]
    assert res.records[1].message.topic_name == "t"
    cluster = alter(img, 4, "", "min.insync.replicas", "1")
    assert [r.message.topic_name for r in cluster.records[1:]] == [""]
    after = replay(img, cluster.records)
    assert (p0(after).elr, p0(after).partition_epoch) == ((), p0(img).partition_epoch + 1)


def test_turning_elr_on_makes_min_isr_cluster_level():
    """maybeGenerateElrSafetyRecords: the cluster-level value from the controller's properties, the broker-level
    ones removed."""
    img = replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level),
                      m.ConfigRecord(resource_type=4, resource_name="2", name="min.insync.replicas", value="3")])
    records = elr.safety_records(img, {"min.insync.replicas": "2"})
    assert [(r.message.resource_name, r.message.value) for r in records] == [("", "2"), ("2", None)]
    after = replay_all(records, img)
    assert after.configs[(4, "")] == {"min.insync.replicas": "2"} and "min.insync.replicas" not in after.configs.get(
        (4, "2"), {})
    assert elr.bootstrap_records({ft.ELR_VERSION: 1}, {}) == [elr.cluster_min_isr_record({})]
    assert elr.bootstrap_records({ft.ELR_VERSION: 0}, {}) == []


@pytest.mark.parametrize("level, expected", [("4.0-IV0", 0), ("4.1-IV0", 1)])
def test_elr_is_on_by_default_from_4_1(level, expected):
    """Feature.ELIGIBLE_LEADER_REPLICAS_VERSION: level 1 bootstraps from 4.1-IV0."""
    assert ft.kraftwire_defaults(BY_NAME[level])[0][ft.ELR_VERSION] == expected


def test_a_replica_leaving_the_assignment_leaves_the_elr():
    """kraftwire's one deviation from Kafka 4.4's builder (``partitions.target_elr``): a reassignment's cancellation
    drops replica 4 from the assignment; it is not kept eligible (Kafka would keep it, and the partition could never
    elect its last known leader once the others left the ELR)."""
    p = PartitionRegistration((1, 2, 3, 4), (), (1,), (4,), (), 1, 0, 100, 200, (3, 4), ())
    r = change(p, isr=(1,), replicas=(1, 2, 3), adding=(), removing=())
    assert r.replicas == [1, 2, 3] and r.eligible_leader_replicas == [3]
    assert pc.target_elr(p, (), 2) == (1, 3, 4) and pc.target_elr(p, (), 2, replicas=(1, 2, 3)) == (1, 3)
