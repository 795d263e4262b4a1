"""``kraftwire metadata-quorum`` renders DescribeQuorum v2 / DescribeCluster answers as Kafka's tool does, and reads
a controller's configuration for ``add-controller`` / parses ``remove-controller`` as Kafka's MetadataQuorumCommand,
with its outputs and messages."""

from __future__ import annotations

import json
import uuid

import pytest

from kraftwire.cli import main
from kraftwire.config import load_properties
from kraftwire.ids import uuid_to_base64
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.protocol import messages as w
from kraftwire.tools import metadata_quorum as mq
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


# --- KIP-853: add-controller / remove-controller -------------------------------------------------------------------
D2 = uuid.UUID("87654321-4321-8765-4321-876543218765")


def _controller(tmp_path, text: str, *, formatted: bool = True) -> str:
    logs = tmp_path / "meta"
    if formatted:
        logs.mkdir(exist_ok=True)
        write_meta_properties(str(logs), MetaProperties(cluster_id="abc", node_id=2, directory_id=D2))
    path = tmp_path / "controller.properties"
    path.write_text(text.replace("LOGS", str(logs)))
    return str(path)


GOOD = ("process.roles=controller\nnode.id=2\nlisteners=CONTROLLER://:9093,OTHER://[::1]:9095\n"
        "advertised.listeners=CONTROLLER://ctl-2.example:19093\ncontroller.listener.names=CONTROLLER,OTHER\n"
        "metadata.log.dir=LOGS\nlog.dirs=/nowhere\n")


def test_add_controller_reads_the_controller_as_kafkas_tool_does(tmp_path, capsys):
    cfg = _controller(tmp_path, GOOD)
    props = load_properties(cfg)
    assert mq.controller_id(props) == 2
    assert mq.metadata_directory(props) == str(tmp_path / "meta")  # metadata.log.dir before log.dirs
    assert mq.metadata_directory_id(str(tmp_path / "meta")) == D2
    # advertised.listeners over listeners; an empty host is localhost (none here); each controller listener
    assert mq.controller_endpoints(props) == [("CONTROLLER", "ctl-2.example", 19093), ("OTHER", "::1", 9095)]
    assert main(["metadata-quorum", "--bootstrap-controller", "localhost:1", "--command-config", cfg,
                 "add-controller", "--dry-run"]) == 0
    assert capsys.readouterr().out == (f"DRY RUN of adding controller 2 with directory id {uuid_to_base64(D2)} and "
                                       "endpoints: CONTROLLER://ctl-2.example:19093, OTHER://[::1]:9095\n")
    assert mq.added_line(2, D2, [("CONTROLLER", "localhost", 9093)]) == (
        f"Added controller 2 with directory id {uuid_to_base64(D2)} and endpoints: CONTROLLER://localhost:9093")
    body = mq.add_voter_request(2, D2, [("CONTROLLER", "h", 1)], 30_000)
    assert (body.cluster_id, body.timeout_ms, body.voter_id, body.voter_directory_id,
            [(ep.name, ep.host, ep.port) for ep in body.listeners]) == (None, 30_000, 2, D2, [("CONTROLLER", "h", 1)])


@pytest.mark.parametrize("text, formatted, message", [
    ("process.roles=controller\n", True,
     "node.id not found in configuration file. Is this a valid controller configuration file?"),
    ("process.roles=controller\nnode.id=-1\n", True,
     "node.id was negative in configuration file. Is this a valid controller configuration file?"),
    ("process.roles=broker\nnode.id=2\n", True,
     "process.roles did not contain 'controller' in configuration file. Is this a valid controller configuration "
     "file?"),
    ("process.roles=controller\nnode.id=2\n", True,
     "Neither metadata.log.dir nor log.dirs were found. Is this a valid controller configuration file?"),
    ("process.roles=controller\nnode.id=2\nlog.dirs=LOGS\n", False, "Unable to read meta.properties from LOGS"),
    ("process.roles=controller\nnode.id=2\nlog.dirs=LOGS,/other\n", True,
     "controller.listener.names was not found. Is this a valid controller configuration file?"),
    ("process.roles=controller\nnode.id=2\nlog.dirs=LOGS\ncontroller.listener.names=CONTROLLER\n"
     "listeners=PLAINTEXT://:9092\n", True, "Cannot find information about controller listener name: CONTROLLER"),
])
def test_add_controller_refuses_what_kafkas_tool_refuses(tmp_path, capsys, text, formatted, message):
    cfg = _controller(tmp_path, text, formatted=formatted)
    assert main(["metadata-quorum", "--bootstrap-server", "localhost:1", "--command-config", cfg,
                 "add-controller"]) == 1
    err = capsys.readouterr().err
    assert err == message.replace("LOGS", str(tmp_path / "meta")) + "\n"


