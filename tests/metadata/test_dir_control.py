"""KIP-858 in the controller: a broker with several log directories says where it placed its replicas
(AssignReplicasToDirs) and reports failed directories in its heartbeat; the controller moves the partitions placed
there out of that broker's ISR and leadership, as Kafka's handleAssignReplicasToDirs and handleDirectoriesOffline
do."""

from __future__ import annotations

import random
import uuid

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata.controller.brokers import BrokerControl
from kraftwire.metadata.controller.topics import ReplicationControl, replica_dir
from kraftwire.metadata.image import UNASSIGNED_DIR, replay_all
from kraftwire.metadata.version import BY_NAME, DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
DIRS = {b: (uuid.UUID(int=100 + b), uuid.UUID(int=200 + b)) for b in (1, 2)}


def _cluster(level=DEFAULT.level):
    img = replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=level)], offset=0)
    bc = BrokerControl(CLUSTER, 9000)
    ids = iter(range(1, 1000))
    rc = ReplicationControl(rng=random.Random(1), new_topic_id=lambda: uuid.UUID(int=next(ids)))
    epochs = {}
    for b in (1, 2):
        R = m.BrokerRegistrationRequest
        res = bc.register(img, R(broker_id=b, cluster_id=CLUSTER, incarnation_id=uuid.UUID(int=b), listeners=[],
                                 features=[R.Feature(name=FEATURE_NAME, min_supported_version=1,
                                                     max_supported_version=DEFAULT.level)],
                                 rack=None, log_dirs=list(DIRS[b])), next_offset=img.offset + 1, now_ms=0)
        img = replay(img, res.records)
        epochs[b] = res.response.broker_epoch
        res = bc.heartbeat(img, m.BrokerHeartbeatRequest(broker_id=b, broker_epoch=epochs[b],
                                                         current_metadata_offset=img.offset), now_ms=0)
        img = replay(img, res.records)
    CT = m.CreateTopicsRequest
    res = rc.create_topics(img, CT(topics=[CT.CreatableTopic(name="t", num_partitions=2, replication_factor=2,
                                                            assignments=[], configs=[])], timeout_ms=1,
                                   validate_only=False))
    img = replay(img, res.records)
    return img, bc, rc, epochs


def _assign(broker, epoch, topic_id, placements):
    A = m.AssignReplicasToDirsRequest
    return A(broker_id=broker, broker_epoch=epoch, directories=[
        A.DirectoryData(id=d, topics=[A.TopicData(topic_id=topic_id, partitions=[
            A.PartitionData(partition_index=i) for i in parts])]) for d, parts in placements.items()])


def test_a_broker_places_its_replicas_and_the_controller_records_it():
    img, bc, rc, epochs = _cluster()
    t = img.topic("t")
    assert all(replica_dir(p, 1) == UNASSIGNED_DIR for p in t.partitions.values())  # several dirs: unassigned
    res = rc.assign_replicas_to_dirs(img, _assign(1, epochs[1], t.id, {DIRS[1][0]: [0], DIRS[1][1]: [1, 7]}))
    codes = [(p.partition_index, p.error_code) for d in res.response.directories for tt in d.topics
             for p in tt.partitions]
    assert res.response.error_code == ec.NONE and codes == [(0, ec.NONE), (1, ec.NONE),
                                                             (7, ec.UNKNOWN_TOPIC_OR_PARTITION)]
    img = replay(img, res.records)
    t = img.topic("t")
    assert replica_dir(t.partitions[0], 1) == DIRS[1][0] and replica_dir(t.partitions[1], 1) == DIRS[1][1]
    assert replica_dir(t.partitions[0], 2) == UNASSIGNED_DIR  # the other replica is untouched
    again = rc.assign_replicas_to_dirs(img, _assign(1, epochs[1], t.id, {DIRS[1][0]: [0]}))
    assert again.records == ()  # already so: nothing to write
    # Kafka's refusals
    assert rc.assign_replicas_to_dirs(img, _assign(1, epochs[1] + 1, t.id, {})).response.error_code == \
        ec.STALE_BROKER_EPOCH
    assert rc.assign_replicas_to_dirs(img, _assign(9, 0, t.id, {})).response.error_code == \
        ec.BROKER_ID_NOT_REGISTERED
    unknown = rc.assign_replicas_to_dirs(img, _assign(1, epochs[1], uuid.UUID(int=999), {DIRS[1][0]: [0]}))
    assert unknown.response.directories[0].topics[0].partitions[0].error_code == ec.UNKNOWN_TOPIC_ID
    old, _, rc_old, epochs_old = _cluster(BY_NAME["3.6-IV2"].level)
    assert rc_old.assign_replicas_to_dirs(old, _assign(1, epochs_old[1], old.topic("t").id, {})).response \
        .error_code == ec.UNSUPPORTED_VERSION


def test_an_offline_directory_moves_its_partitions_and_leaves_the_registration():
    img, bc, rc, epochs = _cluster()
    t = img.topic("t")
    img = replay(img, rc.assign_replicas_to_dirs(img, _assign(1, epochs[1], t.id, {DIRS[1][0]: [0], DIRS[1][1]: [1]}))
                 .records)
    led = {i: p.leader for i, p in img.topic("t").partitions.items()}
    H = m.BrokerHeartbeatRequest
    res = bc.heartbeat(img, H(broker_id=1, broker_epoch=epochs[1], current_metadata_offset=img.offset,
                              offline_log_dirs=[DIRS[1][0]]), now_ms=1)
    img = replay(img, res.records)
    p0, p1 = img.topic("t").partitions[0], img.topic("t").partitions[1]
    assert 1 not in p0.isr and p0.leader == 2  # the partition in the failed directory moved
    assert 1 in p1.isr and p1.leader == led[1]  # the one in the healthy directory did not
    assert img.brokers[1].log_dirs == (DIRS[1][1],) and not img.brokers[1].fenced
    again = bc.heartbeat(img, H(broker_id=1, broker_epoch=epochs[1], current_metadata_offset=img.offset,
                                offline_log_dirs=[DIRS[1][0]]), now_ms=2)
    assert again.records == ()  # reported again: already done
    # a replica assigned to a directory the broker no longer has online leaves the ISR at once
    res = rc.assign_replicas_to_dirs(img, _assign(1, epochs[1], t.id, {DIRS[1][0]: [1]}))
    img = replay(img, res.records)
    assert 1 not in img.topic("t").partitions[1].isr
