"""``kraftwire console-producer``: Kafka's ``kafka-console-producer.sh`` — one record per line of standard input —
with its flags, on confluent-kafka (librdkafka; the Java tool cannot be installed here). Producer properties are
Kafka keys (``--producer.config``, ``--command-config``, ``--producer-property``), translated as every tool's are
(``kraftwire.tools.command_config.librdkafka_config``).

As Kafka's tool: acks=all (``--request-required-acks``), keys hashed with murmur2 like the Java client's default
partitioner so a key lands where a Java producer would put it, ``--property parse.key=true`` with
``key.separator`` (default a tab) splits each line into key and value, ``null.marker`` makes a key or value null, and
``ignore.error=true`` sends a line without a separator as a value. A record the cluster refuses is reported on
standard error with Kafka's error name and the tool exits 1 after the rest was sent.
"""

from __future__ import annotations

import argparse
import sys

from kraftwire.tools.command_config import kafka_client, librdkafka_config, parse_pairs, read_client_properties


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                        help="the server(s) to connect to")
    parser.add_argument("--topic", required=True, help="the topic to produce to")
    parser.add_argument("--property", action="append", default=[], metavar="PROP=VALUE",
                        help="line reader properties: parse.key, key.separator, ignore.error, null.marker")
    parser.add_argument("--reader-property", action="append", default=[], dest="reader_property",
                        metavar="PROP=VALUE", help="the same as --property (Kafka 3.7+ name)")
    parser.add_argument("--producer-property", action="append", default=[], metavar="PROP=VALUE",
                        help="producer properties (Kafka keys), e.g. acks=1 linger.ms=5")
    parser.add_argument("--producer.config", dest="producer_config", metavar="CONFIG-FILE",
                        help="producer properties file")
    parser.add_argument("--command-config", dest="command_config", metavar="CONFIG-FILE",
                        help="the same as --producer.config (Kafka 4.x name)")
    parser.add_argument("--request-required-acks", default="-1", help="acks of each request (default -1, all)")
    parser.add_argument("--compression-codec", nargs="?", const="gzip",
                        help="none, gzip (when given without a value), snappy, lz4 or zstd")
    parser.add_argument("--sync", action="store_true", help="wait for each record's acknowledgement")
    parser.add_argument("--timeout", type=int, default=1000, metavar="MS",
                        help="linger: how long a record may wait for a batch (default 1000)")
    parser.add_argument("--request-timeout-ms", type=int, default=1500, help="request timeout (default 1500)")
    parser.add_argument("--message-send-max-retries", type=int, help="retries of a failed send")
    parser.add_argument("--batch-size", type=int, help="records per batch")


def _conf(args) -> dict[str, str]:
    props: dict[str, str] = {"acks": args.request_required_acks, "linger.ms": str(args.timeout),
                             "request.timeout.ms": str(args.request_timeout_ms)}
    if args.compression_codec:
        props["compression.type"] = args.compression_codec
    if args.message_send_max_retries is not None:
        props["retries"] = str(args.message_send_max_retries)
    if args.batch_size is not None:
        props["batch.num.messages"] = str(args.batch_size)
    for flag, path in (("--producer.config", args.producer_config), ("--command-config", args.command_config)):
        if path:
            props.update(read_client_properties(path, flag))
    props.update(parse_pairs(args.producer_property, "--producer-property"))
    props["bootstrap.servers"] = args.bootstrap_server
    conf = librdkafka_config(props)
    conf.setdefault("partitioner", "murmur2_random")  # the Java client's default: murmur2 of the key
    return conf


class LineReader:
    """Kafka's LineMessageReader: a line -> (key, value)."""

    def __init__(self, props: dict[str, str]) -> None:
        self.parse_key = props.get("parse.key", "false").lower() == "true"
        self.separator = props.get("key.separator", "\t")
        self.ignore_error = props.get("ignore.error", "false").lower() == "true"
        self.null_marker = props.get("null.marker")
        if self.null_marker is not None and self.null_marker == self.separator:
            raise SystemExit(f"null.marker and key.separator may not be equal: {self.null_marker!r}")

    def _null(self, text: str | None) -> bytes | None:
        if text is None or (self.null_marker is not None and text == self.null_marker):
            return None
        return text.encode("utf-8")

    def read(self, line: str) -> tuple[bytes | None, bytes | None]:
        if not self.parse_key:
            return None, self._null(line)
        key, sep, value = line.partition(self.separator)
        if not sep:
            if self.ignore_error:
                return None, self._null(line)
            raise ValueError(f"No key separator found on line: {line}")
        return self._null(key), self._null(value)


def run(args: argparse.Namespace) -> int:
    from confluent_kafka import KafkaException

    reader = LineReader(parse_pairs(args.property + args.reader_property))
    producer = kafka_client("Producer", _conf(args))
    failures = [0]

    def delivered(err, _msg) -> None:
        if err is not None:
            failures[0] += 1
            print(f"Error when sending message to topic {args.topic}: {err.name()}: {err.str()}", file=sys.stderr)

    try:
        for raw in sys.stdin:
            line = raw.rstrip("\n").rstrip("\r")
            try:
                key, value = reader.read(line)
            except ValueError as exc:
                print(f"org.apache.kafka.common.KafkaException: {exc}", file=sys.stderr)
                failures[0] += 1
                continue
            while True:
                try:
                    producer.produce(args.topic, value=value, key=key, on_delivery=delivered)
                    break
                except BufferError:
                    producer.poll(0.1)
                except KafkaException as exc:
                    print(f"Error when sending message to topic {args.topic}: {exc}", file=sys.stderr)
                    failures[0] += 1
                    break
            producer.poll(0)
            if args.sync:
                producer.flush()
    except KeyboardInterrupt:
        pass
    left = producer.flush(30)
    if left:
        print(f"{left} messages were not delivered within 30 s", file=sys.stderr)
    return 1 if failures[0] or left else 0
