"""``kraftwire storage format`` for a dynamic quorum (KIP-853): ``--standalone``, ``--initial-controllers`` and
``--no-initial-controllers`` write what Kafka's Formatter writes — the metadata directory's ``directory.id`` taken
from the voter set, and ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`` holding the
SnapshotHeaderRecord, KRaftVersionRecord (kraft.version 1) and VotersRecord — with Kafka's refusals; the voter
syntax is Kafka's ``DynamicVoter``; and a node's later snapshots carry the voter set on."""

from __future__ import annotations

import pytest

from kraftwire.cli import main
from kraftwire.ids import UUID, uuid_to_base64
from kraftwire.log.meta_properties import read_meta_properties
from kraftwire.raft.dynamic_voters import (
    BOOTSTRAP_SNAPSHOT,
    DynamicVoter,
    bootstrap_snapshot,
    endpoints_on,
    parse_voter,
    parse_voters,
    read_voter_set,
    voters_record,
)
from kraftwire.raft.snapshots import build_snapshot
from kraftwire.records import read_batches
from kraftwire.records.control import decode_control_record

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
D1, D2, D3 = (UUID(int=0x1000 + i) for i in (1, 2, 3))


def _config(tmp_path, node_id=1, roles="broker,controller", extra="") -> str:
    cfg = tmp_path / f"n{node_id}.properties"
    cfg.write_text(f"process.roles={roles}\nnode.id={node_id}\n"
                   "listeners=PLAINTEXT://:9092,CONTROLLER://:9093\n"
                   "advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://ctl-1.example:9093\n"
                   "controller.listener.names=CONTROLLER\ncontroller.quorum.bootstrap.servers=localhost:9093\n"
                   f"log.dirs={tmp_path}/logs-{node_id}\n{extra}")
    return str(cfg)


def _checkpoint(tmp_path, node_id=1):
    return (tmp_path / f"logs-{node_id}" / "__cluster_metadata-0" / BOOTSTRAP_SNAPSHOT).read_bytes()


def test_standalone_writes_this_controller_as_the_one_voter(tmp_path, capsys):
    assert main(["storage", "format", "-t", CLUSTER, "-c", _config(tmp_path), "--standalone"]) == 0
    out = capsys.readouterr().out
    assert out == (f"Formatting dynamic metadata voter directory {tmp_path}/logs-1 with metadata.version "
                   f"{__import__('kraftwire.metadata.version', fromlist=['x']).DEFAULT.name}.\n")
    meta = read_meta_properties(str(tmp_path / "logs-1"))
    data = _checkpoint(tmp_path)
    batches = list(read_batches(data))
    assert [(b.base_offset, b.last_offset, b.is_control) for b in batches] == [(0, 2, True), (3, 3, True)]
    kinds = [decode_control_record(r.key, r.value)[0] for b in batches for r in b]
    assert kinds == [3, 5, 6, 4]  # header, kraft.version, voters, footer
    kraft_version, record = read_voter_set(data)
    assert kraft_version == 1 and [v.voter_id for v in record.voters] == [1]
    [v] = record.voters
    assert v.voter_directory_id == meta.directory_id  # the metadata directory is the voter's
    assert [(e.name, e.host, e.port) for e in v.endpoints] == [("CONTROLLER", "ctl-1.example", 9093)]
    assert (v.kraft_version_feature.min_supported_version, v.kraft_version_feature.max_supported_version) == (0, 1)


