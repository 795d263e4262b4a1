"""``kraftwire producer-perf-test``: Kafka's ``kafka-producer-perf-test.sh`` (ProducerPerformance) against any
Kafka-wire endpoint, with its options and its output lines. The Java tool cannot be installed from the registries
these machines reach, so this is a re-implementation on confluent-kafka (librdkafka); producer properties are given
as Kafka keys and translated as every tool's are (``kraftwire.tools.command_config.librdkafka_config``).

Output, as Kafka prints it: every 5 seconds
``N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency.`` and at the end
``N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, P50 ms 50th, P95 ms 95th, P99 ms
99th, P999 ms 99.9th.`` Latency is from ``produce()`` to the delivery report.

``--payload-monotonic`` sends record i's value as the text of i (0, 1, 2...), as Kafka's tool does.
``--transactional-id ID`` and/or ``--transaction-duration-ms MS`` produce in transactions: each committed once it
has lasted MS (3000 by default; a transactional id of ``performance-producer-<uuid>`` when only the duration is
given, or the ``transactional.id`` of the producer properties), the last one at the end.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

REPORT_INTERVAL_S = 5.0

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", required=True, help="produce messages to this topic")
    parser.add_argument("--num-records", type=int, required=True, help="number of messages to produce")
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--record-size", type=int, help="message size in bytes")
    size.add_argument("--payload-file", help="file of payloads (split by --payload-delimiter), chosen at random")
    size.add_argument("--payload-monotonic", action="store_true",
                      help="payloads are the record numbers, 0, 1, 2... (as text)")
    parser.add_argument("--payload-delimiter", default="\\n", help="delimiter of --payload-file (default \\n)")
    parser.add_argument("--throughput", type=float, required=True,
                        help="throttle to about this many messages/sec; -1 for no throttling")
    parser.add_argument("--producer-props", nargs="+", default=[], metavar="PROP-NAME=PROP-VALUE",
                        help="producer properties (Kafka keys), e.g. bootstrap.servers=localhost:9092 acks=all")
    parser.add_argument("--producer.config", dest="producer_config", metavar="CONFIG-FILE",
                        help="producer properties file")
    parser.add_argument("--bootstrap-server", help="the server(s) to connect to (instead of bootstrap.servers)")
    parser.add_argument("--print-metrics", action="store_true", help="print librdkafka statistics at the end")
    parser.add_argument("--transactional-id", help="produce in transactions with this transactional id")
    parser.add_argument("--transaction-duration-ms", type=int, metavar="TRANSACTION-DURATION",
                        help="commit each transaction after this long (default 3000 with a transactional id)")


class Stats:
    def __init__(self, num_records: int) -> None:
        self.start = time.monotonic()
        self.window_start = self.start
        self.count = self.bytes = 0
        self.total_latency = 0.0
        self.max_latency = 0.0
        self.w_count = self.w_bytes = 0
        self.w_latency = 0.0
        self.w_max = 0.0
        self.latencies: list[float] = []
        self.sample_every = max(1, num_records // 500_000)

    def record(self, latency_ms: float, size: int, now: float) -> None:
        self.count += 1
        self.bytes += size
        self.total_latency += latency_ms
        self.max_latency = max(self.max_latency, latency_ms)
        self.w_count += 1
        self.w_bytes += size
        self.w_latency += latency_ms
        self.w_max = max(self.w_max, latency_ms)
        if self.count % self.sample_every == 0:
            self.latencies.append(latency_ms)
        if now - self.window_start >= REPORT_INTERVAL_S:
            self.print_window(now)

    def print_window(self, now: float) -> None:
        elapsed = max(now - self.window_start, 1e-9)
        n = max(self.w_count, 1)
        print("%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency."
              % (self.w_count, self.w_count / elapsed, self.w_bytes / elapsed / 1024 / 1024, self.w_latency / n,
                 self.w_max), flush=True)
        self.window_start = now
        self.w_count = self.w_bytes = 0
        self.w_latency = self.w_max = 0.0

    def print_total(self) -> None:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        lat = sorted(self.latencies) or [0.0]

        def pct(p: float) -> int:
            return int(lat[min(len(lat) - 1, int(p * len(lat)))])

        n = max(self.count, 1)
        print("%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, "
              "%d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th."
              % (self.count, self.count / elapsed, self.bytes / elapsed / 1024 / 1024, self.total_latency / n,
                 self.max_latency, pct(0.5), pct(0.95), pct(0.99), pct(0.999)), flush=True)


def payloads(args) -> list[bytes]:
    if args.payload_monotonic:
        return []
    if args.record_size is not None:
        rnd = random.Random()
        return [bytes(rnd.randrange(65, 91) for _ in range(args.record_size))]
    with open(args.payload_file, "rb") as f:
        data = f.read()
    delim = args.payload_delimiter.encode().decode("unicode_escape").encode()
    items = [p for p in data.split(delim) if p]
    if not items:
        raise SystemExit(f"File is empty: {args.payload_file}")
    print(f"Number of messages read: {len(items)}", flush=True)
    return items


def transactions(args, props: dict[str, str]) -> int | None:
    """The duration (ms) of each transaction, or None without transactions; sets ``transactional.id`` in ``props``
    as Kafka's tool chooses it (``--transactional-id`` over the properties' own, a random one for a bare
    ``--transaction-duration-ms``)."""
    import uuid

    if args.transaction_duration_ms is not None and args.transaction_duration_ms <= 0:
        raise ValueError("--transaction-duration-ms should be greater than zero.")
    if args.transactional_id:
        props["transactional.id"] = args.transactional_id
    elif args.transaction_duration_ms is not None and not props.get("transactional.id"):
        props["transactional.id"] = f"performance-producer-{uuid.uuid4()}"
    if not props.get("transactional.id"):
        return None
    return args.transaction_duration_ms or 3000


def run(args: argparse.Namespace) -> int:
    from kraftwire.tools.command_config import kafka_client, librdkafka_config, parse_pairs, read_client_properties

    props = read_client_properties(args.producer_config, "--producer.config") if args.producer_config else {}
    props.update(parse_pairs(args.producer_props, "--producer-props"))
    try:
        txn_ms = transactions(args, props)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.bootstrap_server:
        props["bootstrap.servers"] = args.bootstrap_server
    if "bootstrap.servers" not in props:
        print("Either --bootstrap-server or bootstrap.servers in --producer-props/--producer.config is required",
              file=sys.stderr)
        return 1
    conf = librdkafka_config(props)
    if args.print_metrics:
        conf.setdefault("statistics.interval.ms", "5000")
        stats_json: list[str] = []
        conf["stats_cb"] = stats_json.append
    producer = kafka_client("Producer", conf)
    items = payloads(args)
    if txn_ms is not None:
        producer.init_transactions()
        producer.begin_transaction()
        txn_start = time.monotonic()
    stats = Stats(args.num_records)
    errors: list = []
    rnd = random.Random()
    throttle = args.throughput
    start = time.monotonic()
    for i in range(args.num_records):
        if txn_ms is not None and (time.monotonic() - txn_start) * 1000 >= txn_ms:
            producer.commit_transaction()
            producer.begin_transaction()
            txn_start = time.monotonic()
        payload = (str(i).encode() if not items else items[0] if len(items) == 1
                   else items[rnd.randrange(len(items))])
        sent = time.monotonic()
        size = len(payload)

        def delivered(err, _msg, sent=sent, size=size):
            if err is not None:
                errors.append(err)
                return
            now = time.monotonic()
            stats.record((now - sent) * 1000.0, size, now)

        while True:
            try:
                producer.produce(args.topic, value=payload, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
        if throttle > 0:
            ahead = (i + 1) / throttle - (time.monotonic() - start)
            if ahead > 0:
                producer.flush(ahead) if ahead > 0.05 else time.sleep(ahead)
    if txn_ms is not None:
        producer.commit_transaction()  # flushes the last transaction's records
    producer.flush()
    for err in errors[:5]:
        print(f"Error when sending message: {err}", file=sys.stderr)
    stats.print_total()
    if args.print_metrics and stats_json:
        print(stats_json[-1])
    return 0 if not errors else 1
