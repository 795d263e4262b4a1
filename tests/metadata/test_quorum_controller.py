"""The quorum's controller (``metadata.controller.quorum``): activation writes the bootstrap in a metadata
transaction, requests see each other before commit, leadership loss forgets the uncommitted part; and a seeded
simulation of three controllers over one replicated log with failovers (the uncommitted suffix kept or truncated),
lagging followers and idle ticks. After every event:

* every controller's committed image is the same at the same offset (images equal at equal offsets);
* a topic is whole or absent in every committed image (partitions 0..n-1), never half-created across a failover;
* a response is released only once its records are committed, and what it says is in the committed image;
* the active controller's latest image equals its committed image once all it wrote is committed.

A failure names the seed and the trail of events."""

from __future__ import annotations

import random
import uuid

import pytest

from harness.metadata import wire

from kraftwire import error_codes as ec
from kraftwire.metadata.bootstrap import bootstrap_records
from kraftwire.metadata.controller.quorum import NotActive, QuorumController
from kraftwire.metadata.features import supported_ranges
from kraftwire.metadata.version import BY_NAME, DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
CT = m.CreateTopicsRequest
SUPPORTED = supported_ranges()


def controller(node_id: int, seed: int = 0) -> QuorumController:
    ids = iter(range(node_id * 1_000_000, (node_id + 1) * 1_000_000))
    return QuorumController(node_id, CLUSTER, rng=random.Random(seed * 10 + node_id),
                            new_uuid=lambda: uuid.UUID(int=next(ids)), supported_features=SUPPORTED,
                            default_partitions=2, default_replication_factor=2)


def registration(bid: int, incarnation: int = 1):
    R = m.BrokerRegistrationRequest
    return R(broker_id=bid, cluster_id=CLUSTER, incarnation_id=uuid.UUID(int=incarnation), listeners=[],
             features=[R.Feature(name=name, min_supported_version=lo, max_supported_version=hi)
                       for name, (lo, hi) in supported_ranges().items()], rack=None, log_dirs=[])


def test_activation_on_an_empty_log_writes_the_bootstrap_in_a_transaction():
    c = controller(1)
    boot = bootstrap_records(DEFAULT).records
    first = c.activate(0, boot)
    kinds = [type(r.message).__name__ for r in first]
    # metadata.version, group.version 1, share.version 2, transaction.version 2 and eligible.leader.replicas.version
    # 1 (the default level's features); with ELR on, ActivationRecordsGenerator adds the cluster-level
    # min.insync.replicas
    assert kinds == ["BeginTransactionRecord", *["FeatureLevelRecord"] * 5, "ConfigRecord", "EndTransactionRecord"]
    config = first[-2].message
    assert (config.resource_type, config.resource_name, config.name, config.value) == (4, "", "min.insync.replicas",
                                                                                       "1")
    c.write(first, 1)
    assert c.latest.metadata_version == DEFAULT and c.committed.metadata_version is None
    # before 3.6-IV1 there are no metadata transactions: the bootstrap is written as it is
    old = controller(2).activate(0, bootstrap_records(BY_NAME["3.5-IV2"]).records)
    assert [type(r.message).__name__ for r in old] == ["FeatureLevelRecord"]
    # a log that already has metadata gets no second bootstrap
    c2 = controller(3)
    c2.replay_committed(2, wire(first))
    assert c2.committed.metadata_version == DEFAULT
    assert c2.activate(5, boot) == ()


def test_requests_see_each_other_before_commit_and_losing_leadership_forgets_them():
    c = controller(1)
    boot = c.activate(0, bootstrap_records(DEFAULT).records)
    c.write(boot, 0)
    c.replay_committed(len(boot) - 1, wire(boot))
    offset = len(boot)
    for bid in (1, 2):
        res = c.handle("BrokerRegistration", registration(bid), 0, now_ms=1, next_offset=offset)
        assert res.response.error_code == ec.NONE and res.response.broker_epoch == offset
        c.write(res.records, offset)
        offset += len(res.records)
    req = CT(topics=[CT.CreatableTopic(name="t", num_partitions=1, replication_factor=2, assignments=[], configs=[])],
             timeout_ms=1, validate_only=False)
    # the brokers are registered in the latest image (not yet committed), but fenced: nobody can lead
    res = c.handle("CreateTopics", req, 7, now_ms=2, next_offset=offset)
    assert res.response.topics[0].error_code == ec.INVALID_REPLICATION_FACTOR
    assert c.committed.brokers == {}
    c.deactivate()
    assert c.latest == c.committed and c.latest.brokers == {}
    with pytest.raises(NotActive):
        c.handle("CreateTopics", req, 7, now_ms=3, next_offset=offset)