def test_add_controller_needs_the_controllers_config(tmp_path, capsys):
    assert main(["metadata-quorum", "--bootstrap-server", "localhost:1", "add-controller"]) == 1
    assert capsys.readouterr().err == ("You must supply the configuration file of the controller you are adding when "
                                       "using add-controller.\n")
    assert main(["metadata-quorum", "--bootstrap-server", "localhost:1", "--command-config",
                 str(tmp_path / "missing.properties"), "add-controller"]) == 1
    assert capsys.readouterr().err == f"Properties file {tmp_path / 'missing.properties'} does not exist.\n"
    # kraftwire's --controller.config: the controller's file apart from the connection's client config
    cfg = _controller(tmp_path, GOOD)
    assert main(["metadata-quorum", "--bootstrap-server", "localhost:1", "add-controller", "--controller.config", cfg,
                 "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("DRY RUN of adding controller 2 with directory id ")


def test_remove_controller_output_and_refusals(capsys):
    d = uuid_to_base64(D2)
    assert main(["metadata-quorum", "--bootstrap-controller", "localhost:1", "remove-controller", "-i", "2", "-d", d,
                 "--dry-run"]) == 0
    assert capsys.readouterr().out == f"DRY RUN of removing KRaft controller 2 with directory id {d}\n"
    assert mq.removed_line(2, D2) == f"Removed KRaft controller 2 with directory id {d}"  # Kafka 4.4's "%sKRaft"
    assert main(["metadata-quorum", "--bootstrap-controller", "localhost:1", "remove-controller",
                 "--controller-id", "-3", "--controller-directory-id", d]) == 1
    assert capsys.readouterr().err == "Invalid negative --controller-id: -3\n"
    assert main(["metadata-quorum", "--bootstrap-controller", "localhost:1", "remove-controller",
                 "--controller-id", "2", "--controller-directory-id", "abc"]) == 1
    assert capsys.readouterr().err == ("Failed to parse --controller-directory-id: Input string `abc` decoded as 2 "
                                       "bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID\n")
    assert main(["metadata-quorum", "--bootstrap-controller", "localhost:1", "remove-controller",
                 "--controller-id", "2", "--controller-directory-id", "a.b"]) == 1
    assert capsys.readouterr().err == "Failed to parse --controller-directory-id: Illegal base64 character 2e\n"
    body = mq.remove_voter_request(2, D2)
    assert (body.cluster_id, body.voter_id, body.voter_directory_id) == (None, 2, D2)


def test_remove_controller_with_nothing_listening_fails(capsys):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    assert main(["metadata-quorum", "--bootstrap-server", f"127.0.0.1:{port}", "remove-controller",
                 "--controller-id", "2", "--controller-directory-id", uuid_to_base64(D2)]) == 1
    assert capsys.readouterr().err.startswith("org.apache.kafka.common.errors.TimeoutException: ")


def test_errors_print_as_kafkas_admin_client_exceptions():
    assert mq.java_error(126, "The voter id for ReplicaKey(id=2, ...) is already part of the set of voters [...].") \
        == ("org.apache.kafka.common.errors.DuplicateVoterException: The voter id for ReplicaKey(id=2, ...) is "
            "already part of the set of voters [...].")
    assert mq.java_error(6, None).startswith("org.apache.kafka.common.errors.NotLeaderOrFollowerException: For "
                                             "requests intended only for the leader")
    assert mq.java_error(127, "x") == "org.apache.kafka.common.errors.VoterNotFoundException: x"
    assert mq.endpoint_text("C", "fe80::1", 9) == "C://[fe80::1]:9"


def test_a_controller_that_does_not_lead_is_asked_where_the_active_one_is():
    """Kafka's controller that does not lead answers DescribeQuorum NOT_LEADER_OR_FOLLOWER (kraftwire's answers from
    any voter): the tool asks the active controller its DescribeCluster names, as Kafka's admin client does."""
    from kraftwire.protocol import messages as w
    from kraftwire.tools.metadata_quorum import active_controller

    def quorum(error):
        R = w.DescribeQuorumResponse
        return R(topics=[R.TopicData(topic_name="__cluster_metadata", partitions=[
            R.PartitionData(partition_index=0, error_code=error)])])

    C = w.DescribeClusterResponse
    cluster = C(controller_id=3, brokers=[C.DescribeClusterBroker(broker_id=1, host="h1", port=9093),
                                          C.DescribeClusterBroker(broker_id=3, host="h3", port=9095)])
    assert active_controller(quorum(6), cluster) == ("h3", 9095)
    assert active_controller(quorum(0), cluster) is None
    assert active_controller(quorum(6), C(controller_id=-1, brokers=[])) is None


def test_remove_controller_with_unregister_says_both_steps_as_kafkas_tool(capsys):
    """Kafka 4.4's MetadataQuorumCommand.handleRemoveController with --unregister (KIP-1312): the removal line, then
    ``Unregistered KRaft controller N``; a dry run sends nothing and says both."""
    d = uuid_to_base64(D2)
    assert main(["metadata-quorum", "--bootstrap-controller", "localhost:1", "remove-controller", "-i", "2", "-d", d,
                 "--dry-run", "--unregister"]) == 0
    assert capsys_lines(capsys) == [f"DRY RUN of removing KRaft controller 2 with directory id {d}",
                                    "DRY RUN of unregistering KRaft controller 2"]
    assert mq.unregistered_line(2) == "Unregistered KRaft controller 2"
    # what it says when a step is refused: the admin client's exception message and Kafka's hint
    assert mq.exception_message(127, None) == "The voter is not part of the set of voters."
    assert mq.exception_message(136, None) == "The given controller ID was not registered."
    assert mq.exception_message(136, "Controller ID 2 is not currently registered.") == \
        "Controller ID 2 is not currently registered."
    assert mq.unregister_hint(2) == \
        "To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id 2`."


def capsys_lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()
