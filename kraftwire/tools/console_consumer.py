"""``kraftwire console-consumer``: Kafka's ``kafka-console-consumer.sh`` with its flags and output, on
confluent-kafka (librdkafka; the Java tool cannot be installed here).

Without ``--group`` it reads every partition of the topic (or ``--partition``) itself, from the end, from the
beginning (``--from-beginning``) or from ``--offset`` (earliest, latest or a number), and commits nothing (Kafka's
tool joins a throwaway generated group with auto-commit off, which reads the same records). With ``--group`` it
subscribes as a member of that group (``--partition`` assigns that partition instead) and commits its position
automatically: a group with committed offsets resumes from them, one without starts at the end, or at the beginning
with ``--from-beginning``. ``--offset`` and ``--group`` are refused together, as Kafka refuses them. Output is Kafka's DefaultMessageFormatter: the value per line,
``print.key`` / ``print.timestamp`` / ``print.partition`` / ``print.offset`` / ``print.headers`` with
``key.separator`` and ``line.separator``, ``null`` for a null key or value; at the end ``Processed a total of N
messages`` on standard error. ``--max-messages`` stops after N records, ``--timeout-ms`` after that long without
one.
"""

from __future__ import annotations

import argparse
import sys
import time

from kraftwire.tools.command_config import kafka_client, librdkafka_config, parse_pairs, read_client_properties

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                        help="the server(s) to connect to")
    parser.add_argument("--topic", required=True, help="the topic to consume")
    parser.add_argument("--from-beginning", action="store_true",
                        help="start with the earliest message rather than the latest")
    parser.add_argument("--partition", type=int, help="read only this partition")
    parser.add_argument("--offset", default=None,
                        help="where to start in --partition: earliest, latest or an offset (default latest)")
    parser.add_argument("--max-messages", type=int, help="exit after this many messages")
    parser.add_argument("--timeout-ms", type=int, help="exit after this long without a message")
    parser.add_argument("--group", help="the consumer group to consume in (offsets are committed)")
    parser.add_argument("--property", action="append", default=[], metavar="PROP=VALUE",
                        help="formatter properties: print.key, print.timestamp, print.partition, print.offset, "
                             "print.headers, print.value, key.separator, line.separator, null.literal")
    parser.add_argument("--formatter-property", action="append", default=[], dest="formatter_property",
                        metavar="PROP=VALUE", help="the same as --property (Kafka 3.7+ name)")
    parser.add_argument("--consumer-property", action="append", default=[], metavar="PROP=VALUE",
                        help="consumer properties (Kafka keys)")
    parser.add_argument("--consumer.config", dest="consumer_config", metavar="CONFIG-FILE",
                        help="consumer properties file")
    parser.add_argument("--command-config", dest="command_config", metavar="CONFIG-FILE",
                        help="the same as --consumer.config (Kafka 4.x name)")
    parser.add_argument("--isolation-level", default="read_uncommitted",
                        choices=("read_uncommitted", "read_committed"))


class Formatter:
    """Kafka's DefaultMessageFormatter."""

    def __init__(self, props: dict[str, str]) -> None:
        flag = lambda k, d="false": props.get(k, d).lower() == "true"  # noqa: E731
        self.key, self.timestamp, self.partition = flag("print.key"), flag("print.timestamp"), flag("print.partition")
        self.offset, self.headers, self.value = flag("print.offset"), flag("print.headers"), flag("print.value", "true")
        self.key_sep = _unescape(props.get("key.separator", "\t"))
        self.line_sep = _unescape(props.get("line.separator", "\n"))
        self.null = props.get("null.literal", "null")

    def _text(self, data: bytes | None) -> str:
        return self.null if data is None else data.decode("utf-8", errors="replace")

    def format(self, msg) -> str:
        out = []
        if self.timestamp:
            kind, ts = msg.timestamp()
            name = {1: "CreateTime", 2: "LogAppendTime"}.get(kind)
            out.append(f"{name}:{ts}" if name else "NO_TIMESTAMP")
        if self.partition:
            out.append(f"Partition:{msg.partition()}")
        if self.offset:
            out.append(f"Offset:{msg.offset()}")
        if self.headers:
            headers = msg.headers() or []
            out.append(",".join(f"{k}:{self._text(v)}" for k, v in headers) if headers else "NO_HEADERS")
        if self.key:
            out.append(self._text(msg.key()))
        if self.value:
            out.append(self._text(msg.value()))
        return self.key_sep.join(out) + self.line_sep


