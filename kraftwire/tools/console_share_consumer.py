"""``kraftwire console-share-consumer``: Kafka's ``kafka-console-share-consumer.sh`` (``ConsoleShareConsumer``) with its
flags and output — the records of a topic read as a member of a share group (``--group``, default
``console-share-consumer``), printed as Kafka's DefaultMessageFormatter prints them, each acknowledged as it is
printed: ACCEPT, or RELEASE with ``--release`` (it comes back, its delivery count raised) or REJECT with ``--reject``
(never again). ``--max-messages`` stops after N records, ``--timeout-ms`` after that long without one; at the end
``Processed a total of N messages`` on standard error. The consumer is ``share_consumer``'s, on kraftwire's own
protocol client.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from kraftwire.tools.admin import connect
from kraftwire.tools.command_config import client_security, parse_pairs
from kraftwire.tools.console_consumer import Formatter
from kraftwire.tools.share_consumer import ACCEPT, REJECT, RELEASE, ConsumerError, ShareConsumer

DEFAULT_GROUP = "console-share-consumer"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                        help="REQUIRED: The server(s) to connect to.")
    parser.add_argument("--topic", help="The topic to consume from.")
    parser.add_argument("--group", default=DEFAULT_GROUP, help="The share group id of the consumer.")
    parser.add_argument("--max-messages", type=int, help="The maximum number of messages to consume before exiting.")
    parser.add_argument("--timeout-ms", type=int,
                        help="If specified, exit if no message is available for consumption for the interval.")
    parser.add_argument("--reject", action="store_true", help="If specified, messages are rejected as they are "
                                                              "consumed.")
    parser.add_argument("--release", action="store_true", help="If specified, messages are released as they are "
                                                               "consumed.")
    for flag, dest in (("--formatter-property", "formatter_property"), ("--property", "property")):
        parser.add_argument(flag, action="append", default=[], dest=dest, metavar="PROP=VALUE",
                            help="formatter properties: print.key, print.timestamp, print.partition, print.offset, "
                                 "print.delivery, print.headers, print.value, key.separator, line.separator, "
                                 "null.literal")
    for flag, dest in (("--command-property", "command_property"), ("--consumer-property", "consumer_property")):
        parser.add_argument(flag, action="append", default=[], dest=dest, metavar="PROP=VALUE",
                            help="consumer properties (group.id is read; --group wins)")
    for flag, dest in (("--command-config", "command_config"), ("--consumer-config", "consumer_config")):
        parser.add_argument(flag, dest=dest, metavar="CONFIG-FILE", help="client properties for a secured listener")


def check_args(args) -> str | None:
    """``ConsoleShareConsumerOptions``' refusals, in their words."""
    if args.topic is None:
        return "--topic is a required argument"
    if args.reject and args.release:
        return "At most one of --reject and --release may be specified."
    for new, old in (("command_property", "consumer_property"), ("formatter_property", "property"),
                     ("command_config", "consumer_config")):
        if getattr(args, new) and getattr(args, old):
            return (f"Options --{old.replace('_', '-')} and --{new.replace('_', '-')} cannot be specified "
                    "together.")
    return None


class ShareFormatter(Formatter):
    """DefaultMessageFormatter over a share delivery, with ``print.delivery`` (``Delivery:N``, as Kafka 4.4 prints
    it)."""

    def __init__(self, props: dict[str, str]) -> None:
        super().__init__(props)
        self.delivery = props.get("print.delivery", "false").lower() == "true"

    def format_delivery(self, d) -> str:
        text = self.format(_AsMessage(d))
        if not self.delivery:
            return text
        parts = text[:len(text) - len(self.line_sep)].split(self.key_sep) if self.line_sep else [text]
        at = sum((self.timestamp, self.partition, self.offset))
        parts.insert(at, f"Delivery:{d.delivery_count}")
        return self.key_sep.join(parts) + self.line_sep


class _AsMessage:
    """A share delivery in the shape ``Formatter`` reads (confluent-kafka's Message)."""

    def __init__(self, d) -> None:
        self.d = d

    def timestamp(self):
        return (self.d.timestamp_type + 1, self.d.timestamp)

    def partition(self):
        return self.d.partition

    def offset(self):
        return self.d.offset

    def headers(self):
        return self.d.headers

    def key(self):
        return self.d.key

    def value(self):
        return self.d.value


def run(args: argparse.Namespace) -> int:
    problem = check_args(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    tls, login = client_security(args.command_config or args.consumer_config)
    fmt = ShareFormatter(parse_pairs(args.formatter_property + args.property, "--formatter-property"))
    kind = REJECT if args.reject else RELEASE if args.release else ACCEPT
    count = [0]
    try:
        return asyncio.run(_consume(args, tls, login, fmt, kind, count))
    except KeyboardInterrupt:
        return 0
    except (ConsumerError, OSError, asyncio.TimeoutError) as exc:
        print(f"Error processing message, terminating consumer process: {exc or type(exc).__name__}",
              file=sys.stderr)
        return 1
    finally:
        print(f"Processed a total of {count[0]} messages", file=sys.stderr)


async def _consume(args, tls, login, fmt: ShareFormatter, kind: int, count: list) -> int:
    from kraftwire.tools.consumer_groups import Admin

    timeout_s = 30.0
    conn = await connect(argparse.Namespace(bootstrap_server=args.bootstrap_server, timeout=timeout_s), tls, login)
    admin = Admin(conn, tls, login, timeout_s)
    consumer = ShareConsumer(admin, args.group, args.topic, timeout_s)
    out = sys.stdout
    try:
        await consumer.heartbeat()
        last = time.monotonic()
        while args.max_messages is None or count[0] < args.max_messages:
            got = await consumer.poll()
            for d in got:
                if args.max_messages is not None and count[0] >= args.max_messages:
                    break  # left acquired: closing the session releases it
                out.write(fmt.format_delivery(d))
                out.flush()
                consumer.acknowledge(d, kind)
                count[0] += 1
            if got:
                last = time.monotonic()
            elif args.timeout_ms is not None and (time.monotonic() - last) * 1000 >= args.timeout_ms:
                print("Error processing message, terminating consumer process: "
                      "org.apache.kafka.common.errors.TimeoutException", file=sys.stderr)
                break
        return 0
    finally:
        try:
            await consumer.close()
        finally:
            await admin.close()
