"""``kraftwire metadata-shell``: Kafka's image paths over a snapshot, a segment or a metadata directory; one-shot
and interactive; a record it cannot read stops it with the offset. Children are listed by name and ``tree`` prints
as Kafka's shell does (tests/mixed compares the whole tree with Kafka's ``kafka-metadata-shell``)."""

from __future__ import annotations

import io
import uuid

import pytest

from kraftwire.cli import main
from kraftwire.ids import uuid_to_base64
from kraftwire.metadata.image import replay_all
from kraftwire.metadata.snapshot import encode_snapshot, metadata_batches
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m
from kraftwire.records import RecordBatchBuilder
from kraftwire.records.control import leader_change_batch
from kraftwire.tools.metadata_shell import Provenance, Shell, image_tree, java_utc_time, load

TID = uuid.UUID(int=0xABC)
E = m.RegisterBrokerRecord.BrokerEndpoint


def _records():
    return [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level),
            m.RegisterBrokerRecord(broker_id=1, incarnation_id=uuid.UUID(int=5), broker_epoch=3, fenced=True,
                                   end_points=[E(name="PLAINTEXT", host="localhost", port=9092, security_protocol=0)],
                                   rack=None),
            m.TopicRecord(name="orders", topic_id=TID),
            m.PartitionRecord(partition_id=0, topic_id=TID, replicas=[1], isr=[1], leader=1, leader_epoch=0,
                              partition_epoch=0),
            m.ConfigRecord(resource_type=2, resource_name="orders", name="retention.ms", value="60000"),
            m.ConfigRecord(resource_type=4, resource_name="", name="min.insync.replicas", value="1")]


@pytest.fixture
def metadata_dir(tmp_path):
    """A metadata partition directory: a snapshot at offset 5 and a segment whose first records it already covers."""
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    image = replay_all(_records(), offset=4)
    (part / "00000000000000000005-0000000001.checkpoint").write_bytes(encode_snapshot(image, epoch=1, timestamp=0))
    covered = metadata_batches([ApiMessageAndVersion(r, 0) for r in _records()[:1]], base_offset=0, epoch=1,
                               timestamp=0)
    after = metadata_batches([ApiMessageAndVersion(m.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=3,
                                                                                    fenced=-1), 2)],
                             base_offset=6, epoch=2, timestamp=0)
    control = leader_change_batch(1, [1], [1], epoch=2, base_offset=5)
    (part / "00000000000000000000.log").write_bytes(b"".join(covered) + control + b"".join(after))
    return tmp_path


