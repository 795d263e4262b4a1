"""``kraftwire storage random-uuid`` and ``kraftwire storage format``."""

from __future__ import annotations

import re

import pytest

from kraftwire.cli import main
from kraftwire.errors import StorageNotFormattedError
from kraftwire.ids import uuid_from_base64
from kraftwire.log.meta_properties import ensure_formatted, read_meta_properties
from kraftwire.metadata import version as mv
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, Bootstrap, decode_bootstrap_file
from kraftwire.metadata.records import MetadataRecordError
from kraftwire.records import read_batches

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def test_random_uuid(capsys):
    seen = set()
    for _ in range(20):
        assert main(["storage", "random-uuid"]) == 0
        out = capsys.readouterr().out.strip()
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", out) and not out.startswith("-")
        uuid_from_base64(out)
        seen.add(out)
    assert len(seen) == 20


def write_config(tmp_path, node_id=1, extra=""):
    cfg = tmp_path / f"node{node_id}.properties"
    cfg.write_text(
        f"node.id={node_id}\nlisteners=PLAINTEXT://localhost:9092\ncontroller.listener.names=PLAINTEXT\n"
        f"controller.quorum.voters=1@localhost:9092\nlog.dirs={tmp_path}/logs-a,{tmp_path}/logs-b\n{extra}"
    )
    return str(cfg)


def test_format_writes_meta_properties_in_every_dir(tmp_path, capsys):
    cfg = write_config(tmp_path)
    with pytest.raises(StorageNotFormattedError, match="not formatted|does not exist"):
        ensure_formatted(str(tmp_path / "logs-a"))
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    out = capsys.readouterr().out
    assert out == (f"Formatting metadata directory {tmp_path}/logs-a with metadata.version {mv.DEFAULT.name}.\n"
                   f"Formatting data directory {tmp_path}/logs-b with metadata.version {mv.DEFAULT.name}.\n")
    a = read_meta_properties(str(tmp_path / "logs-a"))
    b = read_meta_properties(str(tmp_path / "logs-b"))
    assert (a.version, a.cluster_id, a.node_id) == (1, CLUSTER, 1)
    assert a.directory_id is not None and b.directory_id is not None and a.directory_id != b.directory_id
    text = (tmp_path / "logs-a" / "meta.properties").read_text().splitlines()
    assert text[0] == "#" and text[1].startswith("#")
    assert text[2:] == [f"cluster.id={CLUSTER}", f"directory.id={text[3].split('=')[1]}", "node.id=1", "version=1"]
    assert ensure_formatted(str(tmp_path / "logs-a"), node_id=1) == a


def test_format_refuses_to_reformat(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    before = (tmp_path / "logs-a" / "meta.properties").read_bytes()
    capsys.readouterr()
    assert main(["storage", "format", "-t", "AAAAAAAAAAAAAAAAAAAAAg", "-c", cfg]) == 1
    err = capsys.readouterr().err
    assert "already formatted" in err and "--ignore-formatted" in err
    assert (tmp_path / "logs-a" / "meta.properties").read_bytes() == before
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg, "--ignore-formatted"]) == 0
    assert capsys.readouterr().out == "All of the log directories are already formatted.\n"


def test_format_ignore_formatted_formats_the_others(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    (tmp_path / "logs-b" / "meta.properties").unlink()
    capsys.readouterr()
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 1  # logs-a is formatted: nothing written
    assert not (tmp_path / "logs-b" / "meta.properties").exists()
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg, "-g"]) == 0
    assert capsys.readouterr().out.endswith(f"Formatting data directory {tmp_path}/logs-b with metadata.version "
                                            f"{mv.DEFAULT.name}.\n")


def test_format_metadata_log_dir(tmp_path, capsys):
    cfg = write_config(tmp_path, extra=f"metadata.log.dir={tmp_path}/meta\n")
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (f"Formatting metadata directory {tmp_path}/meta with "
                                                       f"metadata.version {mv.DEFAULT.name}.")


