"""The active controller's broker decisions (``metadata.controller.brokers``): Kafka's registration errors, the
heartbeat state machine, session expiry; and a seeded simulation of many brokers against one controller whose
records are replayed through the serde into the image after every event, with invariants checked each time."""

from __future__ import annotations

import random
import uuid

import pytest

from harness.metadata import replay, wire

from kraftwire import error_codes as ec
from kraftwire.metadata.controller.brokers import BrokerControl
from kraftwire.metadata.image import MetadataImage, replay_all
from kraftwire.metadata.version import BY_NAME, DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
TIMEOUT = 9000
T1 = uuid.UUID(int=1)


def image(level: int = DEFAULT.level, extra=()) -> MetadataImage:
    return replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=level), *extra])


def registration(bid: int, incarnation: int = 1, *, cluster: str = CLUSTER, mv=(1, DEFAULT.level), dirs=None, **kw):
    R = m.BrokerRegistrationRequest
    return R(broker_id=bid, cluster_id=cluster, incarnation_id=uuid.UUID(int=incarnation),
             listeners=[R.Listener(name="PLAINTEXT", host="localhost", port=9090 + bid, security_protocol=0)],
             features=[R.Feature(name=FEATURE_NAME, min_supported_version=mv[0], max_supported_version=mv[1])],
             rack=None, log_dirs=[uuid.UUID(int=1000 + bid)] if dirs is None else dirs, **kw)


def heartbeat(bid: int, epoch: int, offset: int, *, fence=False, shut=False):
    return m.BrokerHeartbeatRequest(broker_id=bid, broker_epoch=epoch, current_metadata_offset=offset,
                                    want_fence=fence, want_shut_down=shut)


def apply(img: MetadataImage, result, offset: int) -> MetadataImage:
    """Replay a result's records at ``offset``.. through the serde, as a node that fetched them would."""
    return replay(img, result.records, offset + len(result.records) - 1)


def test_registration_writes_the_record_at_the_levels_version_and_the_epoch_is_its_offset():
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = image()
    res = bc.register(img, registration(1), next_offset=42, now_ms=0)
    assert res.response.error_code == ec.NONE and res.response.broker_epoch == 42
    (rec,) = res.records
    assert rec.version == DEFAULT.register_broker_record_version == 4  # 4.3-IV0 on: CordonedLogDirs
    assert rec.message.fenced and rec.message.broker_epoch == 42 and rec.message.log_dirs == [uuid.UUID(int=1001)]
    img = apply(img, res, 42)
    assert img.brokers[1].fenced and img.brokers[1].epoch == 42
    older = image(BY_NAME["3.4-IV0"].level)
    assert bc.register(older, registration(2), next_offset=5, now_ms=0).records[0].version == 2


@pytest.mark.parametrize("req, error", [
    (registration(1, cluster="another"), ec.INCONSISTENT_CLUSTER_ID),
    (registration(1, is_migrating_zk_broker=True), ec.BROKER_ID_NOT_REGISTERED),
    (registration(1, mv=(1, 14)), ec.UNSUPPORTED_VERSION),  # 3.9-IV0 is finalized; the broker stops at 3.6-IV2
    (registration(1, dirs=[uuid.UUID(int=5), uuid.UUID(int=5)]), ec.INVALID_REGISTRATION),
    (registration(1, dirs=[uuid.UUID(int=0)]), ec.INVALID_REGISTRATION),
    (registration(1, dirs=[uuid.UUID(int=1002)]), ec.INVALID_REGISTRATION),  # broker 2's directory
])
def test_registration_errors(req, error):
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = apply(image(), bc.register(image(), registration(2), next_offset=1, now_ms=0), 1)
    res = bc.register(img, req, next_offset=2, now_ms=0)
    assert res.response.error_code == error and res.records == () and res.response.broker_epoch == -1


def test_a_broker_without_a_metadata_version_range_supports_level_1_only():
    bc = BrokerControl(CLUSTER, TIMEOUT)
    req = registration(1)
    req.features = []
    assert bc.register(image(), req, next_offset=1, now_ms=0).response.error_code == ec.UNSUPPORTED_VERSION


def test_a_live_session_of_another_incarnation_is_a_duplicate_and_the_same_incarnation_keeps_its_epoch():
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = apply(image(), bc.register(image(), registration(1), next_offset=1, now_ms=0), 1)
    img = apply(img, bc.heartbeat(img, heartbeat(1, 1, 5), now_ms=100), 2)
    assert not img.brokers[1].fenced
    dup = bc.register(img, registration(1, incarnation=2), next_offset=3, now_ms=200)
    assert dup.response.error_code == ec.DUPLICATE_BROKER_REGISTRATION
    again = bc.register(img, registration(1), next_offset=3, now_ms=200)  # a retry: epoch and flags kept
    assert again.response.broker_epoch == 1 and not again.records[0].message.fenced
    later = bc.register(img, registration(1, incarnation=2), next_offset=3, now_ms=200 + TIMEOUT)
    assert later.response.broker_epoch == 3 and later.records[0].message.fenced  # the old session is over


