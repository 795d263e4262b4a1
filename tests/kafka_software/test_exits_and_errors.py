"""Kafka's exit codes and first error lines (issue 41), each failure run through Kafka 4.4's own tool and kraftwire's
against the same kraftwire node: a flag a tool does not take exits 1 with every kind of Kafka parser (joptsimple's
``printUsageAndExit``, argparse4j's ``handleError``), where Python's argparse exits 2; and the failures a user
causes print Kafka's first line (Kafka's tool goes on with a stack trace, kraftwire's stops there). Where Kafka's
line says less than ours (a bare path; a timeout after 60 s for a server nobody listens on) ours stays, and the test
says so; ``configs --describe --entity-type users`` is also compared with Kafka's tool on Kafka itself. The wrong
password is in ``test_security.py``."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from harness.kafka import KafkaNode, kafka_libs
from harness.kafka_tools import SCRIPTS
from harness.processes import kw

pytestmark = pytest.mark.interop

#: the tools that leave through ``System.exit`` on a usage error, which would end the shared driver JVM: run alone
OWN_JVM = {"kafka-cluster": "org.apache.kafka.tools.ClusterTool",
           "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
           "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer"}
#: every tool kraftwire ships under Kafka's name, by its ``kafka-*`` script (e2e-latency takes positional arguments)
USAGE_CHECKED = sorted(set(SCRIPTS) - {"kafka-clients", "kafka-e2e-latency"})


def _kafka_exit(tools, tool: str, *args: str) -> int:
    if tool in OWN_JVM:
        proc = subprocess.run(["java", "-XX:TieredStopAtLevel=1", "-cp", os.path.join(kafka_libs(), "*"),
                               OWN_JVM[tool], *args], capture_output=True, text=True, timeout=120)
        return proc.returncode
    return tools.run(tool, *args).exit


@pytest.mark.parametrize("tool", USAGE_CHECKED)
def test_an_unknown_flag_exits_1_as_kafkas_tool(tools, tool):
    ours = kw(tool.removeprefix("kafka-"), "--bogus-flag", check=False)
    assert (ours.returncode, _kafka_exit(tools, tool, "--bogus-flag")) == (1, 1), ours.stderr
    assert "Traceback" not in ours.stderr and ": error: " in ours.stderr, ours.stderr


def test_storage_formats_conflicting_quorum_flags_exit_1_as_kafkas(tools, tmp_path):
    """``tests/tools/test_storage_dynamic.py`` checks that nothing is written; here the exit code beside Kafka's."""
    args = ("format", "-t", "AAAAAAAAAAAAAAAAAAAAAA", "-c", str(tmp_path / "absent.properties"), "--standalone", "-N")
    theirs = tools.run("kafka-storage", *args)
    ours = kw("storage", *args, check=False)
    assert (ours.returncode, theirs.exit) == (1, 1), (ours.stderr, theirs.err)
    for err in (theirs.err, ours.stderr):  # argparse4j wraps its line at 80 columns, with doubled spaces
        assert "not allowed with argument" in " ".join(err.split()), err


def _first(text: str) -> str | None:
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("SLF4J")]
    return lines[0] if lines else None


def same_first_line(tools, tool: str, *args: str) -> tuple[int, str]:
    """Kafka's tool and ours exit alike and print the same first line on the same stream (Kafka's stack trace, on
    either, is left out); (exit status, that line)."""
    theirs = tools.run(tool, *args)
    ours = kw(tool.removeprefix("kafka-"), *args, check=False)
    assert "Traceback" not in ours.stderr, ours.stderr
    for kafka_text, our_text in ((theirs.out, ours.stdout), (theirs.err, ours.stderr)):
        if _first(kafka_text) is not None and not _first(kafka_text).startswith(("\tat ", "java.", "joptsimple.")):
            assert _first(our_text) == _first(kafka_text), (theirs, ours.stdout, ours.stderr)
            assert ours.returncode == theirs.exit, (theirs, ours.returncode)
            return ours.returncode, _first(our_text)
    raise AssertionError(f"no first line to compare: {theirs}")


def test_a_missing_or_wrong_file_prints_kafkas_line(tools, node, tmp_path):
    missing = str(tmp_path / "absent.properties")
    b = ("--bootstrap-server", node.bootstrap)
    assert same_first_line(tools, "kafka-metadata-quorum", *b, "--command-config", missing, "describe", "--status") \
        == (1, f"Properties file {missing} does not exist.")
    assert same_first_line(tools, "kafka-transactions", *b, "--command-config", missing, "list")[0] == 1
    assert same_first_line(tools, "kafka-delete-records", *b, "--offset-json-file", missing) == \
        (1, f"Unable to read file {missing}")
    # Kafka's consumer-groups tool exits 0 on a failure, this one too
    assert same_first_line(tools, "kafka-consumer-groups", *b, "--list", "--command-config", missing) == \
        (0, f"Error: Executing consumer group command failed due to java.nio.file.NoSuchFileException: {missing}")
    # Kafka's topics, features, cluster and log-dirs tools print the bare path (java.nio's NoSuchFileException
    # message) and its stack trace: ours names the flag and the problem instead
    for tool, args in (("topics", ("--list",)), ("features", ("describe",)), ("log-dirs", ("--describe",))):
        theirs = tools.run(f"kafka-{tool}", *b, "--command-config", missing, *args)
        ours = kw(tool, *b, "--command-config", missing, *args, check=False)
        assert missing in theirs.out + theirs.err and theirs.exit == ours.returncode == 1, (theirs, ours.stderr)
        assert f"'{missing}' for configuration --command-config: cannot read the file: No such file" in \
            ours.stdout + ours.stderr, ours


