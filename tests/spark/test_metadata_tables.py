"""Real KRaft log dirs on Spark: the metadata log as tables, and the replica audit over every partition.

One real cluster (a controller and brokers 2, 3, 4, processes from ``harness.roles``) is run once for the module:
topic ``orders.v1-eu`` (2 partitions, replication factor 3) written by confluent-kafka with acks=all, topic
``scratch-1`` created and deleted with ``kraftwire topics``, broker 4 SIGKILLed until the controller fences it;
then every process is killed and the tests read what is on disk:

* the README's two queries over ``__cluster_metadata-0`` (topics created/deleted, broker fencing history);
* ``kraftwire audit`` over the four log dirs passes; copies with a diverged record below the high watermark, a
  flipped byte and a missing range fail, each finding naming topic, partition, broker and offset.
"""

from __future__ import annotations

import json
import os
import shutil
import struct

import crc32c
import pytest

from kraftwire.cli import main
from kraftwire.log.checkpoint import parse_offset_checkpoint
from kraftwire.records import api as layout
from kraftwire.records import read_batches
from kraftwire.spark.audit import audit

from harness import processes, roles

TOPIC = "orders.v1-eu"
RECORDS = 200

# The README's queries (``meta`` is a temp view of the controller's log dir read by the kraftwire source).
TOPICS_CREATED_AND_DELETED = """
SELECT get_json_object(c.record_json, '$.name')    AS topic,
       get_json_object(c.record_json, '$.topicId') AS topic_id,
       timestamp_millis(c.timestamp)               AS created,
       timestamp_millis(d.timestamp)               AS deleted
FROM meta c LEFT JOIN meta d
  ON d.record_type = 'RemoveTopicRecord'
 AND get_json_object(d.record_json, '$.topicId') = get_json_object(c.record_json, '$.topicId')
WHERE c.record_type = 'TopicRecord'
ORDER BY c.offset
"""

BROKER_FENCING_HISTORY = """
SELECT CAST(coalesce(get_json_object(record_json, '$.brokerId'), get_json_object(record_json, '$.id')) AS INT)
         AS broker,
       CAST(coalesce(get_json_object(record_json, '$.brokerEpoch'), get_json_object(record_json, '$.epoch')) AS BIGINT)
         AS broker_epoch,
       timestamp_millis(timestamp) AS at, offset, record_type,
       CASE
         WHEN record_type = 'RegisterBrokerRecord' THEN 'REGISTERED'
         WHEN record_type = 'UnregisterBrokerRecord' THEN 'UNREGISTERED'
         WHEN record_type = 'FenceBrokerRecord' THEN 'FENCED'
         WHEN record_type = 'UnfenceBrokerRecord' THEN 'UNFENCED'
         WHEN get_json_object(record_json, '$.fenced') = '1' THEN 'FENCED'
         WHEN get_json_object(record_json, '$.fenced') = '-1' THEN 'UNFENCED'
         WHEN get_json_object(record_json, '$.inControlledShutdown') = '1' THEN 'CONTROLLED_SHUTDOWN'
       END AS state
FROM meta
WHERE record_type IN ('RegisterBrokerRecord', 'UnregisterBrokerRecord', 'BrokerRegistrationChangeRecord',
                      'FenceBrokerRecord', 'UnfenceBrokerRecord')
ORDER BY broker, offset
"""


def _checkpointed(root: str) -> dict:
    try:
        return parse_offset_checkpoint(open(os.path.join(root, "replication-offset-checkpoint")).read())
    except (OSError, ValueError):
        return {}


def _leader_hws(base: str) -> dict:
    """partition -> the largest high watermark brokers 2 and 3 checkpointed for it."""
    out: dict = {}
    for b in (2, 3):
        for (t, p), v in _checkpointed(os.path.join(base, f"kraft-logs-{b}")).items():
            if t == TOPIC:
                out[p] = max(out.get(p, 0), v)
    return out


