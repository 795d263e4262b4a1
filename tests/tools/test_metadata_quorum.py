"""``kraftwire metadata-quorum`` renders DescribeQuorum v2 / DescribeCluster answers as Kafka's tool does."""

from __future__ import annotations

import json
import uuid

from kraftwire.ids import uuid_to_base64
from kraftwire.protocol import messages as w
from kraftwire.tools.metadata_quorum import replication_lines, status_lines

D1 = uuid.UUID("f7986fa6-abdd-494d-985e-07dd2c8e90a4")
R = w.DescribeQuorumResponse


def _quorum():
    def rs(i, leo, fetch, caught):
        return R.ReplicaState(replica_id=i, replica_directory_id=D1 if i == 1 else uuid.UUID(int=0),
                              log_end_offset=leo, last_fetch_timestamp=fetch, last_caught_up_timestamp=caught)

    part = R.PartitionData(partition_index=0, leader_id=2, leader_epoch=7, high_watermark=95,
                           current_voters=[rs(1, 90, 1000, 900), rs(2, 100, 1000, 1000), rs(3, 100, 990, 990)],
                           observers=[rs(4, 80, 950, -1)])
    nodes = [R.Node(node_id=i, listeners=[R.Listener(name="CONTROLLER", host="h", port=9090 + i)]) for i in (1, 2, 3)]
    return R(topics=[R.TopicData(topic_name="__cluster_metadata", partitions=[part])], nodes=nodes)


def test_status():
    lines = status_lines(_quorum(), w.DescribeClusterResponse(cluster_id="abc"))
    # Kafka's keys, in Kafka's order, values from column 24 exactly as MetadataQuorumCommand prints them
    assert lines[0] == "ClusterId:              abc"
    assert lines[1] == "LeaderId:               2"
    assert lines[2] == "LeaderEpoch:            7"
    assert lines[3] == "HighWatermark:          95"
    assert lines[4] == "MaxFollowerLag:         10"   # leader LEO 100 - min voter LEO 90
    assert lines[5] == "MaxFollowerLagTimeMs:   100"  # leader caught up 1000 - lagging voter 900
    assert lines[6] == ("CurrentVoters:          ["
                        '{"id": 1, "directoryId": "' + uuid_to_base64(D1) + '", "endpoints": ["CONTROLLER://h:9091"], '
                        '"lag": 10}, '
                        '{"id": 2, "directoryId": null, "endpoints": ["CONTROLLER://h:9092"], "lag": 0}, '
                        '{"id": 3, "directoryId": null, "endpoints": ["CONTROLLER://h:9093"], "lag": 0}]')
    # an observer the quorum knows no endpoint for: no "endpoints" key (as Kafka), and its lag (issue #9)
    assert lines[7] == 'CurrentObservers:       [{"id": 4, "directoryId": null, "lag": 20}]'


def test_status_lists_parse_as_json_with_the_replication_lag():
    """The two lists stay a JSON list of objects; "lag" equals the Lag column of --replication for every replica."""
    quorum = _quorum()
    lines = status_lines(quorum, w.DescribeClusterResponse(cluster_id="abc"))
    voters = json.loads(lines[6].split(":", 1)[1])
    observers = json.loads(lines[7].split(":", 1)[1])
    table = {r[0].strip(): int(r[3]) for r in (line.split("\t") for line in replication_lines(quorum, now_ms=0)[1:])}
    assert {str(o["id"]): o["lag"] for o in voters + observers} == table
    assert all(set(o) <= {"id", "directoryId", "endpoints", "lag"} for o in voters + observers)


def test_status_without_a_leader_reports_null_lag():
    quorum = _quorum()
    quorum.topics[0].partitions[0].leader_id = -1
    lines = status_lines(quorum, w.DescribeClusterResponse(cluster_id="abc"))
    assert json.loads(lines[7].split(":", 1)[1]) == [{"id": 4, "directoryId": None, "lag": None}]


def test_replication_table_orders_leader_voters_observers():
    rows = [line.split("\t") for line in replication_lines(_quorum(), now_ms=1500)]
    assert [c.strip() for c in rows[0]] == ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                                            "LastCaughtUpTimestamp", "Status"]
    body = [[c.strip() for c in r] for r in rows[1:]]
    assert [(r[0], r[2], r[3], r[6]) for r in body] == [("2", "100", "0", "Leader"), ("1", "90", "10", "Follower"),
                                                        ("3", "100", "0", "Follower"), ("4", "80", "20", "Observer")]
    human = [[c.strip() for c in line.split("\t")] for line in replication_lines(_quorum(), human_readable=True,
                                                                                  now_ms=1500)[1:]]
    assert human[0][4] == "500 ms ago" and human[3][5] == "-1"