@pytest.mark.parametrize(
    "args, message",
    [
        (["-t", "not-a-uuid"], "does not appear to be a valid UUID"),
        (["-t", CLUSTER, "--standalone"], "a static quorum takes no --standalone"),
        (["-t", CLUSTER, "--initial-controllers", "1@h:1:AAAAAAAAAAAAAAAAAAAAAg"], "a static quorum takes no"),
    ],
)
def test_format_errors(tmp_path, capsys, args, message):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-c", cfg, *args]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "logs-a").exists()


def test_format_bad_config_value_names_the_key(tmp_path, capsys):
    cfg = write_config(tmp_path, node_id=1, extra="metadata.log.segment.bytes=12\n")
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 1
    assert "metadata.log.segment.bytes" in capsys.readouterr().err
    cfg2 = tmp_path / "nonode.properties"
    cfg2.write_text(f"log.dirs={tmp_path}/x\n")
    assert main(["storage", "format", "-t", CLUSTER, "-c", str(cfg2)]) == 1
    assert "node.id" in capsys.readouterr().err


def test_help_names_the_dynamic_quorum_flags(capsys):
    with pytest.raises(SystemExit):
        main(["storage", "format", "--help"])
    out = capsys.readouterr().out
    assert "--standalone" in out and "--initial-controllers" in out and "--no-initial-controllers" in out


# ------------------------------------------------------------------------------------------------ bootstrap
def _bootstrap(path) -> Bootstrap:
    return decode_bootstrap_file((path / BOOTSTRAP_FILE).read_bytes())


def test_format_writes_bootstrap_checkpoint_as_kafka_frames_it(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    data = (tmp_path / "logs-a" / BOOTSTRAP_FILE).read_bytes()
    assert (tmp_path / "logs-b" / BOOTSTRAP_FILE).read_bytes() == data
    # snapshot framing from offset 0 in epoch 0: header control batch, one data batch (five records:
    # metadata.version and four features), footer
    batches = list(read_batches(data))
    assert [(b.base_offset, b.partition_leader_epoch, b.is_control) for b in batches] == [
        (0, 0, True), (1, 0, False), (6, 0, True)]
    rec = list(batches[1])[0]
    assert rec.key is None
    # the value by the spec: frame version 1, api key 12 (FeatureLevelRecord), version 0, name, level, no tags
    name = b"metadata.version"
    assert bytes(rec.value) == bytes([1, 12, 0, len(name) + 1]) + name + mv.DEFAULT.level.to_bytes(2, "big") + b"\0"
    boot = _bootstrap(tmp_path / "logs-a")
    assert boot.metadata_version == mv.DEFAULT
    # metadata.version first, then the other features above 0 by name, as Kafka's formatter writes them
    assert [(r.message.name, r.message.feature_level) for r in boot.records] == [
        ("metadata.version", mv.DEFAULT.level), ("eligible.leader.replicas.version", 1), ("group.version", 1),
        ("share.version", 2), ("transaction.version", 2)]


@pytest.mark.parametrize("args, name, features", [
    (["-r", "3.7"], "3.7-IV4", []),
    (["--release-version", "3.5-IV2"], "3.5-IV2", []),
    (["-f", "metadata.version=14"], "3.6-IV2", []),
    (["-f", "group.version=0", "-r", "3.9"], "3.9-IV0", []),
    (["-r", "3.9", "-f", "transaction.version=1", "-f", "group.version=1"], "3.9-IV0",
     [("group.version", 1), ("transaction.version", 1)]),
    (["-r", "4.0"], "4.0-IV3", [("group.version", 1), ("transaction.version", 2)]),
    (["-r", "4.3", "-f", "group.version=0"], "4.3-IV0",
     [("eligible.leader.replicas.version", 1), ("share.version", 1), ("transaction.version", 2)]),
    (["-r", "4.1", "-f", "eligible.leader.replicas.version=0"], "4.1-IV1",
     [("group.version", 1), ("transaction.version", 2)]),
    (["-r", "3.9", "-f", "transaction.version=2"], "3.9-IV0", [("transaction.version", 2)]),
    (["-r", "4.4-IV1", "-f", "share.version=0", "-f", "streams.version=0"], "4.4-IV1",
     [("eligible.leader.replicas.version", 1), ("group.version", 1), ("transaction.version", 2)]),
    (["-f", "group.version=1", "-f", "group.version=0"], "4.4-IV2",  # the last counts
     [("eligible.leader.replicas.version", 1), ("share.version", 2), ("transaction.version", 2)]),
])
def test_release_version_and_features(tmp_path, capsys, args, name, features):
    """StorageToolTest.testFormatWithReleaseVersion / testFormatWithFeature: a release's default levels (lowered to
    what kraftwire implements), a --feature instead of one; level 0 is not recorded."""
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg, *args]) == 0
    assert f"with metadata.version {name}." in capsys.readouterr().out
    boot = _bootstrap(tmp_path / "logs-a")
    assert boot.metadata_version.name == name
    assert [(r.message.name, r.message.feature_level) for r in boot.records] == [
        ("metadata.version", mv.BY_NAME[name].level), *features]