def _unescape(text: str) -> str:
    return text.encode("utf-8").decode("unicode_escape")


def _start(args) -> int:
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END

    if args.offset is None or args.offset == "latest":
        return OFFSET_BEGINNING if args.from_beginning else OFFSET_END
    if args.offset == "earliest":
        return OFFSET_BEGINNING
    try:
        value = int(args.offset)
    except ValueError:
        raise SystemExit(f"The offset must be earliest, latest or a non-negative number, not {args.offset}") from None
    if value < 0:
        raise SystemExit(f"The offset must be earliest, latest or a non-negative number, not {args.offset}")
    return value


def run(args: argparse.Namespace) -> int:
    from confluent_kafka import KafkaException, TopicPartition

    if args.group and args.offset is not None:
        print("Options group and offset cannot be specified together.", file=sys.stderr)
        return 1
    if args.offset is not None and args.partition is None:
        print("The partition is required when offset is specified.", file=sys.stderr)
        return 1
    if args.offset is not None and args.from_beginning:
        print("Options from-beginning and offset cannot be specified together.", file=sys.stderr)
        return 1
    start = _start(args)
    fmt = Formatter(parse_pairs(args.property + args.formatter_property))
    props: dict[str, str] = {}
    for flag, path in (("--consumer.config", args.consumer_config), ("--command-config", args.command_config)):
        if path:
            props.update(read_client_properties(path, flag))
    props.update(parse_pairs(args.consumer_property, "--consumer-property"))
    if args.group:
        props.update({"bootstrap.servers": args.bootstrap_server, "isolation.level": args.isolation_level,
                      "group.id": args.group,
                      "auto.offset.reset": "earliest" if args.from_beginning else props.get("auto.offset.reset",
                                                                                          "latest")})
    else:
        props.update({"bootstrap.servers": args.bootstrap_server, "isolation.level": args.isolation_level,
                      "enable.auto.commit": "false", "enable.auto.offset.store": "false",
                      # librdkafka needs a group id even for assigned partitions; nothing is committed under it
                      "group.id": props.get("group.id", "kraftwire-console-consumer")})
    consumer = kafka_client("Consumer", librdkafka_config(props))
    count = 0
    try:
        meta = consumer.list_topics(args.topic, timeout=30)
        topic = meta.topics.get(args.topic)
        if topic is None or topic.error is not None:
            print(f"Error: topic {args.topic}: {topic.error if topic else 'unknown'}", file=sys.stderr)
            return 1
        if args.group and args.partition is None:
            consumer.subscribe([args.topic])
        elif args.group:
            consumer.assign([TopicPartition(args.topic, args.partition)])  # the committed offset, or the reset
        else:
            partitions = sorted(topic.partitions) if args.partition is None else [args.partition]
            consumer.assign([TopicPartition(args.topic, p, start) for p in partitions])
        last = time.monotonic()
        out = sys.stdout
        while args.max_messages is None or count < args.max_messages:
            msg = consumer.poll(0.2)
            if msg is None:
                if args.timeout_ms is not None and (time.monotonic() - last) * 1000 >= args.timeout_ms:
                    print("Error processing message, terminating consumer process: "
                          "org.apache.kafka.common.errors.TimeoutException", file=sys.stderr)
                    break
                continue
            if msg.error() is not None:
                if msg.error().code() == -191:  # _PARTITION_EOF: informational
                    continue
                print(f"Error: {msg.error()}", file=sys.stderr)
                continue
            out.write(fmt.format(msg))
            out.flush()
            count += 1
            last = time.monotonic()
    except KeyboardInterrupt:
        pass
    except KafkaException as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    finally:
        consumer.close()
        print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0