def test_tick_writes_noops_when_idle_and_expires_sessions():
    c = controller(1)
    boot = c.activate(0, bootstrap_records(DEFAULT).records)
    c.write(boot, 0)
    assert c.tick(100) == []
    (noop,) = c.tick(500)
    assert isinstance(noop.records[0].message, m.NoOpRecord)
    assert controller(2).tick(10_000) == []  # not active: nothing


def test_tick_rebalances_leaders_every_check_interval_when_enabled():
    tid = uuid.UUID(int=77)
    image = [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)]
    image += [m.RegisterBrokerRecord(broker_id=b, incarnation_id=uuid.UUID(int=b), broker_epoch=b, end_points=[],
                                     features=[], fenced=False, log_dirs=[]) for b in (1, 2)]
    image += [m.TopicRecord(name="t", topic_id=tid),
              m.PartitionRecord(partition_id=0, topic_id=tid, replicas=[1, 2], isr=[1, 2], leader=2, leader_epoch=3)]
    for interval, expected in ((1000, 1), (0, 0)):
        c = controller(1)
        c.leader_rebalance_interval_ms = interval
        c.idle_interval_ms = 0
        c.load_snapshot(10, image)
        assert c.activate(0) == ()
        assert c.tick(999) == []
        moved = c.tick(1000)
        assert len(moved) == expected
        if expected:
            [change] = moved[0].records
            assert change.message.leader == 1 and change.message.partition_id == 0


