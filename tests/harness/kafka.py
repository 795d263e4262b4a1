"""Apache Kafka's jars, for the tests that use Kafka itself as the oracle: ``kafka_libs()`` runs
``tests/kafka/fetch.sh`` (Maven Central; a cached copy is reused) and returns the directory of the jars, or fails the
test loudly — a missing Kafka is a broken set-up, never a skip."""

from __future__ import annotations

import functools
import os
import subprocess

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KAFKA_DIR = os.path.join(TESTS, "kafka")


@functools.cache
def kafka_libs() -> str:
    proc = subprocess.run(["bash", os.path.join(KAFKA_DIR, "fetch.sh")], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise AssertionError(f"could not fetch Apache Kafka's jars (tests/kafka/fetch.sh exited {proc.returncode}):\n"
                             f"{proc.stderr}")
    return proc.stdout.strip().splitlines()[-1]


def run_java(source: str, *args: str, timeout: float = 300) -> str:
    """Run a single-file Java program of ``tests/kafka`` on Kafka's classpath; its standard output."""
    proc = subprocess.run(["java", "-cp", os.path.join(kafka_libs(), "*"), os.path.join(KAFKA_DIR, source), *args],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"java {source} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return proc.stdout