def test_initial_controllers_name_the_directory_of_each_voter(tmp_path, capsys):
    voters = ",".join(f"{i}@ctl-{i}:9093:{uuid_to_base64(d)}" for i, d in ((1, D1), (2, D2), (3, D3)))
    for node_id in (1, 2, 4):
        roles = "controller" if node_id < 4 else "broker"
        assert main(["storage", "format", "-t", CLUSTER, "-c", _config(tmp_path, node_id, roles),
                     "--initial-controllers", voters]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"Formatting dynamic metadata voter directory {tmp_path}/logs-1 ")
    assert out[2].startswith(f"Formatting dynamic metadata directory {tmp_path}/logs-4 ")  # a broker: not a voter
    assert read_meta_properties(str(tmp_path / "logs-1")).directory_id == D1
    assert read_meta_properties(str(tmp_path / "logs-2")).directory_id == D2
    assert read_meta_properties(str(tmp_path / "logs-4")).directory_id not in (D1, D2, D3)
    for node_id in (1, 2, 4):
        _, record = read_voter_set(_checkpoint(tmp_path, node_id))
        assert endpoints_on(record, "CONTROLLER") == {1: ("ctl-1", 9093), 2: ("ctl-2", 9093), 3: ("ctl-3", 9093)}


def test_no_initial_controllers_formats_without_a_voter_set(tmp_path, capsys):
    assert main(["storage", "format", "-t", CLUSTER, "-c", _config(tmp_path), "-N"]) == 0
    assert capsys.readouterr().out.startswith(f"Formatting metadata directory {tmp_path}/logs-1 ")
    assert not (tmp_path / "logs-1" / "__cluster_metadata-0").exists()


@pytest.mark.parametrize("roles, args, extra, message", [
    ("controller", [], "", "Because controller.quorum.voters is not set on this controller, you must specify one of "
                           "the following: --standalone, --initial-controllers, or --no-initial-controllers."),
    ("broker", ["--standalone"], "", "You can only use --standalone on a controller."),
    ("controller", ["--standalone"], "controller.quorum.voters=1@localhost:9093\n", "a static quorum takes no"),
    ("controller", ["--standalone", "-f", "kraft.version=0"], "",
     "Cannot set kraft.version to 0 if KIP-853 configuration is present."),
    ("controller", ["-N", "-f", "kraft.version=1"], "",
     "Cannot set kraft.version to 1 unless KIP-853 configuration is present."),
    ("controller", ["-I", "1@h:9093:AAAAAAAAAAAAAAAAAAAAAg,1@g:9093:AAAAAAAAAAAAAAAAAAAAAw"], "",
     "Node id 1 was specified more than once."),
    ("controller", ["-I", "1@h:9093:nope"], "", "Failed to parse directory ID in dynamic voter string."),
])
def test_refusals_write_nothing(tmp_path, capsys, roles, args, extra, message):
    assert main(["storage", "format", "-t", CLUSTER, "-c", _config(tmp_path, roles=roles, extra=extra), *args]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "logs-1").exists()