def test_unregister_takes_the_broker_out_of_every_isr_then_removes_it():
    from kraftwire.metadata.controller.topics import ReplicationControl

    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = image()
    for bid, off in ((1, 1), (2, 2)):
        img = apply(img, bc.register(img, registration(bid), next_offset=off, now_ms=0), off)
        img = apply(img, bc.heartbeat(img, heartbeat(bid, off, 50), now_ms=1), off + 10)
    rc = ReplicationControl(rng=random.Random(1), new_topic_id=lambda: uuid.UUID(int=5))
    CT = m.CreateTopicsRequest
    img = apply(img, rc.create_topics(img, CT(topics=[CT.CreatableTopic(
        name="t", num_partitions=-1, replication_factor=-1, configs=[],
        assignments=[CT.CreatableReplicaAssignment(partition_index=0, broker_ids=[1, 2])])], timeout_ms=1,
        validate_only=False)), 40)
    res = bc.unregister(img, m.UnregisterBrokerRequest(broker_id=1))
    assert res.response.error_code == ec.NONE
    assert [type(r.message).__name__ for r in res.records] == ["PartitionChangeRecord", "UnregisterBrokerRecord"]
    img = apply(img, res, 50)
    assert 1 not in img.brokers and img.topic("t").partitions[0].leader == 2 and img.topic("t").partitions[0].isr == (2,)
    again = bc.unregister(img, m.UnregisterBrokerRequest(broker_id=1))
    assert again.records == () and again.response.error_code == ec.BROKER_ID_NOT_REGISTERED
    assert again.response.error_message == "Broker ID 1 is not currently registered"


def test_a_fenced_registration_has_no_session_to_protect():
    """A broker that was fenced (it shut down, or asked to be) restarts with a new incarnation at once."""
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = apply(image(), bc.register(image(), registration(1), next_offset=1, now_ms=0), 1)
    assert img.brokers[1].fenced
    fresh = bc.register(img, registration(1, incarnation=2), next_offset=2, now_ms=100)
    assert fresh.response.error_code == ec.NONE and fresh.response.broker_epoch == 2


def test_heartbeats_unfence_once_caught_up_and_refuse_a_stale_epoch():
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = apply(image(), bc.register(image(), registration(1), next_offset=10, now_ms=0), 10)
    behind = bc.heartbeat(img, heartbeat(1, 10, 9), now_ms=1)
    assert behind.records == () and behind.response.is_fenced and not behind.response.is_caught_up
    wants_fence = bc.heartbeat(img, heartbeat(1, 10, 10, fence=True), now_ms=1)
    assert wants_fence.records == () and wants_fence.response.is_fenced
    up = bc.heartbeat(img, heartbeat(1, 10, 10), now_ms=2)
    assert not up.response.is_fenced and up.response.is_caught_up
    assert up.records[0].message.fenced == -1 and up.records[0].version == DEFAULT.broker_registration_change_record_version
    for bad in (heartbeat(1, 9, 10), heartbeat(2, 10, 10)):
        res = bc.heartbeat(img, bad, now_ms=3)
        assert res.response.error_code == ec.STALE_BROKER_EPOCH and res.records == ()


def test_controlled_shutdown_moves_leadership_away_then_shuts_down():
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = apply(image(), bc.register(image(), registration(1), next_offset=1, now_ms=0), 1)
    img = apply(img, bc.heartbeat(img, heartbeat(1, 1, 1), now_ms=1), 2)
    led = replay_all([m.TopicRecord(name="t", topic_id=T1),
                      m.PartitionRecord(partition_id=0, topic_id=T1, replicas=[1], isr=[1], leader=1)], img, 4)
    res = bc.heartbeat(led, heartbeat(1, 1, 4, shut=True), now_ms=2)
    # Kafka's order: the broker is marked in controlled shutdown, then leaves its leaderships; the last ISR member
    # stays in the ISR (it is never written empty) and the partition goes leaderless
    kinds = [type(r.message).__name__ for r in res.records]
    assert kinds == ["BrokerRegistrationChangeRecord", "PartitionChangeRecord"]
    assert res.records[0].message.in_controlled_shutdown == 1 and not res.response.should_shut_down
    assert res.records[1].message.leader == -1 and res.records[1].message.isr is None
    led = apply(led, res, 6)
    assert led.brokers[1].in_controlled_shutdown and not led.brokers[1].fenced
    assert led.topics[T1].partitions[0].leader == -1 and led.topics[T1].partitions[0].isr == (1,)
    done = bc.heartbeat(led, heartbeat(1, 1, 6, shut=True), now_ms=4)
    assert done.response.should_shut_down and done.response.is_fenced and done.records[-1].message.fenced == 1
    # a broker that leads nothing shuts down at once; a fenced one too, without a record
    bc2 = BrokerControl(CLUSTER, TIMEOUT)
    img2 = apply(image(), bc2.register(image(), registration(2), next_offset=1, now_ms=0), 1)
    fenced_shut = bc2.heartbeat(img2, heartbeat(2, 1, 1, shut=True), now_ms=1)
    assert fenced_shut.response.should_shut_down and fenced_shut.records == ()


