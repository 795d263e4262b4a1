"""After a fuzz run: the metadata log holds only what a Kafka controller could have written.

Kafka's own tool reads it — ``org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder`` (kafka-tools
4.4.0) must decode every record: it prints ``Error at <offset>, skipping.`` in place of a payload it cannot
deserialize and exits 0 regardless, so its output is read line by line. Then the records it decoded (its JSON) are
checked against Kafka's rules in Python: legal topic names that collide with no live topic, no partition written
twice, partitions of live topics only, numbered from 0, replicas that make sense, and topic and broker configs
Kafka would have accepted (``kraftwire.kafka_configs``).
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess

from harness.kafka import kafka_libs
from kraftwire.kafka_configs import check_dynamic_broker, check_topic

TOOL = "org.apache.kafka.tools.DumpLogSegments"
LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")
TOPIC, BROKER = 2, 4


def segments(log_dir: str) -> list[str]:
    files = sorted(glob.glob(os.path.join(log_dir, "__cluster_metadata-0", "*.log")))
    if not files:
        raise AssertionError(f"no metadata log segment under {log_dir}")
    return files


def kafka_dump(files: list[str]) -> list[dict]:
    """Every record of the segments as Kafka's tool decodes it (control records included, as their JSON);
    AssertionError naming each line the tool could not decode."""
    proc = subprocess.run(["java", "-cp", os.path.join(kafka_libs(), "*"), TOOL, "--cluster-metadata-decoder",
                           "--files", *files], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"{TOOL} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    bad, records, control = [], [], False
    for line in proc.stdout.splitlines():
        if line.startswith("baseOffset:"):
            control = " isControl: true " in line
            if "isvalid: true" not in line:
                bad.append(line)
        elif line.startswith("| offset:"):
            if "Error at" in line or (" payload: {" not in line and not control):
                bad.append(line)
            elif " payload: " in line:
                records.append(json.loads(line.split(" payload: ", 1)[1]))
        elif line.startswith(("Found", "Exception", "Error")) or "invalid" in line.lower():
            bad.append(line)
    if bad:
        raise AssertionError(f"Kafka's {TOOL} could not read {len(bad)} line(s) of {files}:\n" + "\n".join(bad[:20]))
    return records


def check_records(records: list[dict]) -> list[str]:
    """Kafka's rules over the decoded records, in log order: a list of what breaks them (empty: none)."""
    problems: list[str] = []
    names: dict[str, str] = {}  # live topic id -> name
    partitions: dict[str, set[int]] = {}
    seen: set[tuple[str, int]] = set()
    for r in records:
        kind, data = r["type"], r["data"]
        if kind == "TOPIC_RECORD":
            name, tid = data["name"], data["topicId"]
            if not LEGAL_TOPIC.fullmatch(name) or name in (".", ".."):
                problems.append(f"illegal topic name {name!r}: {r}")
            collides = [n for n in names.values() if n.replace(".", "_") == name.replace(".", "_")]
            if collides:
                problems.append(f"topic {name!r} created while {collides} is live: {r}")
            names[tid], partitions[tid] = name, set()
        elif kind == "REMOVE_TOPIC_RECORD":
            names.pop(data["topicId"], None)
        elif kind == "PARTITION_RECORD":
            key = (data["topicId"], data["partitionId"])
            if key in seen:
                problems.append(f"partition {key} written twice: {r}")
            seen.add(key)
            if data["topicId"] not in names:
                problems.append(f"partition of no live topic: {r}")
            else:
                partitions[data["topicId"]].add(data["partitionId"])
            replicas, isr = data["replicas"], data["isr"]
            if (data["partitionId"] < 0 or not replicas or len(set(replicas)) != len(replicas)
                    or not set(isr) <= set(replicas) or data["leader"] not in isr + [-1]):
                problems.append(f"a partition no controller would write: {r}")
        elif kind == "CONFIG_RECORD":
            resource, name, value = data["resourceType"], data["name"], data.get("value")
            if resource == TOPIC:
                if data["resourceName"] not in names.values():
                    problems.append(f"config of no live topic: {r}")
                why = check_topic(name, value) if value is not None else ""
            elif resource == BROKER:
                why = check_dynamic_broker({name: value}, per_broker=data["resourceName"] != "") if value else ""
            else:
                why = ""
            if why:
                problems.append(f"a config Kafka refuses ({why}): {r}")
    for tid, parts in partitions.items():
        if tid in names and parts != set(range(len(parts))):
            problems.append(f"topic {names[tid]!r} has partitions {sorted(parts)}, not 0..{len(parts) - 1}")
    return problems


def check_log(running) -> None:
    """Stop the configuration's nodes (each must stop cleanly, without a traceback) and check every node's copy of
    the metadata log: Kafka's tool decodes it all, and its records keep Kafka's rules."""
    cluster = running.cluster
    codes = {n.node_id: n.terminate() for n in cluster.brokers + cluster.controllers}  # brokers first, as in Kafka
    for node in running.cluster.nodes.values():
        assert "Traceback" not in node.stderr(), node.stderr()[-6000:]
    assert set(codes.values()) == {0}, f"exit codes {codes}"
    for node in running.cluster.nodes.values():
        records = kafka_dump(segments(node.log_dir))
        assert any(r["type"] == "TOPIC_RECORD" for r in records), "the set-up's topics are missing"
        problems = check_records(records)
        assert not problems, f"node {node.node_id}'s metadata log:\n" + "\n".join(problems[:30])
