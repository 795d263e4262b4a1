"""Failures a user can cause end with one line naming the problem and the fix and Kafka's exit code, never a
traceback: a missing properties file, a Java-only store type, a key librdkafka does not know, a bootstrap server
nobody listens on; and ``dump-log ... | head`` ends quietly with 0 as Kafka's ``kafka-dump-log.sh`` does (its
standard output ignores the closed pipe). The secured-listener failures (no ``--command-config`` on SASL_SSL, a wrong
password) are checked against the README's SASL_SSL cluster in ``tests/e2e/test_readme_tour.py``."""

from __future__ import annotations

import socket
import subprocess
import sys

from harness import processes

from kraftwire import records


def _kw(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftwire", *args], capture_output=True, text=True, input=stdin,
                          env=processes.kraftwire_env(), timeout=120)


def _one_line(proc: subprocess.CompletedProcess, start: str) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(start), proc.stderr
    return proc.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_missing_properties_files_name_the_flag_and_the_file(tmp_path):
    missing = str(tmp_path / "client.properties")
    line = _one_line(_kw("console-producer", "--bootstrap-server", "127.0.0.1:1", "--topic", "t",
                         "--producer.config", missing), "kraftwire console-producer: ")
    assert f"'{missing}' for configuration --producer.config: cannot read the file: No such file" in line
    line = _one_line(_kw("console-consumer", "--bootstrap-server", "127.0.0.1:1", "--topic", "t",
                         "--consumer.config", missing), "kraftwire console-consumer: ")
    assert "--consumer.config" in line
    line = _one_line(_kw("producer-perf-test", "--topic", "t", "--num-records", "1", "--record-size", "1",
                         "--throughput", "-1", "--bootstrap-server", "127.0.0.1:1", "--producer.config", missing),
                     "kraftwire producer-perf-test: ")
    assert "--producer.config" in line


def test_java_stores_and_unknown_keys_are_named(tmp_path):
    jks = tmp_path / "jks.properties"
    jks.write_text("security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=/etc/hosts\n")
    line = _one_line(_kw("console-consumer", "--bootstrap-server", "127.0.0.1:1", "--topic", "t",
                         "--consumer.config", str(jks)), "kraftwire console-consumer: ")
    assert "configuration ssl.truststore.type: kraftwire reads PEM truststores only" in line
    line = _one_line(_kw("console-producer", "--bootstrap-server", "127.0.0.1:1", "--topic", "t",
                         "--producer-property", "linger.mss=5"), "kraftwire console-producer: ")
    assert 'No such configuration property: "linger.mss"' in line


def test_an_unreachable_bootstrap_server_is_one_line():
    port = _closed_port()
    line = _one_line(_kw("metadata-quorum", "--bootstrap-server", f"127.0.0.1:{port}", "describe", "--status"),
                     "kraftwire metadata-quorum: cannot describe the quorum via ")
    assert f"127.0.0.1:{port}: [Errno 111]" in line
    proc = _kw("topics", "--bootstrap-server", f"127.0.0.1:{port}", "--list", "--timeout", "1")
    assert (proc.returncode, proc.stderr) == (1, "")  # kafka-topics.sh prints its error line on standard output
    assert proc.stdout.startswith(f"Error while executing topic command : cannot reach 127.0.0.1:{port}: ")
    assert len(proc.stdout.splitlines()) == 1


def test_dump_log_into_head_ends_quietly_with_zero(tmp_path):
    segment = tmp_path / "t-0" / "00000000000000000000.log"
    segment.parent.mkdir()
    data = bytearray()
    for i in range(5000):  # far more output than a pipe holds
        b = records.RecordBatchBuilder(base_offset=i)
        b.append(b"k", b"v" * 10)
        data += b.build()
    segment.write_bytes(bytes(data))
    shell = (f"{sys.executable} -m kraftwire dump-log --files {segment} | head -2; "
             "echo \"status=${PIPESTATUS[0]}\"")
    proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=processes.kraftwire_env(),
                          timeout=120)
    assert proc.stdout.splitlines() == [f"Dumping {segment}", "Log starting offset: 0", "status=0"], proc.stdout
    assert proc.stderr == ""
