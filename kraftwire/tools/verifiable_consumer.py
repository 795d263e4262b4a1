"""``kraftwire verifiable-consumer --bootstrap-server HOST:PORT --topic T --group-id G``: Kafka's VerifiableConsumer
(the system-test tool, ``kafka-verifiable-consumer.sh``) with its options and its JSON lines, on confluent-kafka
(librdkafka) with Kafka consumer keys passed through (``producer_perf_test``'s mapping), as verifiable-producer.

Lines, one JSON object each (``timestamp`` and ``name`` first): ``startup_complete``; ``partitions_assigned`` /
``partitions_revoked`` with ``partitions: [{topic, partition}]``; per poll ``records_consumed`` with ``count`` and
per partition ``{topic, partition, count, minOffset, maxOffset}`` (``record_data`` per record with ``--verbose``);
without ``--enable-autocommit`` the poll's offsets committed synchronously, ``offsets_committed`` with ``offsets:
[{topic, partition, offset}]`` and ``success`` (``error`` when it failed); ``shutdown_requested`` on SIGTERM/SIGINT
(before the revocation), ``shutdown_complete`` at the end, and then ``shutdown_requested`` when it was not asked to
stop, as Kafka's shutdown hook prints it. ``--max-messages N`` stops after N records (the last poll's cut to fit).
"""

from __future__ import annotations

import argparse
import signal

from kraftwire.tools.verifiable_producer import emit, now_ms

#: Kafka's assignor classes by librdkafka's names for them
ASSIGNORS = {"org.apache.kafka.clients.consumer.RangeAssignor": "range",
             "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
             "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", required=True, help="consume messages from this topic")
    parser.add_argument("--group-protocol", default="classic", type=str.lower, choices=("classic", "consumer"),
                        help="the group protocol (default: classic)")
    parser.add_argument("--group-remote-assignor", help="the group's remote assignor (consumer protocol only)")
    parser.add_argument("--group-id", required=True, help="the group id of the consumer group")
    parser.add_argument("--group-instance-id", help="a unique identifier of the consumer instance")
    parser.add_argument("--max-messages", type=int, default=-1, help="consume this many messages; -1: until killed")
    parser.add_argument("--session-timeout", type=int, metavar="TIMEOUT-MS", help="the session timeout (classic)")
    parser.add_argument("--verbose", action="store_true", help="log each consumed record")
    parser.add_argument("--enable-autocommit", action="store_true", help="commit offsets automatically")
    parser.add_argument("--close-timeout", type=int, default=30000, metavar="CLOSE-TIMEOUT-MS",
                        help="ms allowed to close the consumer")
    parser.add_argument("--reset-policy", default="earliest", choices=("earliest", "latest", "none"),
                        help="auto.offset.reset (default: earliest)")
    parser.add_argument("--assignment-strategy", default="org.apache.kafka.clients.consumer.RangeAssignor",
                        help="the assignor class (classic protocol only)")
    parser.add_argument("--command-config", "--consumer.config", dest="command_config", metavar="CONFIG-FILE",
                        help="consumer properties file")
    parser.add_argument("--bootstrap-server", "--broker-list", dest="bootstrap_server", required=True,
                        help="the server(s) to connect to, HOST1:PORT1,HOST2:PORT2")


def consumer_config(args) -> dict:
    from kraftwire.tools import command_config as cc

    props = cc.read_client_properties(args.command_config) if args.command_config else {}
    props.update({"bootstrap.servers": args.bootstrap_server, "group.id": args.group_id,
                  "enable.auto.commit": "true" if args.enable_autocommit else "false",
                  "auto.offset.reset": args.reset_policy, "group.protocol": args.group_protocol})
    if args.group_instance_id:
        props["group.instance.id"] = args.group_instance_id
    if args.group_protocol == "classic":
        props["partition.assignment.strategy"] = ASSIGNORS.get(args.assignment_strategy, args.assignment_strategy)
        if args.session_timeout is not None:
            props["session.timeout.ms"] = str(args.session_timeout)
    elif args.group_remote_assignor:
        props["group.remote.assignor"] = args.group_remote_assignor
    return cc.librdkafka_config(props)


def _partitions(parts) -> list[dict]:
    return [{"topic": p.topic, "partition": p.partition} for p in parts]


def run(args: argparse.Namespace) -> int:
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(consumer_config(args))
    stop = {"now": False}

    def requested(*_):
        if not stop["now"]:
            emit({"timestamp": now_ms(), "name": "shutdown_requested"})
        stop["now"] = True

    signal.signal(signal.SIGTERM, requested)
    signal.signal(signal.SIGINT, requested)
    emit({"timestamp": now_ms(), "name": "startup_complete"})
    consumer.subscribe([args.topic],
                       on_assign=lambda c, ps: emit({"timestamp": now_ms(), "name": "partitions_assigned",
                                                     "partitions": _partitions(ps)}),
                       on_revoke=lambda c, ps: emit({"timestamp": now_ms(), "name": "partitions_revoked",
                                                     "partitions": _partitions(ps)}))
    consumed = 0
    try:
        while not stop["now"] and (args.max_messages < 0 or consumed < args.max_messages):
            batch = [m for m in consumer.consume(num_messages=500, timeout=0.1) if m.error() is None]
            if args.max_messages >= 0:
                batch = batch[:args.max_messages - consumed]
            if not batch:
                continue
            consumed += len(batch)
            by_partition: dict[tuple[str, int], list] = {}
            for m in batch:
                by_partition.setdefault((m.topic(), m.partition()), []).append(m)
                if args.verbose:
                    emit({"timestamp": now_ms(), "name": "record_data", "key": _text(m.key()),
                          "value": _text(m.value()), "topic": m.topic(), "partition": m.partition(),
                          "offset": m.offset()})
            emit({"timestamp": now_ms(), "name": "records_consumed", "count": len(batch), "partitions": [
                {"topic": t, "partition": p, "count": len(ms), "minOffset": ms[0].offset(),
                 "maxOffset": ms[-1].offset()} for (t, p), ms in by_partition.items()]})
            if not args.enable_autocommit:
                offsets = [TopicPartition(t, p, ms[-1].offset() + 1) for (t, p), ms in by_partition.items()]
                event = {"timestamp": now_ms(), "name": "offsets_committed", "offsets": [
                    {"topic": o.topic, "partition": o.partition, "offset": o.offset} for o in offsets]}
                try:
                    consumer.commit(offsets=offsets, asynchronous=False)
                    event["success"] = True
                except KafkaException as exc:
                    event.update(success=False, error=str(exc))
                emit(event)
    finally:
        consumer.close()
        emit({"timestamp": now_ms(), "name": "shutdown_complete"})
        requested()  # Kafka's tool prints it from its shutdown hook, at the end of a run it ended itself too
    return 0


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", "replace")
