"""Transactions benchmark (issue 20): transactional produce against the same producer without transactions.

    python benchmarks/txn_bench.py [--records 200000] [--per-txn 1000] [--brokers 1] [--replication-factor 1]
        [--json F]

With ``--brokers 1`` (the default): one KRaft node of Kafka 4's quickstart shape (``broker,controller``,
``--standalone``) as a real process; topics of 3 partitions. With ``--brokers N`` (N > 1): one controller and N
brokers as real processes (``tests/harness/roles.RolesCluster``), topics of 3 partitions with
``--replication-factor`` replicas and ``__transaction_state`` replicated as widely (up to 3), so every commit's
markers and every batch wait for the followers (acks=all: the whole ISR).

confluent-kafka produces ``--records`` records of 100 bytes with acks=all and idempotence, first without
transactions, then with a transactional id committing every ``--per-txn`` records (begin, produce, commit: the commit
waits for the markers to be written). Then the same, once more each, alternating, so both see the same machine; the
best of the two runs of each is reported. A read_committed consumer checks that every transactional
record is there once.

The issue's goal: transactional records/s >= 50 % of non-transactional. Reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from harness import processes  # noqa: E402

VALUE = b"v" * 100
LINGER_MS = 5  # --linger-ms: the same for both producers


def _produce(port: int, topic: str, records: int, per_txn: int | None, tid: str) -> float:
    from confluent_kafka import Producer

    conf = {"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all", "enable.idempotence": True,
            "linger.ms": LINGER_MS, "batch.num.messages": 10000, "queue.buffering.max.messages": 1_000_000}
    if per_txn:
        conf["transactional.id"] = tid
    p = Producer(conf)
    if per_txn:
        p.init_transactions(30)
    t0 = time.perf_counter()
    sent = 0
    while sent < records:
        n = min(per_txn or records, records - sent)
        if per_txn:
            p.begin_transaction()
        for i in range(n):
            while True:
                try:
                    p.produce(topic, VALUE, partition=(sent + i) % 3)
                    break
                except BufferError:
                    p.poll(0.01)
        if per_txn:
            p.commit_transaction(60)
        sent += n
    p.flush(60)
    return time.perf_counter() - t0


def _count_committed(port: int, topic: str, want: int) -> int:
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": f"check-{time.time()}",
                  "auto.offset.reset": "earliest", "isolation.level": "read_committed", "enable.auto.commit": False})
    c.subscribe([topic])
    got, deadline = 0, time.monotonic() + 120
    try:
        while got < want and time.monotonic() < deadline:
            for m in c.consume(10000, 1.0):
                if m.error() is None:
                    got += 1
    finally:
        c.close()
    return got


def _measure(bport: int, records: int, per_txn: int) -> dict:
    rates: dict[str, list[float]] = {"plain": [], "txn": []}
    for rnd in range(2):
        rates["plain"].append(records / _produce(bport, "plain", records, None, ""))
        rates["txn"].append(records / _produce(bport, "txn", records, per_txn, f"bench-{rnd}"))
    committed = _count_committed(bport, "txn", 2 * records)
    plain, txn = max(rates["plain"]), max(rates["txn"])
    return {"records": records, "per_txn": per_txn, "plain_records_per_s": round(plain),
            "txn_records_per_s": round(txn), "ratio": round(txn / plain, 3), "runs": rates,
            "txn_records_read_committed": committed, "txn_records_expected": 2 * records}


def _full_isrs(port: int, topics: tuple[str, ...], rf: int) -> bool:
    from harness import roles

    try:
        md = roles.metadata(port)
    except Exception:  # noqa: BLE001 - a broker may still be starting
        return False
    parts = [p for t in md.topics if t.name in topics and t.error_code == 0 for p in t.partitions]
    names = {t.name for t in md.topics if t.error_code == 0}
    return set(topics) <= names and all(p.leader_id >= 0 and len(p.isr_nodes) == rf for p in parts)


def run_replicated(records: int, per_txn: int, base: str, brokers: int, rf: int) -> dict:
    """One controller and ``brokers`` brokers (KRaft processes); the topics with ``rf`` replicas."""
    from harness import roles

    internal_rf = min(3, brokers)
    props = (f"transaction.state.log.replication.factor={internal_rf}\n"
             f"transaction.state.log.min.isr={min(2, internal_rf)}\ntransaction.state.log.num.partitions=3\n"
             f"offsets.topic.replication.factor={internal_rf}\noffsets.topic.num.partitions=3\n")
    cluster = roles.RolesCluster(base, controllers=1, brokers=brokers, kraft=True, extra_props=props)
    try:
        for node in cluster.nodes.values():
            node.start()
        cluster.wait_for_leader()
        ids = sorted(n.node_id for n in cluster.brokers)
        ports = [n.port_of("BROKER") for n in cluster.brokers]
        roles.wait_until(lambda: all(roles.broker_ids(p) == ids for p in ports), "every broker registered", cluster)
        bport = ports[0]
        for name in ("plain", "txn"):
            deadline = time.monotonic() + 60
            while "Created topic" not in processes.kw("topics", "--create", "--topic", name, "--partitions", "3",
                                                      "--replication-factor", str(rf), "--bootstrap-server",
                                                      f"localhost:{bport}", check=False).stdout:
                if time.monotonic() > deadline:
                    raise AssertionError(f"topic {name} not created")
                time.sleep(0.2)
        roles.wait_until(lambda: _full_isrs(bport, ("plain", "txn"), rf), "full ISRs", cluster, timeout=60)
        result = _measure(bport, records, per_txn)
    finally:
        cluster.close()
    return {**result, "brokers": brokers, "replication_factor": rf}


def run(records: int, per_txn: int, base: str) -> dict:
    csock, bsock = processes.bind_listener(), processes.bind_listener()
    cport, bport = csock.getsockname()[1], bsock.getsockname()[1]
    config = os.path.join(base, "server.properties")
    with open(config, "w") as f:
        f.write(f"process.roles=broker,controller\nnode.id=1\ncontroller.quorum.bootstrap.servers=localhost:{cport}\n"
                f"listeners=PLAINTEXT://:{bport},CONTROLLER://:{cport}\n"
                f"advertised.listeners=PLAINTEXT://localhost:{bport},CONTROLLER://localhost:{cport}\n"
                "controller.listener.names=CONTROLLER\ninter.broker.listener.name=PLAINTEXT\n"
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
                f"log.dirs={base}/logs\noffsets.topic.replication.factor=1\n"
                "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n")
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    processes.kw("storage", "format", "--standalone", "-t", cluster_id, "-c", config)
    proc = processes.start_server(config, [csock, bsock], os.path.join(base, "node.log"),
                                  {"CONTROLLER": csock, "PLAINTEXT": bsock})
    try:
        for name in ("plain", "txn"):
            deadline = time.monotonic() + 60
            while "Created topic" not in processes.kw("topics", "--create", "--topic", name, "--partitions", "3",
                                                      "--bootstrap-server", f"localhost:{bport}",
                                                      check=False).stdout:
                if time.monotonic() > deadline:
                    raise AssertionError(f"topic {name} not created")
                time.sleep(0.2)
        result = _measure(bport, records, per_txn)
    finally:
        processes.stop_all([proc])
    return {**result, "brokers": 1, "replication_factor": 1}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--per-txn", type=int, default=1000)
    parser.add_argument("--brokers", type=int, default=1, help="1: one broker,controller node; more: one "
                        "controller and this many brokers")
    parser.add_argument("--replication-factor", type=int, default=None,
                        help="replicas of the benchmark topics (default: min(3, --brokers))")
    parser.add_argument("--linger-ms", type=int, default=5,
                        help="linger.ms of both producers (librdkafka lingers once per transaction's first batch: with "
                             "RF 3 a 5 ms linger costs a transaction ~20 ms, 0 costs ~4 ms)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    global LINGER_MS
    LINGER_MS = args.linger_ms
    rf = args.replication_factor if args.replication_factor is not None else min(3, args.brokers)
    if args.brokers < 1 or not 1 <= rf <= args.brokers:
        parser.error("--replication-factor must be between 1 and --brokers")
    with tempfile.TemporaryDirectory() as base:
        if args.brokers == 1:
            result = run(args.records, args.per_txn, base)
        else:
            result = run_replicated(args.records, args.per_txn, base, args.brokers, rf)
    print(json.dumps(result, indent=2))
    print(f"{result['brokers']} broker(s), topics of 3 partitions with replication factor "
          f"{result['replication_factor']}")
    print("| produce (confluent-kafka, acks=all, 100 B) | records/s |\n|---|---|")
    print(f"| idempotent, no transactions | {result['plain_records_per_s']:,} |")
    print(f"| transactional, {result['per_txn']} records per transaction | {result['txn_records_per_s']:,} "
          f"({result['ratio'] * 100:.0f} %, goal >= 50 %) |")
    print(f"read_committed read back {result['txn_records_read_committed']:,} of "
          f"{result['txn_records_expected']:,} transactional records")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
