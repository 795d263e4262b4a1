"""Topic-partition benchmarks (#18), each a ratio against a baseline measured in the same run.

    python benchmarks/partition_bench.py restart [--partitions 2000]
    python benchmarks/partition_bench.py fetch [--mib 1024]
    python benchmarks/partition_bench.py produce [--records 200000] [--latency-records 2000]
    python benchmarks/partition_bench.py cost [--records 200000] [--latency-records 2000]
    python benchmarks/partition_bench.py all [--json out.json]

* **restart**: a broker (in-process, beside an in-process controller, real files) restarted with N partitions of
  one record each, against the same broker restarted while it hosted nothing: the extra milliseconds per partition
  until every partition is led again (the goal: at most 2 ms).
* **fetch**: a raw Fetch loop (responses decoded down to the record bytes, not the records) reading a topic of
  ``--mib`` MiB through one broker process from the page cache, against ``os.read`` of the same segment files
  (the goal: at least 50 %), and against the ceiling of any socket here: the same files sent with ``os.sendfile``
  over loopback TCP to a ``recv_into`` reader.

* **produce**: confluent-kafka, acks=all, 100-byte values: throughput and single-record latency at concurrency 1
  into a 6-partition topic at replication factor 3 on three broker processes (one controller), against the same
  client into the test server's Raft log (three test-server processes), same run (the goal: throughput at least the
  Raft path's, latency no worse).

* **cost**: what one acks=all write costs the brokers: a 1-partition topic at replication factor 2 on two broker
  processes (one controller), confluent-kafka, 100-byte values. The leader's CPU time (user + system, /proc) per
  acks=all write at concurrency 1 and per MB appended during the throughput run; and the bytes the leader and
  the follower allocate together per byte appended to the leader's log during that run, counted by a counting
  allocator loaded into both brokers (``benchmarks/alloc_count``: CPython's MEM and OBJ allocation domains, a
  block shrunk right after allocation counted at what it kept; everything the processes allocate in that time,
  heartbeats and metadata included).

Figures depend on the machine (2 shared cores here); they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

#: the checkout benchmarked (``before_after.py`` points it at another worktree); this one by default
ROOT = Path(os.environ.get("KRAFTWIRE_ROOT") or Path(__file__).resolve().parents[1])
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


# ---------------------------------------------------------------------------------------------------- restart
async def _restart_figures(base: Path, partitions: int) -> dict:
    from kraftwire import error_codes as ec
    from kraftwire.server.edge.client import KafkaConnection
    from tests.server.test_partitions import _batch, _produce
    from tests.server.test_replication import CT, Cluster, _until

    cluster = Cluster(base, brokers=(1,))
    await cluster.start()
    try:
        async def restart(expect: int) -> float:
            await cluster.nodes[1].shutdown()
            start = time.perf_counter()
            node = await cluster.start_broker(1)
            await _until("broker 1 unfenced", lambda: not cluster.controller.metadata.image.brokers[1].fenced, 120)
            await _until("every partition led", lambda: len(node.replicas.partitions) == expect and all(
                hp.state.role == "leader" for hp in node.replicas.partitions.values()), 300)
            return time.perf_counter() - start

        empty = min([await restart(0) for _ in range(3)])
        conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
        try:
            created = await conn.request(CT(topics=[CT.CreatableTopic(
                name="many", num_partitions=partitions, replication_factor=1, assignments=[], configs=[])],
                timeout_ms=60_000, validate_only=False), 7)
            assert created.topics[0].error_code == ec.NONE, created
            await _until("hosted", lambda: len(cluster.nodes[1].replicas.partitions) == partitions, 300)
            for first in range(0, partitions, 200):
                r = await conn.request(_produce("many", {p: _batch([b"x" * 100]) for p in
                                                         range(first, min(partitions, first + 200))}, acks=1), 9)
                assert all(pr.error_code == ec.NONE for t in r.responses for pr in t.partition_responses)
        finally:
            await conn.close()
        full = min([await restart(partitions) for _ in range(2)])
    finally:
        await cluster.stop()
    per = (full - empty) * 1000 / partitions
    return {"partitions": partitions, "empty_restart_s": round(empty, 3), "full_restart_s": round(full, 3),
            "extra_ms_per_partition": round(per, 3), "goal_ms_per_partition": 2.0}


def restart_bench(partitions: int) -> dict:
    import logging

    logging.disable(logging.INFO)
    base = Path(tempfile.mkdtemp(prefix="kraftwire-restart-"))
    try:
        return asyncio.run(_restart_figures(base, partitions))
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------- fetch
def fetch_bench(mib: int) -> dict:
    from harness import processes

    base = Path(tempfile.mkdtemp(prefix="kraftwire-fetch-"))
    try:
        with processes.CombinedNode(base, "num.partitions=1\n") as node:
            bport = node.port
            total = _fill(bport, mib << 20)
            files = sorted((Path(node.logs) / "bulk-0").glob("*.log"))
            on_disk = sum(f.stat().st_size for f in files)
            for _ in range(2):  # warm the page cache, then measure
                read_s = _os_read(files)
            wire_s = min(_loopback(files) for _ in range(2))
            fetch_s, fetched = asyncio.run(_fetch_loop(bport, total))
            fetch_s = min(fetch_s, asyncio.run(_fetch_loop(bport, total))[0])
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {"mib": round(on_disk / (1 << 20), 1), "os_read_mib_s": round(on_disk / read_s / (1 << 20), 1),
            "loopback_sendfile_mib_s": round(on_disk / wire_s / (1 << 20), 1),
            "fetch_mib_s": round(fetched / fetch_s / (1 << 20), 1),
            "ratio": round((fetched / fetch_s) / (on_disk / read_s), 3), "goal_ratio": 0.5,
            "ratio_to_loopback": round((fetched / fetch_s) / (on_disk / wire_s), 3)}


def _fill(port: int, size: int) -> int:
    """``size`` bytes of 1 KiB records into topic ``bulk`` (one partition) with confluent-kafka; the record count."""
    from confluent_kafka import Producer

    value = b"v" * 1000
    n = size // 1024
    p = Producer({"bootstrap.servers": f"localhost:{port}", "acks": 1, "linger.ms": 20, "batch.size": 1_000_000,
                  "compression.type": "none", "queue.buffering.max.messages": 500_000})
    for i in range(n):
        while True:
            try:
                p.produce("bulk", value, partition=0)
                break
            except BufferError:
                p.poll(0.01)
        if i % 20_000 == 0:
            p.poll(0)
    assert p.flush(600) == 0
    return n


def _os_read(files) -> float:
    start = time.perf_counter()
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)
    return time.perf_counter() - start


def _loopback(files) -> float:
    """The ceiling of any fetch over a socket here: the same files sent with ``os.sendfile`` over loopback TCP to a
    reader doing ``recv_into`` (no Kafka at all)."""
    import socket
    import threading

    total = sum(f.stat().st_size for f in files)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def send() -> None:
        conn, _ = server.accept()
        with conn:
            for f in files:
                fd = os.open(f, os.O_RDONLY)
                try:
                    size, off = f.stat().st_size, 0
                    while off < size:
                        off += os.sendfile(conn.fileno(), fd, off, size - off)
                finally:
                    os.close(fd)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    buf = memoryview(bytearray(16 << 20))
    with socket.create_connection(server.getsockname()) as sock:
        start = time.perf_counter()
        got = 0
        while got < total:
            n = sock.recv_into(buf)
            if not n:
                break
            got += n
        elapsed = time.perf_counter() - start
    sender.join(10)
    server.close()
    return elapsed


async def _fetch_loop(port: int, records: int) -> tuple[float, int]:
    """Fetch the whole partition from offset 0 over one blocking socket: each answer received straight into one
    preallocated buffer (``recv_into``), its header decoded around a view of the records, and only the batch headers
    walked to find the next offset — the records are never decoded or copied."""
    import socket

    from kraftwire.protocol import messages as w
    from kraftwire.protocol.framing import decode_response, encode_request
    from kraftwire.records import api as layout
    from kraftwire.server.edge.client import KafkaConnection

    conn = await KafkaConnection.open("localhost", port)
    try:
        md = await conn.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
        topic_id = next(t.topic_id for t in md.topics if t.name == "bulk")
    finally:
        await conn.close()
    F = w.FetchRequest
    key = F.API_KEY
    sock = socket.create_connection(("localhost", port))
    buf = bytearray(64 << 20)
    view = memoryview(buf)
    try:
        offset, fetched, cid = 0, 0, 0
        start = time.perf_counter()
        while offset < records:
            cid += 1
            body = F(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=32 << 20, isolation_level=0,
                     session_id=0, session_epoch=-1, topics=[F.FetchTopic(topic_id=topic_id, partitions=[
                         F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=offset,
                                          last_fetched_epoch=-1, log_start_offset=-1,
                                          partition_max_bytes=32 << 20)])],
                     forgotten_topics_data=[], rack_id="")
            sock.sendall(b"".join(bytes(c) for c in encode_request(body, 13, cid)))
            got = 0
            while got < 4:
                got += sock.recv_into(view[got:4])
            size = int.from_bytes(buf[:4], "big")
            got = 0
            while got < size:
                n = sock.recv_into(view[got:size])
                if not n:
                    raise ConnectionError("the broker closed the connection")
                got += n
            _, resp = decode_response(view[:size], key, 13)
            data = resp.responses[0].partitions[0].records
            if data is None or not len(data):
                break
            fetched += len(data)
            pos, last = 0, offset
            while pos + layout.RECORD_BATCH_OVERHEAD <= len(data):  # batch headers only
                base = int.from_bytes(data[pos:pos + 8], "big")
                length = int.from_bytes(data[pos + 8:pos + 12], "big")
                delta = int.from_bytes(data[pos + layout.LAST_OFFSET_DELTA_POS:pos + layout.LAST_OFFSET_DELTA_POS
                                            + 4], "big")
                last = base + delta
                pos += length + 12
            offset = last + 1
            del data, resp
        return time.perf_counter() - start, fetched
    finally:
        sock.close()


# ---------------------------------------------------------------------------------------------------- produce
def produce_bench(records: int, latency_records: int) -> dict:

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from client_bench import TOPIC, confluent_latency, confluent_throughput, pct
    from harness import processes
    from harness.roles import RolesCluster, metadata

    out = {}
    with tempfile.TemporaryDirectory() as base:
        raft = processes.Cluster(base, 3, command=processes.SERVE_ONLY["command"],
                                 extra_args=processes.SERVE_ONLY["extra_args"],
                                 extra_props=f"kraftwire.metadata.log.topic={TOPIC}\n")
        try:
            raft.start_all()
            raft.wait_for_leader()
            bootstrap = ",".join(f"127.0.0.1:{n.port}" for n in raft.nodes.values())
            out["raft_path"] = _produce_figures(bootstrap, records, latency_records, confluent_throughput,
                                                confluent_latency, pct, statistics)
        finally:
            raft.close()
    with tempfile.TemporaryDirectory() as base:
        cluster = RolesCluster(base, controllers=1, brokers=3, kraft=True)
        try:
            for node in cluster.nodes.values():
                node.start()
            cluster.wait_for_leader()
            ports = [n.port_of("BROKER") for n in cluster.brokers]
            bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports)
            _create_topic(bootstrap, 6, 3)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                md = metadata(ports[0])
                if any(t.name == TOPIC and len(t.partitions) == 6 and all(len(p.isr_nodes) == 3 for p in t.partitions)
                       for t in md.topics):
                    break
                time.sleep(0.2)
            out["brokers_rf3"] = _produce_figures(bootstrap, records, latency_records, confluent_throughput,
                                                  confluent_latency, pct, statistics)
        finally:
            cluster.close()
    out["throughput_ratio"] = round(out["brokers_rf3"]["records_per_s"] / out["raft_path"]["records_per_s"], 3)
    out["p50_latency_ratio"] = round(out["brokers_rf3"]["p50_ms"] / out["raft_path"]["p50_ms"], 3)
    return out


# ---------------------------------------------------------------------------------------------------- cost
def cost_bench(records: int, latency_records: int) -> dict:
    import signal

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from alloc_count.build import build
    from client_bench import TOPIC, confluent_latency, confluent_throughput, cpu_seconds
    from harness.roles import RolesCluster, metadata, wait_until

    with tempfile.TemporaryDirectory() as base:
        counts = os.path.join(base, "alloc")
        os.mkdir(counts)
        hook = build(os.path.join(base, "hook"))
        saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "KRAFTWIRE_ALLOC_COUNT")}
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).resolve().parent / "alloc_count"), hook] + ([saved["PYTHONPATH"]] if saved["PYTHONPATH"] else []))
        os.environ["KRAFTWIRE_ALLOC_COUNT"] = counts
        cluster = RolesCluster(base, controllers=1, brokers=2, kraft=True)
        try:
            try:
                for node in cluster.nodes.values():  # the environment is read as each process starts
                    node.start()
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            cluster.wait_for_leader()
            port = cluster.brokers[0].port_of("BROKER")
            bootstrap = ",".join(f"127.0.0.1:{n.port_of('BROKER')}" for n in cluster.brokers)
            _create_topic(bootstrap, 1, 2)

            def isr_full():
                md = metadata(port)
                return any(t.name == TOPIC and t.partitions and len(t.partitions[0].isr_nodes) == 2 for t in md.topics)

            wait_until(isr_full, "the partition's ISR holds both brokers", timeout=60)
            leader_id = next(t.partitions[0].leader_id for t in metadata(port).topics if t.name == TOPIC)
            leader = cluster.nodes[leader_id]
            follower = next(n for n in cluster.brokers if n is not leader)

            def log_bytes(node) -> int:
                return sum(f.stat().st_size for f in Path(base, f"kraft-logs-{node.node_id}", f"{TOPIC}-0").glob("*.log"))

            def allocated() -> int:
                total = 0
                for node in (leader, follower):
                    path = Path(counts, str(node.proc.pid))
                    path.unlink(missing_ok=True)
                    node.proc.send_signal(signal.SIGUSR2)
                    wait_until(path.exists, f"broker {node.node_id}'s allocation count", timeout=30)
                    total += int(path.read_text())
                return total

            confluent_throughput(bootstrap, 2000)  # warm up
            cpu = cpu_seconds(leader.proc.pid)
            lat = confluent_latency(bootstrap, latency_records)
            per_write = cpu_seconds(leader.proc.pid) - cpu
            wait_until(lambda: log_bytes(follower) == log_bytes(leader), "the follower caught up", timeout=60)
            size, alloc, cpu = log_bytes(leader), allocated(), cpu_seconds(leader.proc.pid)
            confluent_throughput(bootstrap, records)
            wait_until(lambda: log_bytes(follower) == log_bytes(leader), "the follower caught up", timeout=120)
            cpu = cpu_seconds(leader.proc.pid) - cpu
            alloc, size = allocated() - alloc, log_bytes(leader) - size
        finally:
            cluster.close()
    return {"leader_cpu_ms_per_acks_all_write": round(per_write * 1000 / latency_records, 3),
            "acks_all_p50_ms": round(statistics.median(lat), 3),
            "leader_cpu_ms_per_mb": round(cpu * 1000 / (size / 1e6), 1),
            "allocated_per_byte_produced": round(alloc / size, 2), "mb_appended": round(size / 1e6, 1)}


def _create_topic(bootstrap: str, partitions: int, replication: int) -> None:
    """Create the benchmark topic, retrying while the brokers are still fenced."""
    from kafka.admin import KafkaAdminClient, NewTopic

    from client_bench import TOPIC

    deadline = time.monotonic() + 60
    while True:
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
            admin.create_topics([NewTopic(TOPIC, num_partitions=partitions, replication_factor=replication)])
            admin.close()
            return
        except Exception:  # noqa: BLE001 - brokers still fenced
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _produce_figures(bootstrap, records, latency_records, throughput, latency, pct, statistics) -> dict:
    from kafka import KafkaConsumer, TopicPartition

    from client_bench import TOPIC

    def stored() -> int:
        c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
        try:
            parts = [TopicPartition(TOPIC, p) for p in sorted(c.partitions_for_topic(TOPIC) or ())]
            return sum(c.end_offsets(parts).values())  # high watermarks (the Raft log's start moves with snapshots)
        finally:
            c.close()

    before = stored()
    elapsed = throughput(bootstrap, records)
    landed = stored() - before
    assert landed >= records, f"only {landed} of {records} records are below the high watermark"
    lat = latency(bootstrap, latency_records)
    return {"records_per_s": round(records / elapsed), "mb_per_s": round(records * 100 / elapsed / 1e6, 2),
            "p50_ms": round(statistics.median(lat), 3), "p99_ms": round(pct(lat, 0.99), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", choices=["restart", "fetch", "produce", "cost", "all"])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--latency-records", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    out = {}
    if args.which in ("restart", "all"):
        out["restart"] = restart_bench(args.partitions)
        print(json.dumps({"restart": out["restart"]}), flush=True)
    if args.which in ("fetch", "all"):
        out["fetch"] = fetch_bench(args.mib)
        print(json.dumps({"fetch": out["fetch"]}), flush=True)
    if args.which in ("produce", "all"):
        out["produce"] = produce_bench(args.records, args.latency_records)
        print(json.dumps({"produce": out["produce"]}), flush=True)
    if args.which in ("cost", "all"):
        out["cost"] = cost_bench(args.records, args.latency_records)
        print(json.dumps({"cost": out["cost"]}), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
