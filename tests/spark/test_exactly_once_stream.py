"""Exactly-once streaming into a topic (``writeStream.format("kraftwire").option("exactlyOnce", "true")``) through
driver crashes: a query reading topic A over the wire and writing B runs as a separate driver process
(tests/spark/eos_driver.py, its own process group) against a real kraftwire KRaft node. Run 1 is SIGKILLed (driver,
JVM and workers) right after a micro-batch's transactions committed in B but before Spark's commit log recorded it;
run 2 replays that batch - every task finds its batch id committed and writes nothing - and is SIGKILLed from
outside mid-run; run 3 finishes. B then holds every record of A exactly once (read_committed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka import Producer

from harness import processes
from spark.test_sink import Node, read_topic

N = 1200          # records in A (maxOffsetsPerTrigger 200: six micro-batches)
KILL_AT = 1       # run 1 dies in the sink commit of this batch
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eos_driver.py")


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = Node(str(tmp_path_factory.mktemp("eos-node")))
    n.start()
    try:
        n.create_topics({"A": 3, "B": 3})
        yield n
    finally:
        n.close()


def _fill_a(bootstrap: str) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(N):
        p.produce("A", key=f"k{i}".encode(), value=f"rec-{i}".encode(), partition=i % 3)
    assert p.flush(30) == 0


def _start(node, tmp_path, kill_at: int) -> subprocess.Popen:
    """The driver, in a session of its own (so its JVM and workers can be found and killed with it)."""
    env = dict(processes.kraftwire_env())
    out = open(tmp_path / "driver.out", "ab")
    try:
        return subprocess.Popen([sys.executable, DRIVER, node.bootstrap, "A", "B", str(tmp_path / "ckpt"),
                                 str(tmp_path / "commits.jsonl"), str(kill_at)],
                                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    finally:
        out.close()


def _session(sid: int) -> list[int]:
    """The processes of session ``sid`` (the driver, its JVM, pyspark's daemon and workers)."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid:
                pids.append(int(name))
    return pids


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL every process of the driver's session, then reap the driver."""
    for _ in range(5):
        pids = _session(proc.pid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    proc.wait(30)


def _wait(proc: subprocess.Popen, tmp_path, timeout: float) -> int:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise AssertionError(f"the driver did not end in {timeout} s:\n{_tail(tmp_path)}") from None
    finally:
        _kill(proc)  # nothing of it outlives the run (a killed driver's workers)


def _tail(tmp_path) -> str:
    with open(tmp_path / "driver.out", "rb") as f:
        return f.read()[-6000:].decode(errors="replace")


def _commits(tmp_path) -> list[dict]:
    path = tmp_path / "commits.jsonl"
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_exactly_once_through_two_driver_kills(node, tmp_path):
    _fill_a(node.bootstrap)

    # run 1: dies (SIGKILL of the whole process group) in the sink commit of batch KILL_AT
    run1 = _start(node, tmp_path, KILL_AT)
    assert _wait(run1, tmp_path, 150) == -signal.SIGKILL, _tail(tmp_path)
    first = _commits(tmp_path)
    assert [c["batch"] for c in first] == list(range(KILL_AT + 1)), first
    assert all(not t[2] and t[1] > 0 for c in first for t in c["tasks"]), first
    written = sum(t[1] for c in first for t in c["tasks"])
    assert len(read_topic(node.bootstrap, "B", 3)) == written  # the killed batch is in B

    # run 2: replays batch KILL_AT (writes nothing), goes on, and is SIGKILLed from outside mid-run
    run2 = _start(node, tmp_path, -1)
    deadline = time.monotonic() + 150
    while len(_commits(tmp_path)) < len(first) + 2:
        assert run2.poll() is None, f"run 2 ended early:\n{_tail(tmp_path)}"
        assert time.monotonic() < deadline, f"run 2 made no progress:\n{_tail(tmp_path)}"
        time.sleep(0.05)
    _kill(run2)
    second = _commits(tmp_path)[len(first):]
    replay = second[0]
    assert replay["batch"] == KILL_AT and replay["pid"] != first[-1]["pid"], second
    assert all(t[2] and t[1] == 0 for t in replay["tasks"]), replay  # found committed: nothing written again
    assert second[1]["batch"] == KILL_AT + 1 and not any(t[2] for t in second[1]["tasks"]), second

    # run 3: to the end of A
    run3 = _start(node, tmp_path, -1)
    assert _wait(run3, tmp_path, 150) == 0, _tail(tmp_path)
    assert "DONE" in _tail(tmp_path)

    got = read_topic(node.bootstrap, "B", 3)
    values = [v for _, _, v, _, _ in got]
    assert len(values) == N, (len(values), len(set(values)))
    assert set(values) == {f"REC-{i}".encode() for i in range(N)}
    keys = {v: k for _, k, v, _, _ in got}
    assert all(keys[f"REC-{i}".encode()] == f"k{i}".encode() for i in range(N))