def test_unknown_entities_print_kafkas_line(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    for args in (("--describe", "--topic", "absent"), ("--delete", "--topic", "absent"),
                 ("--alter", "--topic", "absent", "--partitions", "3")):
        assert same_first_line(tools, "kafka-topics", *b, *args) == \
            (1, "Error while executing topic command : Topic 'absent' does not exist as expected")
    assert same_first_line(tools, "kafka-configs", *b, "--describe", "--entity-type", "topics", "--entity-name",
                           "absent") == (0, "The topic 'absent' doesn't exist and doesn't have dynamic config.")
    assert same_first_line(tools, "kafka-configs", *b, "--describe", "--entity-type", "brokers", "--entity-name",
                           "abc") == (1, "The entity name for brokers must be a valid integer broker id, but it "
                                         "is: abc")
    assert same_first_line(tools, "kafka-get-offsets", *b, "--topic", "absent") == \
        (1, "Error occurred: Could not match any topic-partitions with the specified filters")


def test_a_bad_flag_value_prints_kafkas_line(tools, node):
    b = ("--bootstrap-server", node.bootstrap)
    assert same_first_line(tools, "kafka-topics", *b, "--create", "--topic", "t", "--partitions", "abc") == \
        (1, "Error while executing topic command : Cannot parse argument 'abc' of option partitions")
    assert same_first_line(tools, "kafka-leader-election", *b, "--election-type", "bogus",
                           "--all-topic-partitions") == (1, "Cannot parse argument 'bogus' of option election-type")
    assert same_first_line(tools, "kafka-get-offsets", *b, "--topic", "t", "--time", "abc")[0] == 1


def test_an_unreachable_bootstrap_server_keeps_our_line(tools, tmp_path):
    """Kafka's admin tools retry an unreachable server until ``default.api.timeout.ms`` (60 s) and then print
    ``Timed out waiting for a node assignment``, which names neither the server nor the fix; ours fails at once with
    the refused connection and what to check. Kafka's line is read here with a 4 s timeout."""
    short = tmp_path / "short.properties"
    short.write_text("default.api.timeout.ms=4000\nrequest.timeout.ms=3000\n")
    port = _closed_port()
    args = ("--bootstrap-server", f"127.0.0.1:{port}", "--list", "--command-config", str(short))
    theirs = tools.run("kafka-topics", *args)
    ours = kw("topics", *args, check=False)
    assert theirs.exit == ours.returncode == 1, (theirs, ours)
    assert _first(theirs.out) == ("Error while executing topic command : Timed out waiting for a node assignment. "
                                  "Call: listTopics"), theirs
    assert _first(ours.stdout).startswith(f"Error while executing topic command : cannot reach 127.0.0.1:{port}: ")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_users_describe_prints_what_kafkas_tool_prints(tools, node, tmp_path):
    """``configs --describe --entity-type users``: the quotas (DescribeClientQuotas), then the SCRAM credentials
    (DescribeUserScramCredentials). Kafka's tool on kraftwire prints what ours prints, and ours prints what Kafka's
    tool prints on Kafka itself holding the same credential and no quota (the SCRAM line alone)."""
    users = ("--describe", "--entity-type", "users")
    scram = ("--alter", "--entity-type", "users", "--entity-name", "users-alice", "--add-config",
             "SCRAM-SHA-256=[iterations=4096,password=alice-secret]")
    kw("configs", "--bootstrap-server", node.bootstrap, *scram)
    extras = ((), ("--entity-name", "users-alice"), ("--entity-name", "users-bob"), ("--entity-default",))
    for extra in extras:
        on_kraftwire = tools.ok("kafka-configs", "--bootstrap-server", node.bootstrap, *users, *extra)
        ours = kw("configs", "--bootstrap-server", node.bootstrap, *users, *extra)
        assert ours.stdout == on_kraftwire.out, (extra, on_kraftwire.out, ours.stdout)
    with KafkaNode(str(tmp_path / "kafka"), format_args=()) as kafka:
        tools.ok("kafka-configs", "--bootstrap-server", f"127.0.0.1:{kafka.port}", *scram)
        for extra in extras[1:]:
            theirs = tools.ok("kafka-configs", "--bootstrap-server", f"127.0.0.1:{kafka.port}", *users, *extra)
            ours = kw("configs", "--bootstrap-server", node.bootstrap, *users, *extra)
            assert ours.stdout == theirs.out, (extra, theirs.out, ours.stdout)
    assert theirs.out == "" and "SCRAM credential configs for user-principal 'users-alice' are SCRAM-SHA-256=" \
        "iterations=4096\n" in kw("configs", "--bootstrap-server", node.bootstrap, *users).stdout
