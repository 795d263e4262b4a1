"""Transactions benchmark (issue 20): transactional produce against the same producer without transactions.

    python benchmarks/txn_bench.py [--records 200000] [--per-txn 1000] [--json F]

One KRaft node of Kafka 4's quickstart shape (``broker,controller``, ``--standalone``) as a real process; a topic of
3 partitions. confluent-kafka produces ``--records`` records of 100 bytes with acks=all and idempotence, first
without transactions, then with a transactional id committing every ``--per-txn`` records (begin, produce, commit:
the commit waits for the markers to be written). Then the same, once more each, alternating, so both see the same
machine; the best of the two runs of each is reported. A read_committed consumer checks that every transactional
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


def _produce(port: int, topic: str, records: int, per_txn: int | None, tid: str) -> float:
    from confluent_kafka import Producer

    conf = {"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all", "enable.idempotence": True,
            "linger.ms": 5, "batch.num.messages": 10000, "queue.buffering.max.messages": 1_000_000}
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
        rates: dict[str, list[float]] = {"plain": [], "txn": []}
        for rnd in range(2):
            rates["plain"].append(records / _produce(bport, "plain", records, None, ""))
            rates["txn"].append(records / _produce(bport, "txn", records, per_txn, f"bench-{rnd}"))
        committed = _count_committed(bport, "txn", 2 * records)
    finally:
        processes.stop_all([proc])
    plain, txn = max(rates["plain"]), max(rates["txn"])
    return {"records": records, "per_txn": per_txn, "plain_records_per_s": round(plain),
            "txn_records_per_s": round(txn), "ratio": round(txn / plain, 3), "runs": rates,
            "txn_records_read_committed": committed, "txn_records_expected": 2 * records}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--per-txn", type=int, default=1000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as base:
        result = run(args.records, args.per_txn, base)
    print(json.dumps(result, indent=2))
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
