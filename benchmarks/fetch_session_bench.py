"""Fetch sessions (KIP-227): a consumer of 1,000 partitions with sessions against the same consumer without them,
one run, on a kraftwire node process and (``--kafka``) on Apache Kafka 4.4 beside it, same machine, same run.

    python benchmarks/fetch_session_bench.py [--partitions 1000] [--fetches 300] [--kafka] [--json out.json]

The consumer is a raw Fetch loop (v16, topic ids, max_wait_ms 0) over one connection, reading every partition of
a topic from its end; two phases per mode:

* **idle**: nothing is produced; each Fetch finds nothing new (the steady state of a quiet consumer);
* **one new record**: before each Fetch one 100-byte record is produced to the next partition (round-robin, on a
  second connection), so each answer carries one record.

Modes: **without sessions** every request names all partitions (epoch -1) and every answer lists all of them;
**with sessions** the first request is full (epoch 0) and the rest are incremental, built by kraftwire's own
client-side handler (``kraftwire.replica.fetch_session_client``: only the partitions whose fetch offset moved are
named), and the broker lists only the partitions that changed.

Reported per Fetch: the bytes on the wire (request and response frames, measured as encoded) and the broker
process's CPU time (user + system from ``/proc/<pid>/stat``, over the whole phase; in the "one new record" phase it
includes the produce, the same in both modes). Figures depend on the machine (2 shared cores here); they are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("KRAFTWIRE_ROOT") or Path(__file__).resolve().parents[1])
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

FETCH_VERSION = 16
TOPIC = "sessions"
#: request header: size, api key, api version, correlation id, client id (int16 length + "bench"), tagged fields
REQUEST_HEADER = 4 + 2 + 2 + 4 + 2 + len("bench") + 1
#: response header: size, correlation id, tagged fields (Fetch v12+ is flexible)
RESPONSE_HEADER = 4 + 4 + 1


def _now_ms() -> int:
    """Records stamped now: the helpers' fixed 2023 timestamps are past the 7-day retention, and a broker's retention
    pass moving every log start offset would list every partition in an incremental answer once."""
    return int(time.time() * 1000)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _setup(port: int, partitions: int):
    """Create the topic (every partition with one record) and return its id once every partition is led."""
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import KafkaConnection
    from server.test_kraft_node import _create
    from server.test_partitions import _batch, _produce

    conn = await KafkaConnection.open("127.0.0.1", port, client_id="bench")
    try:
        created = await conn.request(_create(TOPIC, partitions), 7, timeout=60)
        assert created.topics[0].error_code in (0, 36), created
        M = w.MetadataRequest
        for _ in range(600):
            md = await conn.request(M(topics=[M.MetadataRequestTopic(name=TOPIC)],
                                      allow_auto_topic_creation=False), 12, timeout=30)
            t = md.topics[0]
            if t.error_code == 0 and len(t.partitions) == partitions and all(p.leader_id >= 0 for p in t.partitions):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the topic's partitions are not led")
        missing = set(range(partitions))  # one record each; a partition not hosted yet is asked again
        for _ in range(600):
            chunk = sorted(missing)[:100]
            if not chunk:
                return t.topic_id
            r = await conn.request(_produce(TOPIC, {i: _batch([b"x" * 100], ts=_now_ms()) for i in chunk}), 9,
                                   timeout=60)
            missing -= {p.index for p in r.responses[0].partition_responses if p.error_code == 0}
            if any(p.error_code for p in r.responses[0].partition_responses):
                await asyncio.sleep(0.1)
        raise AssertionError(f"{len(missing)} partitions refused the first record")
    finally:
        await conn.close()


async def _run_mode(port: int, pid: int, topic_id, partitions: int, fetches: int, sessions: bool) -> dict:
    from kraftwire.protocol import codec
    from kraftwire.protocol import messages as w
    from kraftwire.replica.fetch_session_client import FetchSessionHandler
    from kraftwire.server.edge.client import KafkaConnection
    from server.test_partitions import _batch, _produce

    F = w.FetchRequest
    consumer = await KafkaConnection.open("127.0.0.1", port, client_id="bench")
    producer = await KafkaConnection.open("127.0.0.1", port, client_id="bench")
    offsets = {i: 1 for i in range(partitions)}
    handler = FetchSessionHandler()

    def request():
        wanted = {(topic_id, i): (topic_id, F.FetchPartition(partition=i, current_leader_epoch=-1,
                                                             fetch_offset=offsets[i], last_fetched_epoch=-1,
                                                             log_start_offset=-1, partition_max_bytes=1 << 20))
                  for i in range(partitions)}
        if sessions:
            plan = handler.build(wanted)
            send, session_id, epoch = plan.to_send, plan.session_id, plan.epoch
            forgotten = [F.ForgottenTopic(topic_id=topic_id, partitions=[k[1] for k, _ in plan.to_forget])] \
                if plan.to_forget else []
        else:
            plan, send, session_id, epoch, forgotten = None, wanted, 0, -1, []
        topics = [F.FetchTopic(topic_id=topic_id, partitions=[e for _, e in send.values()])] if send else []
        return plan, F(cluster_id=None, replica_id=-1, replica_state=F.ReplicaState(replica_id=-1), max_wait_ms=0,
                       min_bytes=0, max_bytes=50 << 20, isolation_level=0, session_id=session_id,
                       session_epoch=epoch, topics=topics, forgotten_topics_data=forgotten, rack_id="")

    async def one_fetch() -> tuple[int, int]:
        plan, body = request()
        resp = await consumer.request(body, FETCH_VERSION, timeout=30)
        assert resp.error_code == 0, resp.error_code
        listed = []
        for t in resp.responses:
            for p in t.partitions:
                assert p.error_code == 0, p
                listed.append((t.topic_id, p.partition_index))
                if p.records:
                    offsets[p.partition_index] = p.high_watermark
        if sessions:
            assert handler.handle_response(plan, resp.error_code, resp.session_id, listed)
        return (len(codec.encode(body, FETCH_VERSION)) + REQUEST_HEADER,
                len(codec.encode(resp, FETCH_VERSION)) + RESPONSE_HEADER)

    figures = {}
    try:
        await one_fetch()  # the first (full) request: opens the session; not counted
        for phase, produce in (("idle", False), ("one new record", True)):
            sent = received = 0
            cpu0, t0 = cpu_seconds(pid), time.perf_counter()
            for n in range(fetches):
                if produce:
                    batch = _batch([b"y" * 100], ts=_now_ms())
                    r = await producer.request(_produce(TOPIC, {n % partitions: batch}), 9, timeout=30)
                    assert r.responses[0].partition_responses[0].error_code == 0
                out, back = await one_fetch()
                sent += out
                received += back
            cpu, wall = cpu_seconds(pid) - cpu0, time.perf_counter() - t0
            figures[phase] = {"request_bytes": round(sent / fetches), "response_bytes": round(received / fetches),
                              "broker_cpu_ms": round(cpu * 1000 / fetches, 3),
                              "wall_ms": round(wall * 1000 / fetches, 3)}
    finally:
        await consumer.close()
        await producer.close()
    return figures


def _measure(port: int, pid: int, partitions: int, fetches: int) -> dict:
    topic_id = asyncio.run(_setup(port, partitions))
    return {mode: asyncio.run(_run_mode(port, pid, topic_id, partitions, fetches, mode == "with sessions"))
            for mode in ("without sessions", "with sessions")}


def run(partitions: int, fetches: int, kafka: bool) -> dict:
    from harness import processes, roles

    out = {"partitions": partitions, "fetches": fetches, "fetch_version": FETCH_VERSION}
    props = "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\nnum.partitions=1\n"
    with tempfile.TemporaryDirectory() as base:
        os.makedirs(Path(base) / "kraftwire")
        with processes.CombinedNode(Path(base) / "kraftwire", props) as node:
            roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
            out["kraftwire"] = _measure(node.port, node.proc.pid, partitions, fetches)
        if kafka:
            from harness.kafka import KafkaNode

            os.makedirs(Path(base) / "kafka")
            with KafkaNode(str(Path(base) / "kafka"), props) as k:
                out["kafka"] = _measure(k.port, k.proc.pid, partitions, fetches)
    return out


def render(figures: dict) -> str:
    lines = [f"{figures['partitions']} partitions, {figures['fetches']} fetches per phase (Fetch v{FETCH_VERSION})",
             "| broker | phase | mode | request B | response B | broker CPU ms | wall ms |",
             "|---|---|---|---:|---:|---:|---:|"]
    for broker in ("kraftwire", "kafka"):
        for mode, phases in figures.get(broker, {}).items():
            for phase, f in phases.items():
                lines.append(f"| {broker} | {phase} | {mode} | {f['request_bytes']} | {f['response_bytes']} | "
                             f"{f['broker_cpu_ms']} | {f['wall_ms']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--fetches", type=int, default=300)
    ap.add_argument("--kafka", action="store_true", help="also measure Apache Kafka 4.4 beside it")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    figures = run(args.partitions, args.fetches, args.kafka)
    print(render(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