def _run(capsys, *argv):
    status = main(["metadata-shell", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_one_shot_commands_over_a_snapshot_file(tmp_path, capsys):
    path = tmp_path / "00000000000000000005-0000000001.checkpoint"
    path.write_bytes(encode_snapshot(replay_all(_records(), offset=4), epoch=1, timestamp=0))
    assert _run(capsys, "--snapshot", str(path), "ls", "/image")[1].split() == [
        "acls", "clientQuotas", "cluster", "configs", "delegationToken", "features", "producerIds", "provenance",
        "scram", "topics"]
    assert _run(capsys, "-s", str(path), "cat", "/image/features/metadataVersion")[1] == f"Optional[{DEFAULT}]\n"
    assert _run(capsys, "-s", str(path), "cat", "/image/producerIds/nextProducerId")[1] == "-1\n"
    assert _run(capsys, "-s", str(path), "ls", "/image/scram")[1].split() == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    status, out, _ = _run(capsys, "-s", str(path), "cat", "/image/cluster/brokers/1")
    assert status == 0 and out.startswith("BrokerRegistration(id=1, epoch=3, ") and "fenced=true" in out
    assert "rack=Optional.empty" in out and "host='localhost', port=9092" in out
    out = _run(capsys, "-s", str(path), "tree", "/image/topics/byName/orders")[1]
    lines = out.splitlines()
    assert lines[0] == "0:" and lines[2:] == ["id:", f"  {uuid_to_base64(TID)}", "name:", "  orders"]
    assert lines[1].startswith("  PartitionRegistration(replicas=[1], ")
    assert lines[1].endswith("leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0)")
    assert _run(capsys, "-s", str(path), "tree", "/image/topics/byName/orders/name")[1] == "orders\n"
    assert _run(capsys, "-s", str(path), "cat", f"/image/topics/byId/{uuid_to_base64(TID)}/name")[1] == "orders\n"
    assert _run(capsys, "-s", str(path), "cat", "/image/configs/TOPIC:orders/retention.ms")[1] == "60000\n"
    assert _run(capsys, "-s", str(path), "ls", "/image/configs")[1].split() == ["BROKER", "TOPIC:orders"]
    assert _run(capsys, "-s", str(path), "find", "/image/cluster")[1].split() == [
        "/image/cluster", "/image/cluster/brokers", "/image/cluster/brokers/1", "/image/cluster/controllers"]
    status, out, _ = _run(capsys, "-s", str(path), "cat", "/image/topics/nothing")
    assert status == 1 and out == "error: /image/topics/nothing: no such file or directory\n"


def test_a_directory_loads_the_latest_snapshot_then_the_records_after_it(metadata_dir, capsys):
    image, provenance = load(str(metadata_dir))
    assert not image.brokers[1].fenced and image.offset == 6  # the change at offset 6 is applied
    # the last metadata batch (the leader change at offset 5 is a control batch)
    assert image.topic("orders") is not None and provenance == Provenance(6, 2, 0)
    assert _run(capsys, "-s", str(metadata_dir), "cat", "/image/provenance")[1] == (
        "offset 6, epoch 2, time 1970-01-01T00:00:00Z[UTC]\n")
    assert load(str(metadata_dir / "__cluster_metadata-0"))[0] == image
    assert "fenced=false" in _run(capsys, "-s", str(metadata_dir), "cat", "/image/cluster/brokers/1")[1]


def test_the_interactive_shell_keeps_a_working_directory(metadata_dir):
    out = io.StringIO()
    shell = Shell(image_tree(*load(str(metadata_dir))), out)
    shell.interact(io.StringIO("cd /image/topics\npwd\ncd byName/orders\nls\ncat ../orders/name\ncd 0\n"
                               "man ls\nhistory\nexit\nls /\n"))
    lines = out.getvalue().splitlines()
    assert lines[:6] == ["/image/topics", "0", "id", "name", "orders",
                         "error: /image/topics/byName/orders/0: not a directory"]
    assert lines[6] == "ls [PATH...]: list the children of directories (a leaf lists itself)"
    assert lines[-1].endswith("history") and "local" not in lines  # nothing ran after exit


def test_a_record_that_is_not_metadata_stops_the_shell_with_its_offset(tmp_path, capsys):
    client = RecordBatchBuilder(base_offset=1, partition_leader_epoch=1)
    client.append(b"key", b"a client's record, not a metadata record")
    seg = tmp_path / "00000000000000000000.log"
    features = metadata_batches([ApiMessageAndVersion(_records()[0], 0)], base_offset=0, epoch=1, timestamp=0)
    seg.write_bytes(b"".join(features) + client.build())
    status, _, err = _run(capsys, "-s", str(seg), "ls")
    assert status == 1 and "offset 1" in err and str(seg) in err


def test_times_print_as_javas_iso_zoned_date_time_in_utc():
    """``DateTimeFormatter.ISO_ZONED_DATE_TIME`` at UTC, as Kafka's shell prints provenance: seconds always, the
    fraction without trailing zeros."""
    assert java_utc_time(0) == "1970-01-01T00:00:00Z[UTC]"
    assert java_utc_time(1_795_927_877_713) == "2026-11-29T04:51:17.713Z[UTC]"
    assert java_utc_time(1_795_927_860_000) == "2026-11-29T04:51:00Z[UTC]"
    assert java_utc_time(1_795_927_877_570) == "2026-11-29T04:51:17.57Z[UTC]"
    assert java_utc_time(1_795_927_860_050) == "2026-11-29T04:51:00.05Z[UTC]"
