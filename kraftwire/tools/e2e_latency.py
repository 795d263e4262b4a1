"""``kraftwire e2e-latency --bootstrap-server HOST:PORT --topic T --num-records N --producer-acks 1|all
--record-size S``: Kafka's ``kafka-e2e-latency.sh`` (EndToEndLatency), its options and its output, on confluent-kafka
(librdkafka) with Kafka client keys passed through (``producer_perf_test``'s mapping), as the other perf tools.

Each record is produced synchronously and read back by a consumer that starts at the end of every partition; its
latency is from the send to the read. Every 1000th record prints ``i<TAB>latency-ms``, then ``Avg latency: A ms``
and ``Percentiles: 50th = P, 99th = P, 99.9th = P`` (whole ms). A missing topic is created with one partition (and
Kafka's line saying so). ``--record-key-size``, ``--num-headers``, ``--record-header-size`` and
``--record-header-key-size`` add random keys and headers, checked on the way back. Kafka's deprecated positional
form ``BOOTSTRAP TOPIC N ACKS SIZE [CONFIG]`` is taken with Kafka's warning. Failures exit 1 with Kafka's words.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

POLL_TIMEOUT_S = 10.0


class LatencyError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("positional", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap-server", help="the broker list, HOST1:PORT1,HOST2:PORT2")
    parser.add_argument("--topic", help="the topic to use for the test")
    parser.add_argument("--num-records", type=int, help="the number of messages to send")
    parser.add_argument("--producer-acks", help="1 or all")
    parser.add_argument("--record-size", type=int, help="the size of each message value in bytes")
    parser.add_argument("--record-key-size", type=int, default=0, help="the size of each message key in bytes")
    parser.add_argument("--num-headers", type=int, default=0, help="the number of headers of each message")
    parser.add_argument("--record-header-size", type=int, default=0, help="the size of each header value")
    parser.add_argument("--record-header-key-size", type=int, default=0, help="the size of each header key")
    parser.add_argument("--command-config", metavar="FILE", help="client properties file")


def _settings(args) -> None:
    """The named options from Kafka's positional form, with its warning; Kafka's checks of the values."""
    if args.positional:
        if len(args.positional) not in (5, 6):
            raise LatencyError("Invalid number of arguments. Expected 5 or 6 positional arguments, but got "
                               f"{len(args.positional)}. Usage: bootstrap-server topic num-records producer-acks "
                               "record-size [optional] command-config")
        print("WARNING: Positional argument usage is deprecated and will be removed in Apache Kafka 5.0. Please use "
              "named arguments instead: --bootstrap-server, --topic, --num-records, --producer-acks, --record-size, "
              "--command-config")
        p = args.positional
        try:
            args.bootstrap_server, args.topic, args.num_records = p[0], p[1], int(p[2])
            args.producer_acks, args.record_size = p[3], int(p[4])
        except ValueError as exc:
            raise LatencyError(str(exc)) from None
        args.command_config = p[5] if len(p) == 6 else args.command_config
    for flag in ("bootstrap_server", "topic", "num_records", "producer_acks", "record_size"):
        if getattr(args, flag) is None:
            raise LatencyError(f"Missing required argument \"[{flag.replace('_', '-')}]\"")
    if args.producer_acks not in ("1", "all", "-1"):
        raise LatencyError("Invalid value for --producer-acks. Latency testing requires synchronous "
                           "acknowledgement. Please use '1' or 'all'.")


def run(args: argparse.Namespace) -> int:
    try:
        _settings(args)
        latencies = _measure(args)
    except LatencyError as exc:
        print(exc, file=sys.stderr)
        return 1
    n = len(latencies)
    print(f"Avg latency: {sum(latencies) / n / 1e6:.4f} ms")
    ms = sorted(int(t // 1_000_000) for t in latencies)
    print(f"Percentiles: 50th = {ms[int(n * 0.5)]}, 99th = {ms[int(n * 0.99)]}, 99.9th = {ms[int(n * 0.999)]}")
    return 0


def _measure(args) -> list[int]:
    """Each record's latency in ns."""
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    from kraftwire.tools import command_config as cc

    props = cc.read_client_properties(args.command_config) if args.command_config else {}
    props["bootstrap.servers"] = args.bootstrap_server
    base = cc.librdkafka_config(props)
    admin = AdminClient(dict(base))
    if args.topic not in admin.list_topics(timeout=POLL_TIMEOUT_S).topics:
        print(f'Topic "{args.topic}" does not exist. Will create topic with 1 partition(s) and replication factor '
              "= 1")
        try:
            admin.create_topics([NewTopic(args.topic, 1, 1)])[args.topic].result(POLL_TIMEOUT_S)
        except KafkaException as exc:
            raise LatencyError(f"Creation of topic {args.topic} failed: {exc}") from None
    consumer = Consumer({**base, "group.id": f"test-group-{int(time.time() * 1000)}", "enable.auto.commit": False,
                         "auto.offset.reset": "latest", "fetch.wait.max.ms": 0})
    producer = Producer({**base, "linger.ms": 0, "acks": args.producer_acks})
    try:
        partitions = admin.list_topics(args.topic, timeout=POLL_TIMEOUT_S).topics[args.topic].partitions
        ends = [TopicPartition(args.topic, p, consumer.get_watermark_offsets(TopicPartition(args.topic, p),
                                                                            timeout=POLL_TIMEOUT_S)[1])
                for p in sorted(partitions)]
        consumer.assign(ends)
        latencies = []
        for i in range(args.num_records):
            value, key = os.urandom(args.record_size), os.urandom(args.record_key_size) or None
            headers = [(os.urandom(args.record_header_key_size).hex()[:args.record_header_key_size] or f"header-{h}",
                        os.urandom(args.record_header_size)) for h in range(args.num_headers)]  # keys: random text
            begin = time.monotonic_ns()
            producer.produce(args.topic, value=value, key=key, headers=headers or None)
            if producer.flush(POLL_TIMEOUT_S):
                raise LatencyError("the record was not acknowledged within 10 s")
            msg = _read_one(consumer)
            elapsed = time.monotonic_ns() - begin
            _check(msg, value, key, headers)
            if i % 1000 == 0:
                print(f"{i}\t{elapsed / 1e6}")
            latencies.append(elapsed)
        return latencies
    finally:
        consumer.close()


def _read_one(consumer):
    deadline = time.monotonic() + POLL_TIMEOUT_S
    while time.monotonic() < deadline:
        msg = consumer.poll(0.05)
        if msg is not None and msg.error() is None:
            return msg
    raise LatencyError("poll() timed out before finding a result (timeout:10000ms)")


def _check(msg, value: bytes, key: bytes | None, headers) -> None:
    """Kafka's checks of the record read back."""
    if msg.value() != value:
        raise LatencyError(f"The message value read [{msg.value()!r}] did not match the message value sent "
                           f"[{value!r}]")
    if key is not None and msg.key() is None:
        raise LatencyError("Expected message key but received null")
    if key is not None and msg.key() != key:
        raise LatencyError(f"The message key read [{msg.key()!r}] did not match the message key sent [{key!r}]")
    got = msg.headers() or []
    if headers and not got:
        raise LatencyError("Expected message headers but received none")
    if len(got) != len(headers):
        raise LatencyError("Header count mismatch between sent and received messages")