# ================================================================================================================
# the simulation
# ================================================================================================================
class Log:
    """The replicated log as the controllers see it: batches with their offsets; a prefix is committed."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, tuple]] = []  # (first offset, records)
        self.committed = 0  # batches committed

    @property
    def end_offset(self) -> int:
        if not self.batches:
            return 0
        first, records = self.batches[-1]
        return first + len(records)

    def append(self, records) -> int:
        offset = self.end_offset
        self.batches.append((offset, tuple(records)))
        return len(self.batches) - 1


@pytest.mark.parametrize("seed", range(30))
def test_quorum_controller_simulation(seed):
    rng = random.Random(seed)
    nodes = {i: controller(i, seed) for i in (1, 2, 3)}
    applied = {i: 0 for i in nodes}  # batches each controller has replayed
    images_at: dict[int, object] = {}
    log = Log()
    leader = None
    waiting: list[tuple[int, str, object]] = []  # (batch index, api, response) not yet released
    epochs: dict[int, int] = {}
    now = 0
    trail: list[str] = []
    boot = bootstrap_records(DEFAULT).records
    stats = {"failovers": 0, "truncated": 0, "released": 0, "created": 0}

    def ctx():
        return seed, trail[-15:]

    def catch_up(i: int, upto: int) -> None:
        while applied[i] < min(upto, log.committed):
            first, records = log.batches[applied[i]]
            published = nodes[i].replay_committed(first + len(records) - 1, wire(records))
            applied[i] += 1
            if published is None:
                continue
            seen = images_at.setdefault(published.offset, published)
            assert seen == published, ("images differ at offset", published.offset, ctx())
            for t in published.topics.values():
                assert set(t.partitions) == set(range(len(t.partitions))), ("half a topic", t, ctx())

    def release() -> None:
        nonlocal waiting
        still = []
        for index, api, response in waiting:
            if index >= log.committed:
                still.append((index, api, response))
                continue
            stats["released"] += 1
            catch_up(leader, log.committed)
            image = nodes[leader].committed
            if api == "CreateTopics":
                for t in response.topics:
                    if t.error_code == ec.NONE:
                        stats["created"] += 1
                        topic = image.topic(t.name)
                        # what the answer says is committed (a later delete may have removed it since)
                        assert topic is None or len(topic.partitions) >= t.num_partitions, ctx()
            elif api == "BrokerRegistration" and response.error_code == ec.NONE:
                assert response.broker_epoch <= image.offset, ctx()
        waiting = still

    def become_leader(i: int) -> None:
        nonlocal leader
        leader = i
        catch_up(i, log.committed)
        first = nodes[i].activate(now, boot)
        if first:
            offset = log.end_offset
            nodes[i].write(first, offset)
            log.append(first)

    become_leader(1)
    for _ in range(220):
        now += rng.randrange(1, 1500)
        roll = rng.random()
        c = nodes[leader]
        if roll < 0.06:  # failover
            stats["failovers"] += 1
            c.deactivate()
            waiting = [w for w in waiting if w[0] < log.committed]  # the rest are answered NOT_CONTROLLER
            if rng.random() < 0.5 and log.committed < len(log.batches):
                stats["truncated"] += len(log.batches) - log.committed
                del log.batches[log.committed:]
                trail.append("failover (truncated)")
            else:
                log.committed = len(log.batches)  # the new leader's log has them: they commit in its epoch
                trail.append("failover (kept)")
            release()
            become_leader(rng.choice([i for i in nodes if i != leader]))
            continue
        if roll < 0.30:  # commit some, followers catch up at their own pace
            log.committed = min(len(log.batches), log.committed + rng.randrange(1, 4))
            for i in nodes:
                if i == leader or rng.random() < 0.7:
                    catch_up(i, log.committed)
            release()
            if applied[leader] == len(log.batches):
                assert c.latest == c.committed, ("latest differs from committed", ctx())
            trail.append(f"commit {log.committed}")
            continue
        if roll < 0.36:
            for res in c.tick(now):
                c.write(res.records, log.end_offset)
                log.append(res.records)
            trail.append("tick")
            continue
        api, req, version = _request(rng, c.latest, epochs)
        next_offset = log.end_offset
        res = c.handle(api, req, version, now_ms=now, next_offset=next_offset)
        trail.append(f"{api}")
        if res.records:
            c.write(res.records, next_offset)
            index = log.append(res.records)
        else:
            index = log.committed - 1  # nothing to commit: answered at once
        if api == "BrokerRegistration" and res.response.error_code == ec.NONE:
            epochs[req.broker_id] = res.response.broker_epoch
        waiting.append((max(index, -1), api, res.response))
    log.committed = len(log.batches)
    for i in nodes:
        catch_up(i, log.committed)
    assert nodes[1].committed == nodes[2].committed == nodes[3].committed, ctx()
    assert nodes[leader].latest == nodes[leader].committed, ctx()
    assert stats["failovers"] >= 3 and stats["released"] > 20, stats


def _request(rng, image, epochs):
    roll = rng.random()
    if roll < 0.15 or not epochs:
        return "BrokerRegistration", registration(rng.randrange(1, 5), rng.randrange(1, 3)), 0
    if roll < 0.45:
        bid = rng.choice(sorted(epochs))
        return "BrokerHeartbeat", m.BrokerHeartbeatRequest(
            broker_id=bid, broker_epoch=epochs[bid], current_metadata_offset=image.offset,
            want_fence=rng.random() < 0.05, want_shut_down=rng.random() < 0.05), 0
    if roll < 0.70:
        topics = [CT.CreatableTopic(name=rng.choice("abcdef"), num_partitions=rng.choice([-1, 1, 3]),
                                    replication_factor=rng.choice([-1, 1, 2]), assignments=[], configs=[])
                  for _ in range(rng.randrange(1, 3))]
        return "CreateTopics", CT(topics=topics, timeout_ms=1, validate_only=False), 7
    if roll < 0.78 and image.topic_ids:
        D = m.DeleteTopicsRequest
        return "DeleteTopics", D(topic_names=[rng.choice(sorted(image.topic_ids))], timeout_ms=1), 5
    if roll < 0.86 and image.topic_ids:
        P = m.CreatePartitionsRequest
        name = rng.choice(sorted(image.topic_ids))
        return "CreatePartitions", P(topics=[P.CreatePartitionsTopic(
            name=name, count=len(image.topic(name).partitions) + 1, assignments=None)], timeout_ms=1,
            validate_only=False), 3
    if roll < 0.93:
        E = m.ElectLeadersRequest
        return "ElectLeaders", E(election_type=rng.choice([0, 1]), topic_partitions=None, timeout_ms=1), 2
    bid = rng.choice(sorted(epochs))
    return "AllocateProducerIds", m.AllocateProducerIdsRequest(broker_id=bid, broker_epoch=epochs[bid]), 0
