"""A seeded simulation of the active controller's topic and broker decisions together: brokers register, heartbeat,
ask to be fenced, shut down, go silent and come back; clients create, grow and delete topics, leaders shrink and
expand their ISRs (sometimes with stale epochs) and operators run preferred and unclean elections. Every result's
records go through the serde and are replayed into the image; after every event:

* a partition's leader is -1 or an active broker (registered, unfenced, not in controlled shutdown) in its ISR;
* the ISR is non-empty, without duplicates, inside the replicas; replicas are distinct registered-at-creation ids;
* leader epochs never go down and rise exactly when the leader changes; partition epochs rise by one per change;
* a refused request writes nothing; topic names and ids stay unique;
* the image equals the replay of its own records (what a snapshot holds).

A failure names the seed and the trail of events that led to it."""

from __future__ import annotations

import random
import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata.controller.brokers import BrokerControl
from kraftwire.metadata.controller.topics import ReplicationControl, active
from kraftwire.metadata.image import MetadataImage, replay_all
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
TIMEOUT = 9000
SEEDS = 40
EVENTS = 250


def _check(img: MetadataImage, before: MetadataImage, records, ctx) -> None:
    changed = {}
    for r in records:
        if isinstance(r.message, m.PartitionChangeRecord):
            key = (r.message.topic_id, r.message.partition_id)
            changed[key] = changed.get(key, 0) + 1
    names = [t.name for t in img.topics.values()]
    assert len(names) == len(set(names)) and set(img.topic_ids) == set(names), ctx
    for tid, t in img.topics.items():
        for index, p in t.partitions.items():
            assert p.isr and len(set(p.isr)) == len(p.isr) and set(p.isr) <= set(p.replicas), (ctx, p)
            assert len(set(p.replicas)) == len(p.replicas), (ctx, p)
            assert p.leader == -1 or (p.leader in p.isr and active(img, p.leader)), (ctx, t.name, index, p)
            old_t = before.topics.get(tid)
            old = old_t.partitions.get(index) if old_t is not None else None
            if old is None:
                continue
            n = changed.get((tid, index), 0)
            assert p.partition_epoch == old.partition_epoch + n, (ctx, old, p)
            assert p.leader_epoch >= old.leader_epoch, (ctx, old, p)
            if p.leader != old.leader:
                assert p.leader_epoch > old.leader_epoch, (ctx, old, p)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_controller_simulation(seed):
    rng = random.Random(seed)
    id_seq = iter(range(1, 1_000_000))
    rc = ReplicationControl(rng=random.Random(seed + 1000), new_topic_id=lambda: uuid.UUID(int=next(id_seq)),
                            default_partitions=3, default_replication_factor=2)
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)], offset=0)
    now = 0
    epochs: dict[int, int] = {}  # broker -> the epoch it was given
    trail: list[str] = []
    counts: dict[str, int] = {}

    def run(what: str, result):
        nonlocal img
        before = img
        trail.append(what)
        img = replay(img, result.records)
        _check(img, before, result.records, (seed, trail[-12:]))
        counts[what.split()[0]] = counts.get(what.split()[0], 0) + 1
        return result

    for _ in range(EVENTS):
        now += rng.randrange(1, 3000)
        roll = rng.random()
        topics = sorted(img.topic_ids)
        if roll < 0.12:
            bid = rng.randrange(1, 7)
            R = m.BrokerRegistrationRequest
            req = R(broker_id=bid, cluster_id=CLUSTER, incarnation_id=uuid.UUID(int=rng.randrange(1, 4)),
                    listeners=[], features=[R.Feature(name=FEATURE_NAME, min_supported_version=1,
                                                      max_supported_version=DEFAULT.level)],
                    rack=f"r{bid % 2}", log_dirs=[uuid.UUID(int=5000 + bid)])
            res = run(f"register {bid}", bc.register(img, req, next_offset=img.offset + 1, now_ms=now))
            if res.response.error_code == ec.NONE:
                epochs[bid] = res.response.broker_epoch
        elif roll < 0.40 and epochs:
            bid = rng.choice(sorted(epochs))
            req = m.BrokerHeartbeatRequest(broker_id=bid, broker_epoch=epochs[bid],
                                           current_metadata_offset=img.offset - rng.randrange(0, 3),
                                           want_fence=rng.random() < 0.1, want_shut_down=rng.random() < 0.08)
            run(f"heartbeat {bid}{' fence' if req.want_fence else ''}{' shut' if req.want_shut_down else ''}",
                bc.heartbeat(img, req, now_ms=now))
        elif roll < 0.47:
            expired = bc.expire(img, now)
            if expired is not None:
                run("expire", expired)
        elif roll < 0.62:
            CT = m.CreateTopicsRequest
            name = rng.choice(["a", "b", "c", "d.x", "d_x", "e", "", "f" * 250])
            assignments = []
            if rng.random() < 0.2 and img.brokers:
                ids = sorted(img.brokers)
                assignments = [CT.CreatableReplicaAssignment(partition_index=i, broker_ids=rng.sample(ids, 1))
                               for i in range(rng.randrange(1, 3))]
            t = CT.CreatableTopic(name=name, num_partitions=-1 if assignments else rng.choice([-1, 1, 4]),
                                  replication_factor=-1 if assignments else rng.choice([-1, 1, 2, 3]),
                                  assignments=assignments, configs=[])
            if rng.random() < 0.3:
                t.configs.append(CT.CreatableTopicConfig(name="unclean.leader.election.enable", value="true"))
            res = run(f"create {name[:8]}", rc.create_topics(img, CT(topics=[t], timeout_ms=1, validate_only=False)))
            if res.response.topics[0].error_code != ec.NONE:
                assert res.records == (), (seed, trail)
        elif roll < 0.67 and topics:
            D = m.DeleteTopicsRequest
            run("delete", rc.delete_topics(img, D(topic_names=[rng.choice(topics)], timeout_ms=1), 5))
        elif roll < 0.72 and topics:
            P = m.CreatePartitionsRequest
            name = rng.choice(topics)
            count = len(img.topic(name).partitions) + rng.randrange(-1, 3)
            res = run("grow", rc.create_partitions(img, P(topics=[P.CreatePartitionsTopic(
                name=name, count=count, assignments=None)], timeout_ms=1, validate_only=False)))
            if res.response.results[0].error_code != ec.NONE:
                assert res.records == (), (seed, trail)
        elif roll < 0.92 and topics:
            t = img.topic(rng.choice(topics))
            index = rng.choice(sorted(t.partitions))
            p = t.partitions[index]
            if p.leader == -1:
                continue
            isr = [p.leader] + [b for b in p.replicas if b != p.leader and rng.random() < 0.6]
            A = m.AlterPartitionRequest
            stale = rng.random() < 0.15
            req = A(broker_id=p.leader, broker_epoch=epochs.get(p.leader, -1), topics=[A.TopicData(
                topic_id=t.id, partitions=[A.PartitionData(
                    partition_index=index, leader_epoch=p.leader_epoch - (1 if stale else 0), new_isr=isr,
                    new_isr_with_epochs=[A.BrokerState(broker_id=b, broker_epoch=-1) for b in isr],
                    leader_recovery_state=0, partition_epoch=p.partition_epoch)])])
            res = run("alter", rc.alter_partition(img, req, 3))
            code = res.response.error_code or res.response.topics[0].partitions[0].error_code
            if code != ec.NONE:
                assert res.records == (), (seed, trail)
            if stale:
                assert code == ec.FENCED_LEADER_EPOCH, (seed, trail)
        elif topics:
            E = m.ElectLeadersRequest
            kind = rng.choice([0, 1])
            run(f"elect {kind}", rc.elect_leaders(img, E(election_type=kind, topic_partitions=None, timeout_ms=1), 2))
        snapshot = img.records()
        assert replay_all(snapshot, offset=img.offset) == img, (seed, trail[-12:])
    # the run exercised the interesting paths
    assert counts.get("create", 0) > 10 and counts.get("heartbeat", 0) > 20 and counts.get("alter", 0) > 5, counts
