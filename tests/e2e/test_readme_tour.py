"""The README's cluster tour and recipes, run as written (``harness.readme_tour``) by a Kafka user's fresh install: a
venv holding only the wheel this run built (``built_dist``) and its runtime dependencies, nothing of the test
environment. In network and mount namespaces of their own (``unshare -n -m``: the fixed ports are free whatever else
runs here, and the tour's ``/tmp/kraft-combined-logs`` is private): Kafka's quickstart on the shipped
``config/server.properties`` with the console tools, a group and kcat; three combined
nodes and then three controllers with three brokers from ``server-start``, a topic replicated three times, the
console tools and a consumer group through them; certificates made with ``openssl``; a SASL_SSL cluster with ACLs
and its client properties files, used by the admin and console tools, the mistakes a user makes there (no
``--command-config``, a wrong password) as one line each; and Spark's ``kraftwire`` format writing to and reading the
secured topic (with the test environment's PySpark: the base install has none). Every block's output is checked."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv

import pytest

from harness.kafka import kafka_libs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.join(REPO, "tests", "harness", "readme_tour.py")
TOUR_LOGS = "/tmp/kraft-combined-logs"

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def base_install(built_dist, tmp_path_factory):
    """The ``bin`` directory of a fresh venv with the wheel installed (pip resolves its runtime dependencies)."""
    wheels = list(built_dist.glob("kraftwire-*.whl"))
    assert len(wheels) == 1, sorted(p.name for p in built_dist.iterdir())
    env_dir = tmp_path_factory.mktemp("base-venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "KRAFTWIRE_NO_EXT")}
    proc = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheels[0])],
                          capture_output=True, text=True, env=clean, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return str(env_dir / "bin")


@pytest.fixture(scope="module")
def tour(base_install, tmp_path_factory):
    for tool in ("unshare", "ip", "openssl"):
        assert shutil.which(tool), f"{tool} is required by the README tour"
    work = tmp_path_factory.mktemp("tour")
    out = work.parent / f"{work.name}.json"
    made = not os.path.exists(TOUR_LOGS)  # the mount point the driver binds its own directory over
    os.makedirs(TOUR_LOGS, exist_ok=True)
    try:
        # "Joining a Kafka cluster" runs Kafka 4.4 from the jars tests/kafka/fetch.sh fetches (cached in CI)
        proc = subprocess.run(["unshare", "-n", "-m", sys.executable, DRIVER, os.path.join(REPO, "README.md"),
                               str(work), base_install, str(out), sys.executable], capture_output=True, text=True,
                              timeout=1500, env={**os.environ, "KAFKA_LIBS": kafka_libs()})
    finally:
        if made:
            os.rmdir(TOUR_LOGS)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        results = json.load(f)
    for name, result in results.items():
        print(f"--- {name} ({result['seconds']} s, exit {result['rc']}) ---\n{result['stdout']}{result['stderr']}")
    return results, work


def _ok(results, name: str) -> str:
    result = results[name]
    assert result["rc"] == 0, (name, result)
    return result["stdout"]


def test_kafkas_quickstart_on_the_shipped_config(tour):
    results, work = tour
    assert _ok(results, "tour-start").startswith("Formatting metadata directory /tmp/kraft-combined-logs ")
    assert results["tour-start"]["ready"], (work / "server.log").read_text()[-3000:]
    out = _ok(results, "tour-use")
    lines = out.splitlines()
    assert lines[0] == "Created topic quickstart-events."
    assert lines[1].startswith("Topic: quickstart-events\tTopicId: ") and "\tPartitionCount: 1\tReplicationFactor: 1" \
        in lines[1]
    events = ["This is my first event", "This is my second event"]
    assert lines[3:7] == events + events, out
    assert any(line.split()[:6] == ["my-group", "quickstart-events", "0", "2", "2", "0"] for line in lines), out
    assert 'topic "quickstart-events" with 1 partitions:' in out and "broker 1 at localhost:9092" in out
    assert "TOPIC_RECORD" in out and "quickstart-events" in out.split("TOPIC_RECORD", 1)[1]
    assert "Traceback" not in results["tour-use"]["stderr"]
    assert (work / "kraft-combined-logs" / "quickstart-events-0").is_dir()  # the private directory held the log
    assert results["tour-use"]["stopped"]


def test_three_combined_nodes(tour):
    results, work = tour
    assert _ok(results, "combined-start").count("Formatting metadata directory ") == 3
    assert results["combined-start"]["ready"], (work / "combined-1.log").read_text()[-3000:]
    out = _ok(results, "combined-use")
    lines = out.splitlines()
    assert lines[0] == "Created topic orders."
    assert sorted(lines[1:4]) == ["first", "second", "third"]
    # the group committed where it stopped: the three records (one partition or more, as the producer spread them)
    table = [line.split() for line in lines if line.startswith("readers ")]
    assert table and all(row[1] == "orders" and row[5] == "0" for row in table), out
    assert sum(int(row[3]) for row in table) == 3, out
    assert re.search(r"^CurrentVoters:\s+\[\{\"id\": 1,.*\"id\": 2,.*\"id\": 3,", out, re.M), out
    assert "Processed a total of 3 messages" in results["combined-use"]["stderr"]
    assert results["combined-use"]["stopped"]


def test_three_controllers_and_three_brokers(tour):
    results, work = tour
    assert _ok(results, "separate-start").count("Formatting metadata directory ") == 6
    assert results["separate-start"]["ready"], (work / "broker-1.log").read_text()[-3000:]
    out = _ok(results, "separate-use")
    assert out.splitlines()[:2] == ["Created topic events.", "events"]
    assert re.search(r"^CurrentObservers:\s+\[.*\"id\": 4.*\]", out, re.M), out
    assert results["separate-use"]["stopped"]


def test_certificates_with_openssl(tour):
    results, work = tour
    _ok(results, "openssl")
    text = (work / "node.pem").read_text()
    assert "PRIVATE KEY-----" in text and "BEGIN CERTIFICATE" in text


def test_sasl_ssl_with_acls_and_client_files(tour):
    results, work = tour
    _ok(results, "secure-start")
    _ok(results, "secure-clients")
    assert results["secure-clients"]["ready"], (work / "secure.log").read_text()[-3000:]
    out = _ok(results, "secure-use")
    lines = out.splitlines()
    assert lines[0] == "Created topic payments."
    assert "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=payments, patternType=LITERAL)`: " \
        in out
    assert lines[-1] == "paid 42", out
    assert "Traceback" not in results["secure-use"]["stderr"]


def test_secured_mistakes_are_one_line_each(tour):
    results, _ = tour
    result = results["secure-mistakes"]
    assert result["rc"] == 0 and "Traceback" not in result["stdout"] + result["stderr"], result
    said = (result["stdout"] + result["stderr"]).splitlines()
    assert said.count("exit code 1") == 2, said
    errors = [line for line in result["stderr"].splitlines() if line != "exit code 1"]
    assert len(errors) == 1 and "localhost:9392" in errors[0] and "--command-config" in errors[0], said
    # a wrong password: Kafka's kafka-topics.sh line, the broker's words, on standard output as Kafka's tool prints it
    # (tests/kafka_software/test_security.py)
    assert [line for line in result["stdout"].splitlines() if line != "exit code 1"] == [
        "Error while executing topic command : Authentication failed during authentication due to invalid credentials "
        "with SASL mechanism SCRAM-SHA-512"], said


def test_spark_writes_and_reads_the_secured_topic(tour):
    results, _ = tour
    assert _ok(results, "spark").strip().splitlines()[-1] == "['paid 42', 'paid 43']"


def test_a_kraftwire_broker_and_controller_join_a_kafka_cluster(tour):
    """README "Joining a Kafka cluster": Kafka 4.4 (one node, a dynamic quorum), a kraftwire broker registering with
    its controller, a kraftwire controller added as a voter (KIP-853), a topic replicated on a Kafka and a kraftwire
    broker written through one and read through the other."""
    results, work = tour
    _ok(results, "kafka-start")
    assert results["kafka-start"]["ready"], (work / "kafka-1.log").read_text()[-3000:]
    assert _ok(results, "join-broker-start").startswith("Formatting metadata directory ")
    assert results["join-broker-start"]["ready"], (work / "kraftwire-2.log").read_text()[-3000:]
    _ok(results, "join-controller-start")
    out = _ok(results, "join-use")
    lines = out.splitlines()
    voters = re.search(r"^CurrentVoters:\s+(\[.*\])$", out, re.M)
    assert voters and sorted(v["id"] for v in json.loads(voters.group(1))) == [1, 3], out
    assert "Created topic joined." in lines and lines[-3:] == ["one", "three", "two"], out
    assert "Traceback" not in (work / "kraftwire-2.log").read_text() + (work / "kraftwire-3.log").read_text()
    assert results["join-use"]["stopped"]
