"""``kraftwire verifiable-producer``: Kafka's VerifiableProducer (the system-test tool) with its options and its JSON
lines: values are increasing integers (``"0"``, ``"1"``...; ``PREFIX.N`` with ``--value-prefix``), one
``producer_send_success`` (topic, partition, offset) or ``producer_send_error`` line per record, then ``tool_data``
and ``shutdown_complete``. The Java tool cannot be installed from the registries these machines reach; this runs on
confluent-kafka (librdkafka) with Kafka producer keys passed through (``producer_perf_test``)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", required=True, help="produce messages to this topic")
    parser.add_argument("--bootstrap-server", "--broker-list", dest="bootstrap_server", required=True,
                        help="the server(s) to connect to, HOST1:PORT1,HOST2:PORT2")
    parser.add_argument("--max-messages", type=int, default=-1,
                        help="produce this many messages; -1 (default) produces until killed")
    parser.add_argument("--throughput", type=int, default=-1, help="about this many messages/sec; -1: no limit")
    parser.add_argument("--acks", default="-1", help="acks (-1, 0, 1 or all; default -1)")
    parser.add_argument("--producer.config", dest="producer_config", help="producer properties file")
    parser.add_argument("--message-create-time", type=int, default=-1,
                        help="create time (ms) of the first message; later ones add the elapsed time")
    parser.add_argument("--value-prefix", type=int, help="prefix every value with 'PREFIX.'")
    parser.add_argument("--repeating-keys", type=int, help="keys cycle through 0..N-1 (default: no keys)")


def now_ms() -> int:
    return int(time.time() * 1000)


def emit(obj: dict) -> None:
    """One JSON line, flushed: a test harness reads the lines as they come, as from Kafka's tools."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    from kraftwire.tools.command_config import kafka_client, librdkafka_config, read_client_properties

    props = read_client_properties(args.producer_config, "--producer.config") if args.producer_config else {}
    props["bootstrap.servers"] = args.bootstrap_server
    props["acks"] = args.acks
    producer = kafka_client("Producer", librdkafka_config(props))
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("now", True))
    signal.signal(signal.SIGINT, lambda *_: stop.__setitem__("now", True))
    counts = {"sent": 0, "acked": 0}
    emit({"timestamp": now_ms(), "name": "startup_complete"})
    start = time.monotonic()
    create_time = args.message_create_time

    def delivered(err, msg):
        key = msg.key().decode() if msg.key() is not None else None
        value = msg.value().decode() if msg.value() is not None else None
        if err is not None:
            emit({"timestamp": now_ms(), "name": "producer_send_error", "exception": type(err).__name__,
                  "message": err.str(), "topic": msg.topic(), "key": key, "value": value})
        else:
            counts["acked"] += 1
            emit({"timestamp": now_ms(), "name": "producer_send_success", "key": key, "value": value,
                  "topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset()})

    i = 0
    while (args.max_messages < 0 or i < args.max_messages) and not stop["now"]:
        value = f"{args.value_prefix}.{i}" if args.value_prefix is not None else str(i)
        key = str(i % args.repeating_keys) if args.repeating_keys else None
        kwargs = {}
        if create_time >= 0:
            kwargs["timestamp"] = create_time + int((time.monotonic() - start) * 1000)
        while True:
            try:
                producer.produce(args.topic, value=value.encode(), key=key.encode() if key else None,
                                 on_delivery=delivered, **kwargs)
                break
            except BufferError:
                producer.poll(0.01)
        counts["sent"] += 1
        i += 1
        producer.poll(0)
        if args.throughput > 0:
            ahead = i / args.throughput - (time.monotonic() - start)
            if ahead > 0:
                producer.poll(ahead)
    producer.flush(30)
    elapsed = max(time.monotonic() - start, 1e-9)
    emit({"timestamp": now_ms(), "name": "shutdown_complete"})
    emit({"timestamp": now_ms(), "name": "tool_data", "sent": counts["sent"], "acked": counts["acked"],
          "target_throughput": args.throughput, "avg_throughput": counts["acked"] / elapsed})
    sys.stdout.flush()
    return 0
