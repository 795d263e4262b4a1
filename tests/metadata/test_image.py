"""The metadata image: the fold of Kafka's records, and its snapshot form. Property: at every offset of a random valid
history, replaying the image's own records (through the serde, as a snapshot holds them) on an empty image gives the
same image; and folding is deterministic. Plus the fold rules one by one and the contradictions it refuses."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings, strategies as st

from kraftwire.metadata import records as serde
from kraftwire.metadata.image import (UNASSIGNED_DIR, MetadataDelta, MetadataImage, MetadataReplayError,
                                      replay_all)
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

E = m.RegisterBrokerRecord.BrokerEndpoint
T1 = uuid.UUID(int=1)


def broker(i: int, epoch: int = 10, **kw):
    return m.RegisterBrokerRecord(broker_id=i, incarnation_id=uuid.UUID(int=100 + i), broker_epoch=epoch,
                                  end_points=[E(name="BROKER", host="localhost", port=9000 + i, security_protocol=0)],
                                  fenced=True, log_dirs=[uuid.UUID(int=200 + i)], **kw)


def base():
    return [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level), broker(1), broker(2), broker(3)]


def test_topics_partitions_and_changes_follow_kafkas_merge_rules():
    image = replay_all(base() + [
        m.TopicRecord(name="orders", topic_id=T1),
        m.PartitionRecord(partition_id=0, topic_id=T1, replicas=[1, 2, 3], isr=[1, 2, 3], leader=1, leader_epoch=0,
                          partition_epoch=0, directories=[uuid.UUID(int=201), uuid.UUID(int=202), uuid.UUID(int=203)]),
        m.PartitionChangeRecord(partition_id=0, topic_id=T1, isr=[1, 2]),  # ISR only: leader epoch stays
        m.PartitionChangeRecord(partition_id=0, topic_id=T1, leader=2),  # a new leader: leader epoch + 1
        m.PartitionChangeRecord(partition_id=0, topic_id=T1, replicas=[2, 3, 4]),  # 4 has no directory yet
    ])
    p = image.topic("orders").partitions[0]
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2), 2, 1, 3)
    assert p.replicas == (2, 3, 4)
    assert p.directories == (uuid.UUID(int=202), uuid.UUID(int=203), UNASSIGNED_DIR)
    assert image.offset == len(base()) + 5 - 1


def test_broker_registration_changes_fence_unfence_and_shut_down():
    image = replay_all(base() + [
        m.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=-1),
        m.BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=10, fenced=-1),
        m.BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=10, in_controlled_shutdown=1),
        m.BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=10, fenced=1),
        m.UnregisterBrokerRecord(broker_id=3, broker_epoch=10),
    ])
    assert not image.brokers[1].fenced and not image.brokers[1].in_controlled_shutdown
    assert image.brokers[2].fenced and image.brokers[2].in_controlled_shutdown
    assert 3 not in image.brokers


def test_configs_quotas_and_topic_removal():
    image = replay_all(base() + [
        m.TopicRecord(name="orders", topic_id=T1),
        m.ConfigRecord(resource_type=2, resource_name="orders", name="cleanup.policy", value="compact"),
        m.ConfigRecord(resource_type=4, resource_name="", name="log.retention.ms", value="1000"),
        m.ConfigRecord(resource_type=4, resource_name="", name="log.retention.ms", value=None),
        m.ClientQuotaRecord(entity=[m.ClientQuotaRecord.EntityData(entity_type="user", entity_name="alice")],
                            key="producer_byte_rate", value=1024.0),
    ])
    assert image.configs == {(2, "orders"): {"cleanup.policy": "compact"}}
    assert image.client_quotas == {(("user", "alice"),): {"producer_byte_rate": 1024.0}}
    gone = replay_all([m.RemoveTopicRecord(topic_id=T1)], image)
    assert gone.topic("orders") is None and gone.configs == {}
    assert image.topic("orders") is not None, "an image never changes once made"


@pytest.mark.parametrize("record, reason", [
    (m.PartitionChangeRecord(partition_id=0, topic_id=T1, isr=[1]), "does not exist"),
    (m.PartitionRecord(partition_id=0, topic_id=uuid.UUID(int=9), replicas=[1], isr=[1]), "does not exist"),
    (m.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=11, fenced=-1), "its epoch is 10"),
    (m.UnregisterBrokerRecord(broker_id=7, broker_epoch=1), "not registered"),
    (m.TopicRecord(name="orders", topic_id=uuid.UUID(int=2)), "exists already"),
    (m.RemoveTopicRecord(topic_id=uuid.UUID(int=9)), "does not exist"),
    (m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=99), "unknown metadata.version"),
])
def test_contradicting_records_are_refused(record, reason):
    image = replay_all(base() + [m.TopicRecord(name="orders", topic_id=T1)])
    with pytest.raises(MetadataReplayError, match=reason):
        MetadataDelta(image).replay(record)


# ------------------------------------------------------------------------------------------------ property
@st.composite
def histories(draw):
    """A valid history: features first, then brokers, topics, partitions, changes, configs, ACLs, credentials."""
    out = base()
    brokers = {1: 10, 2: 10, 3: 10}
    topics: dict[uuid.UUID, tuple[str, int]] = {}
    acls: list[uuid.UUID] = []
    next_pid = 0
    for step in range(draw(st.integers(0, 40))):
        op = draw(st.sampled_from(["topic", "change", "config", "broker", "fence", "remove", "acl", "scram",
                                   "pid", "quota", "controller", "unacl", "clear_elr"]))
        if op == "topic":
            tid = uuid.UUID(int=1000 + step)
            n = draw(st.integers(1, 3))
            out.append(m.TopicRecord(name=f"t{step}", topic_id=tid))
            for p in range(n):
                reps = draw(st.permutations(sorted(brokers)))[:2]
                out.append(m.PartitionRecord(partition_id=p, topic_id=tid, replicas=reps, isr=reps, leader=reps[0],
                                             leader_epoch=0, partition_epoch=0,
                                             directories=[uuid.UUID(int=r) for r in reps]))
            topics[tid] = (f"t{step}", n)
        elif op == "change" and topics:
            tid = draw(st.sampled_from(sorted(topics)))
            isr = draw(st.none() | st.lists(st.sampled_from(sorted(brokers)), max_size=3, unique=True))
            leader = draw(st.sampled_from([-2, -1] + sorted(brokers)))
            # KIP-966's lists: absent (unchanged), emptied, or set; a snapshot leaves empty ones out
            elr = draw(st.none() | st.lists(st.sampled_from(sorted(brokers)), max_size=2, unique=True))
            known = draw(st.none() | st.lists(st.sampled_from(sorted(brokers)), max_size=1))
            out.append(m.PartitionChangeRecord(partition_id=draw(st.integers(0, topics[tid][1] - 1)), topic_id=tid,
                                               isr=isr, leader=leader, eligible_leader_replicas=elr,
                                               last_known_elr=known))
        elif op == "clear_elr":
            names = [t[0] for t in topics.values()]
            out.append(m.ClearElrRecord(topic_name=draw(st.sampled_from(names + [""]))))
        elif op == "remove" and topics:
            tid = draw(st.sampled_from(sorted(topics)))
            out.append(m.RemoveTopicRecord(topic_id=tid))
            del topics[tid]
        elif op == "config":
            name = draw(st.sampled_from([t[0] for t in topics.values()] or ["x"]))
            out.append(m.ConfigRecord(resource_type=2, resource_name=name, name="retention.ms",
                                      value=draw(st.none() | st.sampled_from(["1", "2"]))))
        elif op == "broker":
            i = draw(st.integers(1, 5))
            brokers[i] = brokers.get(i, 0) + 1
            out.append(broker(i, brokers[i], rack=draw(st.none() | st.just("r1"))))
        elif op == "fence":
            i = draw(st.sampled_from(sorted(brokers)))
            out.append(m.BrokerRegistrationChangeRecord(broker_id=i, broker_epoch=brokers[i],
                                                        fenced=draw(st.sampled_from([-1, 0, 1])),
                                                        in_controlled_shutdown=draw(st.sampled_from([0, 1]))))
        elif op == "acl":
            aid = uuid.UUID(int=5000 + step)
            acls.append(aid)
            out.append(m.AccessControlEntryRecord(id=aid, resource_type=2, resource_name="t", pattern_type=3,
                                                  principal="User:alice", host="*", operation=3, permission_type=3))
        elif op == "unacl" and acls:
            out.append(m.RemoveAccessControlEntryRecord(id=acls.pop()))
        elif op == "scram":
            out.append(m.UserScramCredentialRecord(name=draw(st.sampled_from(["alice", "bob"])), mechanism=1,
                                                   salt=b"s", stored_key=b"k", server_key=b"v", iterations=4096))
        elif op == "pid":
            next_pid += 1000
            out.append(m.ProducerIdsRecord(broker_id=1, broker_epoch=10, next_producer_id=next_pid))
        elif op == "quota":
            out.append(m.ClientQuotaRecord(entity=[m.ClientQuotaRecord.EntityData(entity_type="client-id",
                                                                                 entity_name=None)],
                                           key="request_percentage", value=50.0,
                                           remove=draw(st.booleans())))
        elif op == "controller":
            out.append(m.RegisterControllerRecord(controller_id=draw(st.integers(1, 3)),
                                                  incarnation_id=uuid.UUID(int=step), zk_migration_ready=False))
        if draw(st.booleans()):
            out.append(m.NoOpRecord())
    return out


@settings(max_examples=150, deadline=None)
@given(histories(), st.data())
def test_image_from_replay_equals_image_from_its_snapshot_at_every_offset(history, data):
    image = MetadataImage()
    for offset, record in enumerate(history):
        delta = MetadataDelta(image)
        delta.replay(record)
        image = delta.apply(offset)
        # as a snapshot holds it: records through the serde, then replayed on an empty image
        snapshot = [serde.decode(serde.encode(r.message, r.version)) for r in image.records()]
        assert replay_all(snapshot, offset=offset) == image, f"offset {offset}: {type(record).__name__}"
    # one delta for the whole history gives the same image as one per record
    assert replay_all(history, offset=len(history) - 1) == image