@pytest.fixture(scope="module")
def cluster_dirs(tmp_path_factory):
    from confluent_kafka import Producer

    base = str(tmp_path_factory.mktemp("kraft"))
    cluster = roles.RolesCluster(base, controllers=1, brokers=3, kraft=True)
    try:
        for node in cluster.nodes.values():
            node.start()
        cluster.wait_for_leader()
        ports = {n.node_id: n.port_of("BROKER") for n in cluster.brokers}
        bootstrap = ",".join(f"localhost:{p}" for p in ports.values())
        roles.wait_until(lambda: all(roles.broker_ids(p) == [2, 3, 4] for p in ports.values()),
                         "three brokers unfenced", cluster)
        processes.kw("topics", "--create", "--topic", TOPIC, "--partitions", "2", "--replication-factor", "3",
                     "--bootstrap-server", bootstrap)
        processes.kw("topics", "--create", "--topic", "scratch-1", "--partitions", "1", "--replication-factor", "3",
                     "--bootstrap-server", bootstrap)
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                             "linger.ms": 0})
        errors = []
        for i in range(RECORDS):
            producer.produce(TOPIC, partition=i % 2, key=f"k{i % 7}".encode(), value=f"value-{i:05d}".encode(),
                             on_delivery=lambda err, msg: errors.append(err) if err else None)
            if i % 10 == 9:
                assert producer.flush(30) == 0  # small batches: a log of several batches per partition
        assert not errors, errors[:3]
        del producer  # its threads end: no reconnect attempts to the brokers killed below
        processes.kw("topics", "--delete", "--topic", "scratch-1", "--bootstrap-server", bootstrap)
        cluster.nodes[4].kill()
        roles.wait_until(lambda: roles.broker_ids(ports[2]) == [2, 3], "broker 4 fenced", cluster)
        # the partition leaders' replication-offset-checkpoint (written on their beat) holds every record as committed
        roles.wait_until(lambda: _leader_hws(base) == {0: RECORDS // 2, 1: RECORDS // 2}, "high watermarks checkpointed",
                         cluster)
    finally:
        cluster.close()
    return {"base": base, "logdirs": [os.path.join(base, f"kraft-logs-{i}") for i in (1, 2, 3, 4)]}


def _meta(spark, cluster_dirs):
    df = (spark.read.format("kraftwire").option("decodeMetadata", "true")
          .load(cluster_dirs["logdirs"][0]).where("topic = '__cluster_metadata'"))
    df.createOrReplaceTempView("meta")
    return df


def test_metadata_log_as_tables(spark, cluster_dirs):
    meta = _meta(spark, cluster_dirs)
    kinds = {r["record_type"]: r["record_version"] for r in meta.select("record_type", "record_version").collect()}
    assert {"TopicRecord", "PartitionRecord", "RegisterBrokerRecord", "BrokerRegistrationChangeRecord",
            "RemoveTopicRecord", "FeatureLevelRecord"} <= set(kinds)
    assert kinds["RegisterBrokerRecord"] >= 0

    topics = spark.sql(TOPICS_CREATED_AND_DELETED).collect()
    by_name = {r["topic"]: r for r in topics}
    assert set(by_name) == {TOPIC, "scratch-1"}
    assert by_name[TOPIC]["deleted"] is None and len(by_name[TOPIC]["topic_id"]) == 22
    assert by_name["scratch-1"]["deleted"] >= by_name["scratch-1"]["created"] >= by_name[TOPIC]["created"]
    partitions = meta.where("record_type = 'PartitionRecord'").select("record_json").collect()
    assert sorted(json.loads(r["record_json"])["partitionId"] for r in partitions) == [0, 0, 1]
    assert all(sorted(json.loads(r["record_json"])["replicas"]) == [2, 3, 4] for r in partitions)

    history = spark.sql(BROKER_FENCING_HISTORY).collect()
    states: dict[int, list] = {}
    for r in history:
        states.setdefault(r["broker"], []).append(r["state"])
    assert set(states) == {2, 3, 4}
    for b in (2, 3, 4):
        assert states[b][0] == "REGISTERED" and "UNFENCED" in states[b], states
    assert states[4][-1] == "FENCED" and states[2][-1] == states[3][-1] == "UNFENCED", states
    # without the option (and no filter on record_*) nothing is decoded: the columns stay null
    plain = spark.read.format("kraftwire").load(cluster_dirs["logdirs"][0]).select("record_type", "record_json")
    assert {tuple(r) for r in plain.collect()} == {(None, None)}


def test_fencing_history_of_older_metadata_versions(spark, tmp_path):
    """Metadata versions before KIP-841 fence and unfence with FenceBrokerRecord/UnfenceBrokerRecord (fields ``id``,
    ``epoch``): the same query reads them (a log of such records, framed by Kafka's metadata serde)."""
    from kraftwire.log.segmented import SegmentedLog
    from kraftwire.metadata.records import RECORDS_BY_NAME, encode
    from kraftwire.records import RecordBatchBuilder

    log = SegmentedLog(str(tmp_path / "__cluster_metadata-0"))
    records = [RECORDS_BY_NAME["UnfenceBrokerRecord"](id=5, epoch=7), RECORDS_BY_NAME["FenceBrokerRecord"](id=5, epoch=7),
               RECORDS_BY_NAME["UnregisterBrokerRecord"](broker_id=5, broker_epoch=7)]
    for i, rec in enumerate(records):
        b = RecordBatchBuilder()
        b.append(None, encode(rec, 0), timestamp=1_700_000_000_000 + i)
        log.append_as_leader(b.build(), 1)
    log.close()
    spark.read.format("kraftwire").load(str(tmp_path)).createOrReplaceTempView("meta")  # decoded: filter on record_type
    rows = [(r["broker"], r["broker_epoch"], r["state"]) for r in spark.sql(BROKER_FENCING_HISTORY).collect()]
    assert rows == [(5, 7, "UNFENCED"), (5, 7, "FENCED"), (5, 7, "UNREGISTERED")]


def test_audit_of_every_partition_passes(spark, cluster_dirs):
    report = audit(spark, cluster_dirs["logdirs"])
    assert report.ok, report.render()
    names = {(p.topic, p.partition): sorted(r.node for r in p.replicas) for p in report.partitions}
    assert names == {("__cluster_metadata", 0): [1, 2, 3, 4], (TOPIC, 0): [2, 3, 4], (TOPIC, 1): [2, 3, 4]}
    for part in (0, 1):
        p = report.partition(TOPIC, part)
        assert all(r.status == "ok" for r in p.replicas), report.render()
        assert p.committed_watermark == RECORDS // 2  # the leader's checkpoint; followers' may lag or be absent
        assert {r.log_end_offset for r in p.replicas if r.node in (2, 3)} == {RECORDS // 2}
        assert all(r.high_watermark is None or r.high_watermark <= r.log_end_offset for r in p.replicas)
    assert sum(report.partition(TOPIC, p).replicas[0].records for p in (0, 1)) == RECORDS


def _batches(path: str) -> list[tuple[int, int, int]]:
    """(position, size, base offset) of each batch of a segment."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos + layout.LOG_OVERHEAD <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        out.append((pos, length + layout.LOG_OVERHEAD, base))
        pos += length + layout.LOG_OVERHEAD
    return out


def _segment(root: str, partition: int) -> str:
    return os.path.join(root, f"{TOPIC}-{partition}", "00000000000000000000.log")


def test_audit_names_topic_partition_broker_and_offset(spark, cluster_dirs, tmp_path, capsys):
    copies = {}
    for b in (2, 3, 4):
        copies[b] = str(tmp_path / f"kraft-logs-{b}")
        shutil.copytree(cluster_dirs["logdirs"][b - 1], copies[b])
    # broker 3, partition 0: one record rewritten with a valid CRC (a different committed history)
    seg = _segment(copies[3], 0)
    data = bytearray(open(seg, "rb").read())
    pos, size, _ = _batches(seg)[2]
    record = next(iter(read_batches(bytes(data[pos:pos + size]))))
    first = next(iter(record))
    diverged_at = first.offset
    at = data.index(first.value, pos)
    data[at] ^= 0x20  # "value-..." -> "Value-..."
    struct.pack_into(">I", data, pos + layout.CRC_POS, crc32c.crc32c(bytes(data[pos + layout.CRC_START:pos + size])))
    open(seg, "wb").write(bytes(data))
    # broker 2, partition 1: a flipped payload byte (CRC mismatch)
    seg = _segment(copies[2], 1)
    pos, size, corrupt_base = _batches(seg)[3]
    data = bytearray(open(seg, "rb").read())
    data[pos + size - 2] ^= 0xFF
    open(seg, "wb").write(bytes(data))
    # broker 4, partition 0: a missing range (one batch cut out of the segment)
    seg = _segment(copies[4], 0)
    batches = _batches(seg)
    pos, size, missing_base = batches[4]
    assert batches[5][2] > missing_base  # a later batch follows: a gap, not a shorter log
    data = open(seg, "rb").read()
    open(seg, "wb").write(data[:pos] + data[pos + size:])

    status = main(["audit", "--json", cluster_dirs["logdirs"][0], copies[2], copies[3], copies[4]])
    out = json.loads(capsys.readouterr().out)
    assert status == 1 and not out["ok"]
    parts = {(p["topic"], p["partition"]): p for p in out["partitions"]}
    assert parts[("__cluster_metadata", 0)]["status"] == "ok"
    p0, p1 = parts[(TOPIC, 0)], parts[(TOPIC, 1)]
    text0, text1 = "\n".join(p0["violations"]), "\n".join(p1["violations"])
    assert p0["first_divergence"] == diverged_at
    assert f"{TOPIC}-0: replicas disagree at 1 offset(s) below the committed watermark" in text0, text0
    assert "within one leader epoch" in text0
    assert f"first at offset {diverged_at}: broker 2" in text0 and "broker 3" in text0, text0
    assert f"{TOPIC}-0 on broker 4 ({copies[4]}/{TOPIC}-0): gap starting at offset {missing_base}" in text0, text0
    assert f"{TOPIC}-1 on broker 2 ({copies[2]}/{TOPIC}-1): 1 corrupt batch(es), first in the batch at offset " \
           f"{corrupt_base}" in text1, text1
    assert "crc mismatch" in text1
    statuses = {(r["node"]): r["status"] for r in p1["replicas"]}
    assert statuses == {2: "VIOLATION", 3: "ok", 4: "ok"}