def test_sessions_expire_one_broker_at_a_time_and_a_new_controller_starts_them_afresh():
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = image()
    for bid in (1, 2):
        img = apply(img, bc.register(img, registration(bid), next_offset=bid, now_ms=0), bid)
        img = apply(img, bc.heartbeat(img, heartbeat(bid, bid, 10), now_ms=bid), 10 + bid)
    assert bc.expire(img, TIMEOUT) is None
    first = bc.expire(img, TIMEOUT + 5)
    assert first.records[0].message.broker_id == 1
    img = apply(img, first, 20)
    second = bc.expire(img, TIMEOUT + 5)
    assert second.records[0].message.broker_id == 2
    img = apply(img, second, 21)
    assert bc.expire(img, TIMEOUT + 5) is None and all(b.fenced for b in img.brokers.values())
    fresh = BrokerControl(CLUSTER, TIMEOUT)
    fresh.activate(img, now_ms=50_000)
    assert fresh.expire(img, 50_000 + TIMEOUT - 1) is None


@pytest.mark.parametrize("seed", range(40))
def test_simulation_brokers_against_one_controller(seed):
    """Random registrations, heartbeats (lagging, fencing, shutting down), restarts with new incarnations and
    silences; after every event the records are replayed and the invariants hold. A failure names the seed."""
    rng = random.Random(seed)
    bc = BrokerControl(CLUSTER, TIMEOUT)
    img = image()
    offset, now = 1, 0
    incarnation = {b: 1 for b in range(1, 5)}
    epochs: dict[int, int] = {}
    seen_epochs: set[int] = set()
    trail = []
    for step in range(300):
        now += rng.choice((10, 100, 1000, 4000))
        bid = rng.randrange(1, 5)
        kind = rng.choice(("register", "heartbeat", "heartbeat", "heartbeat", "restart", "expire"))
        trail.append((step, kind, bid, now))
        before = img
        if kind == "restart":
            incarnation[bid] += 1
            epochs.pop(bid, None)
            continue
        if kind == "expire":
            res = bc.expire(img, now)
            if res is not None:
                victim = res.records[0].message.broker_id
                assert not before.brokers[victim].fenced, (seed, trail)
                img = apply(img, res, offset)
                offset += len(res.records)
            continue
        if kind == "register" or bid not in epochs:
            res = bc.register(img, registration(bid, incarnation[bid]), next_offset=offset, now_ms=now)
            if res.response.error_code == ec.NONE:
                epoch = res.response.broker_epoch
                new = before.brokers.get(bid) is None or before.brokers[bid].incarnation_id != uuid.UUID(
                    int=incarnation[bid])
                if new:
                    assert epoch == offset and epoch not in seen_epochs, (seed, trail)
                    seen_epochs.add(epoch)
                epochs[bid] = epoch
            else:
                assert res.response.error_code == ec.DUPLICATE_BROKER_REGISTRATION, (seed, trail)
        else:
            lag = rng.choice((0, 0, 0, 5, 50))
            req = heartbeat(bid, epochs[bid], max(-1, offset - 1 - lag), fence=rng.random() < 0.05,
                            shut=rng.random() < 0.1)
            res = bc.heartbeat(img, req, now_ms=now)
            b = before.brokers.get(bid)
            if res.response.error_code == ec.NONE:
                caught_up = req.current_metadata_offset >= b.epoch
                if b.fenced and not res.response.is_fenced:
                    assert caught_up and not req.want_fence, (seed, trail)  # unfence only when caught up
            else:
                assert res.response.error_code == ec.STALE_BROKER_EPOCH and res.records == (), (seed, trail)
                epochs.pop(bid, None)
        img = apply(img, res, offset)
        offset += len(res.records)
        if res.response is not None and getattr(res.response, "should_shut_down", False):
            assert img.brokers[bid].fenced, (seed, trail)  # told to shut down only once fenced
        if res.response is not None and hasattr(res.response, "is_fenced") and res.response.error_code == ec.NONE:
            assert img.brokers[bid].fenced == res.response.is_fenced, (seed, trail)
        # the image and its snapshot form agree at every step
        snapshot = [r.message for r in wire(img.records())]
        assert replay_all(snapshot, offset=img.offset) == img, (seed, trail)