def test_a_lowered_default_is_said_on_stderr(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg, "-r", "4.3-IV0"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "kraftwire storage format: streams.version=0, not Kafka 4.3's default 1: streams.version=1 needs streams "
        "groups (KIP-1071), which kraftwire does not implement yet; kraftwire supports streams.version up to level 0"]
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg, "-r", "4.1", "--ignore-formatted"]) == 0
    assert capsys.readouterr().err == ""  # eligible.leader.replicas.version 1 (KIP-966) is implemented


#: Kafka 4.4's StorageTool messages (checked with its kafka.tools.StorageTool), and kraftwire's for what it lacks
SUPPORTED_LIST = ("3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, "
                  "3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, "
                  "4.2-IV1, 4.3-IV0, 4.4-IV0, 4.4-IV1, 4.4-IV2")


@pytest.mark.parametrize("args, message", [
    (["-r", "4.5"], f"Unknown metadata.version '4.5'. Supported metadata.version are: {SUPPORTED_LIST}"),
    (["-r", "3.2"], f"Unknown metadata.version '3.2'. Supported metadata.version are: {SUPPORTED_LIST}"),
    (["-r", "3.9", "-f", "metadata.version=21"],
     "Use --release-version instead of --feature metadata.version=X to avoid ambiguity."),
    (["-f", "unicorn.version=1"], "Unsupported feature: unicorn.version. Supported features are: "
     "eligible.leader.replicas.version, group.version, kraft.version, share.version, streams.version, "
     "transaction.version"),
    (["-f", "group.version=3"], "No feature:group.version with feature level 3"),
    (["-f", "metadata.version=5"], "No MetadataVersion with feature level 5. Valid feature levels are from 7 to 34."),
    (["-f", "metadata.version=34"], "metadata.version 4.5-IV0 is not yet stable."),
    (["-f", "group.version=x"], "Can't parse feature=level string group.version=x: unable to parse x as a short."),
    (["-f", "metadata.version"], "Can't parse feature=level string metadata.version: equals sign not found."),
    (["-r", "3.9", "-f", "eligible.leader.replicas.version=1"], "eligible.leader.replicas.version could not be set to "
     "1 because it depends on metadata.version level 23"),
    (["-f", "streams.version=1"], "streams.version=1 needs streams groups (KIP-1071)"),
])
def test_bad_release_or_feature_is_refused_and_writes_nothing(tmp_path, capsys, args, message):
    """StorageToolTest.testFormatWithInvalidFeature / testFormatWithUnsupportedReleaseVersion /
    testFormatWithReleaseVersionAndFeatureOverride..."""
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg, *args]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "logs-a").exists()


def test_a_damaged_bootstrap_file_is_refused_with_the_reason(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    data = (tmp_path / "logs-a" / BOOTSTRAP_FILE).read_bytes()
    with pytest.raises(MetadataRecordError, match="ends inside a batch|no snapshot footer"):
        decode_bootstrap_file(data[:-5])
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    with pytest.raises(MetadataRecordError):
        decode_bootstrap_file(bytes(flipped))
