"""Kafka's exit codes and first error lines (issue 41), each failure run through Kafka 4.4's own tool and kraftwire's
against the same kraftwire node: a flag a tool does not take exits 1 with every kind of Kafka parser (joptsimple's
``printUsageAndExit``, argparse4j's ``handleError``), where Python's argparse exits 2; and the failures a user
causes print Kafka's first line (Kafka's tool goes on with a stack trace, kraftwire's stops there)."""

from __future__ import annotations

import os
import subprocess

import pytest

from harness.kafka import kafka_libs
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