def test_two_quorum_options_at_once_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["storage", "format", "-t", CLUSTER, "-c", _config(tmp_path), "--standalone", "-N"])
    # Kafka's StorageTool exits 1 too (tests/kafka_software/test_exits_and_errors.py runs it beside ours)
    assert exit_.value.code == 1 and "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize("text, message", [
    ("1h:1:AAAAAAAAAAAAAAAAAAAAAg", "No @ found in dynamic voter string."),
    ("@h:1:AAAAAAAAAAAAAAAAAAAAAg", "Invalid @ at beginning of dynamic voter string."),
    ("x@h:1:AAAAAAAAAAAAAAAAAAAAAg", "Failed to parse node id in dynamic voter string."),
    ("-1@h:1:AAAAAAAAAAAAAAAAAAAAAg", "Invalid negative node id -1 in dynamic voter string."),
    ("1@", "No hostname found after node id."),
    ("1@[::1:1:AAAAAAAAAAAAAAAAAAAAAg", "Hostname began with left bracket, but no right bracket was found."),
    ("1@h", "No colon following hostname could be found."),
    ("1@[::1]1:A", "Port section must start with a colon."),
    ("1@h:1", "No colon following port could be found."),
    ("1@h:x:AAAAAAAAAAAAAAAAAAAAAg", "Failed to parse port in dynamic voter string."),
    ("1@h:70000:AAAAAAAAAAAAAAAAAAAAAg", "Invalid port 70000 in dynamic voter string."),
])
def test_kafkas_voter_syntax_and_messages(text, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_voter(text)


def test_voter_parsing_and_ipv6_hosts():
    assert parse_voter(f"3@[::1]:9093:{uuid_to_base64(D3)}") == DynamicVoter(3, "::1", 9093, D3)
    assert [v.node_id for v in parse_voters(f"2@b:2:{uuid_to_base64(D2)},1@a:1:{uuid_to_base64(D1)}")] == [1, 2]
    with pytest.raises(ValueError, match="No voters given."):
        parse_voters("")


def test_a_kraft_version_1_snapshot_carries_the_voter_set_before_its_records():
    record = voters_record([DynamicVoter(1, "h", 9093, D1)], "CONTROLLER")
    data = build_snapshot([b"a", b"b"], epoch=4, timestamp=7, kraft_version=1, voters_record=record)
    batches = list(read_batches(data))
    assert [(b.base_offset, b.last_offset, b.is_control) for b in batches] == [(0, 2, True), (3, 4, False),
                                                                               (5, 5, True)]
    assert read_voter_set(data) == (1, record)
    plain = list(read_batches(build_snapshot([b"a"], epoch=4, timestamp=7)))
    assert [(b.base_offset, b.last_offset) for b in plain] == [(0, 0), (1, 1), (2, 2)]
    assert read_voter_set(build_snapshot([b"a"], epoch=4, timestamp=7)) == (0, None)
    assert read_voter_set(bootstrap_snapshot(record, 7)) == (1, record)


def _compact_string(text: str) -> bytes:
    data = text.encode()
    return bytes([len(data) + 1]) + data  # a uvarint: one byte for short strings


@pytest.mark.parametrize("how", ["--standalone", "--initial-controllers"])
def test_checkpoint_records_byte_for_byte_from_the_specs(tmp_path, capsys, how):
    """The KRaftVersionRecord and VotersRecord of the checkpoint, each key and value as written by hand from
    KRaftVersionRecord.json / VotersRecord.json (flexible from version 0: compact arrays and strings, tagged-field
    sections) and the control key layout (int16 version 0, int16 type)."""
    args = ["--standalone"] if how == "--standalone" else [
        "--initial-controllers", f"1@ctl-1.example:9093:{uuid_to_base64(D1)},2@h2:19093:{uuid_to_base64(D2)}"]
    assert main(["storage", "format", "-t", CLUSTER, "-c", _config(tmp_path), *args]) == 0
    directory = read_meta_properties(str(tmp_path / "logs-1")).directory_id
    voters = [(1, directory, "ctl-1.example", 9093)] if how == "--standalone" else [
        (1, D1, "ctl-1.example", 9093), (2, D2, "h2", 19093)]
    value = b"\x00\x00" + bytes([len(voters) + 1])  # Version 0; Voters: compact array of n
    for voter_id, d, host, port in voters:
        value += voter_id.to_bytes(4, "big") + d.bytes  # VoterId int32, VoterDirectoryId uuid
        value += b"\x02" + _compact_string("CONTROLLER") + _compact_string(host) + port.to_bytes(2, "big") + b"\x00"
        value += b"\x00\x00" + b"\x00\x01" + b"\x00"  # KRaftVersionFeature {Min 0, Max 1}, its tags
        value += b"\x00"  # the voter's tags
    value += b"\x00"  # the record's tags
    records = {r.offset: (bytes(r.key), bytes(r.value)) for b in read_batches(_checkpoint(tmp_path)) for r in b}
    assert records[1] == (b"\x00\x00\x00\x05", b"\x00\x00" + b"\x00\x01" + b"\x00")  # KRaftVersion 1
    assert records[2] == (b"\x00\x00\x00\x06", value)
