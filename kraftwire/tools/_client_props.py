"""Kafka (Java) producer properties → librdkafka configuration for the client tools.

Most Java producer keys are librdkafka keys too (``bootstrap.servers``, ``acks``, ``linger.ms``, ``batch.size``,
``compression.type``, ``enable.idempotence``, ``client.id``...). Java-only keys (serializers, ``buffer.memory``...)
are dropped with a note on stderr, as they change nothing for bytes in, bytes out.
"""

from __future__ import annotations

import sys

JAVA_ONLY = {"key.serializer", "value.serializer", "buffer.memory", "max.block.ms", "partitioner.class",
             "interceptor.classes", "metric.reporters", "metrics.sample.window.ms", "metrics.num.samples",
             "send.buffer.bytes", "receive.buffer.bytes", "delivery.timeout.ms.unused"}
RENAMED = {"max.in.flight.requests.per.connection": "max.in.flight.requests.per.connection",
           "delivery.timeout.ms": "message.timeout.ms", "retries": "message.send.max.retries"}


def read_properties(path: str) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#!":
                continue
            key, sep, value = line.partition("=")
            if not sep:
                key, _, value = line.partition(":")
            out[key.strip()] = value.strip()
    return out


def parse_pairs(pairs: list[str]) -> dict[str, str]:
    out = {}
    for item in pairs or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"Invalid property: {item} (expected KEY=VALUE)")
        out[key.strip()] = value.strip()
    return out


def librdkafka_config(props: dict[str, str]) -> dict[str, str]:
    conf = {}
    for key, value in props.items():
        if key in JAVA_ONLY:
            print(f"note: producer property {key} applies to the Java client only; ignored", file=sys.stderr)
            continue
        conf[RENAMED.get(key, key)] = value
    return conf


def load_producer():
    try:
        from confluent_kafka import Producer
    except ImportError:  # pragma: no cover - the test environment has it
        raise SystemExit("this tool needs confluent-kafka (pip install confluent-kafka)") from None
    return Producer
