"""Five real clients on both secured listeners of one KRaft node (``server-start``, controller and broker in one
process): kafka-python, confluent-kafka, aiokafka, kcat and KafkaJS each produce with acks=all and read their
records back

* over SASL_SSL, logging in with SCRAM-SHA-512 (the credential added by ``storage format --add-scram``), and
* over SSL with mutual TLS (``ssl.client.auth=required``), the principal then being the client certificate's subject.

The quorum keeps its PLAINTEXT controller listener. Refusals — a wrong SCRAM password, a client certificate from
another CA — leave the node serving everyone else. Certificates are made here (``harness.certs``); every wait is
bounded in time and count.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass

import pytest

from harness import clients, roles
from harness.certs import CA, Issued

pytestmark = pytest.mark.interop

TOPIC = "matrix"
PARTITIONS = 3
N = 50
USER, PASSWORD = "alice", "alice-secret"
MECHANISM = "SCRAM-SHA-512"
CLIENTS = ("kafka-python", "confluent-kafka", "aiokafka", "kcat", "kafkajs")
#: test id -> the node's listener: BROKER (SASL_SSL, SCRAM-SHA-512) and MTLS (SSL, ssl.client.auth=required)
LISTENERS = {"sasl_ssl": "BROKER", "mtls": "MTLS"}
STEP_S = 20.0  # bound of one client step (a produce, a read back)
#: what the node logs of the mutually authenticated client (Kafka's default principal builder: the RFC 2253 DN)
CLIENT_DN = "CN=matrix-client,OU=ServiceUsers,O=kraftwire,C=US"


@dataclass(frozen=True)
class Endpoint:
    kind: str  # a key of LISTENERS
    bootstrap: str
    ca: str
    cert: Issued | None = None  # mTLS: the certificate this client presents
    password: str = PASSWORD  # SASL_SSL: the SCRAM password it logs in with

    @property
    def sasl(self) -> bool:
        return self.kind == "sasl_ssl"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    base = tmp_path_factory.mktemp("matrix-pki")
    ca = CA(str(base / "ca"))
    other = CA(str(base / "other"), "another-ca")
    return {"ca": ca, "node": ca.issue("node"), "client": ca.issue("matrix-client", ou="ServiceUsers"),
            "stranger": other.issue("stranger")}


@pytest.fixture(scope="module")
def node(tmp_path_factory, pki):
    bundle, ca = pki["node"].bundle_path, pki["ca"].path
    props = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:SASL_SSL,MTLS:SSL\n"
             "inter.broker.listener.name=MTLS\n"
             f"listener.name.broker.sasl.enabled.mechanisms={MECHANISM}\n"
             "listener.name.broker.scram-sha-512.sasl.jaas.config="
             "org.apache.kafka.common.security.scram.ScramLoginModule required;\n"
             f"listener.name.broker.ssl.keystore.type=PEM\nlistener.name.broker.ssl.keystore.location={bundle}\n"
             f"listener.name.mtls.ssl.keystore.type=PEM\nlistener.name.mtls.ssl.keystore.location={bundle}\n"
             f"listener.name.mtls.ssl.truststore.type=PEM\nlistener.name.mtls.ssl.truststore.location={ca}\n"
             "listener.name.mtls.ssl.client.auth=required\n"
             # one broker: the group coordinator's topic fits it; KafkaJS's group joins without waiting
             "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=3\ngroup.initial.rebalance.delay.ms=0\n")
    cluster = roles.RolesCluster(str(tmp_path_factory.mktemp("matrix")), controllers=1, brokers=0, combined=True,
                                 kraft=True, extra_listeners=("MTLS",), extra_props=props,
                                 format_args=("--add-scram", f"{MECHANISM}=[name={USER},password={PASSWORD}]"))
    try:
        cluster.start_all()
        proc = cluster.nodes[1]
        # the broker unfenced (Online): while it is fenced, Metadata lists no broker, and librdkafka's admin client
        # then waits for a controller without asking again (its CreateTopics times out)
        roles.wait_until(lambda: _alive(proc) and roles.broker_ids(proc.port) == [1], "broker 1 Online", cluster,
                         timeout=20)
        _create_topic(_endpoint(proc, pki, "sasl_ssl"), cluster)
        yield proc
    finally:
        cluster.close()


def _alive(proc) -> bool:
    if not proc.running:
        raise AssertionError(f"the node exited with {proc.proc.returncode}:\n{proc.stderr()[-3000:]}")
    return True


def _endpoint(proc, pki, kind: str, *, cert: str = "client", password: str = PASSWORD) -> Endpoint:
    port = proc.port_of(LISTENERS[kind])
    return Endpoint(kind, f"localhost:{port}", pki["ca"].path, pki[cert] if kind == "mtls" else None, password)


def _create_topic(ep: Endpoint, cluster) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(_rdkafka_conf(ep))
    futures = admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)], operation_timeout=10, request_timeout=15)
    futures[TOPIC].result(timeout=STEP_S)

    def ready() -> bool:
        t = admin.list_topics(TOPIC, timeout=5).topics.get(TOPIC)
        return (t is not None and t.error is None and len(t.partitions) == PARTITIONS
                and all(p.leader == 1 for p in t.partitions.values()))

    roles.wait_until(ready, f"{TOPIC} with {PARTITIONS} led partitions", cluster, timeout=STEP_S)


# ------------------------------------------------------------------------------------------------ configurations
def _rdkafka_conf(ep: Endpoint) -> dict:
    """librdkafka's properties (confluent-kafka, and kcat's -X)."""
    conf = {"bootstrap.servers": ep.bootstrap, "ssl.ca.location": ep.ca,
            "ssl.endpoint.identification.algorithm": "https"}
    if ep.sasl:
        conf.update({"security.protocol": "SASL_SSL", "sasl.mechanisms": MECHANISM, "sasl.username": USER,
                     "sasl.password": ep.password})
    else:
        conf.update({"security.protocol": "SSL", "ssl.certificate.location": ep.cert.cert_path,
                     "ssl.key.location": ep.cert.key_path})
    return conf


def _kafka_python_conf(ep: Endpoint) -> dict:
    conf = {"bootstrap_servers": [ep.bootstrap], "ssl_cafile": ep.ca, "ssl_check_hostname": True,
            "request_timeout_ms": 15000}
    if ep.sasl:
        conf.update(security_protocol="SASL_SSL", sasl_mechanism=MECHANISM, sasl_plain_username=USER,
                    sasl_plain_password=ep.password)
    else:
        conf.update(security_protocol="SSL", ssl_certfile=ep.cert.cert_path, ssl_keyfile=ep.cert.key_path)
    return conf


def _aiokafka_conf(ep: Endpoint) -> dict:
    from aiokafka.helpers import create_ssl_context

    ctx = create_ssl_context(cafile=ep.ca, certfile=None if ep.sasl else ep.cert.cert_path,
                             keyfile=None if ep.sasl else ep.cert.key_path)
    conf = {"bootstrap_servers": ep.bootstrap, "ssl_context": ctx, "request_timeout_ms": 15000}
    if ep.sasl:
        conf.update(security_protocol="SASL_SSL", sasl_mechanism=MECHANISM, sasl_plain_username=USER,
                    sasl_plain_password=ep.password)
    else:
        conf.update(security_protocol="SSL")
    return conf


def _kcat_args(ep: Endpoint) -> list[str]:
    args = [shutil.which("kcat") or "kcat", "-b", ep.bootstrap]
    for key, value in _rdkafka_conf(ep).items():
        if key != "bootstrap.servers":
            args += ["-X", f"{key}={value}"]
    return args


# ------------------------------------------------------------------------------------------------ the clients
def _values(tag: str) -> list[str]:
    return [f"{tag}-{i:03d}" for i in range(N)]


def _produce_consume_kafka_python(ep: Endpoint, tag: str) -> list[tuple[int, str]]:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(acks="all", **_kafka_python_conf(ep))
    try:
        futures = [producer.send(TOPIC, key=f"k{i}".encode(), value=v.encode()) for i, v in enumerate(_values(tag))]
        producer.flush(timeout=STEP_S)
        for f in futures:
            assert f.get(timeout=1).offset >= 0
    finally:
        producer.close(timeout=5)
    c = KafkaConsumer(group_id=None, enable_auto_commit=False, auto_offset_reset="earliest", **_kafka_python_conf(ep))
    try:
        tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        end = c.end_offsets(tps)
        got, deadline = [], time.monotonic() + STEP_S
        while any(c.position(tp) < end[tp] for tp in tps) and time.monotonic() < deadline:
            for tp, batch in c.poll(timeout_ms=500).items():
                got += [(tp.partition, r.value.decode()) for r in batch]
        return got
    finally:
        c.close()


def _produce_consume_confluent(ep: Endpoint, tag: str) -> list[tuple[int, str]]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    errors = []
    producer = Producer({**_rdkafka_conf(ep), "acks": "all", "linger.ms": 5,
                         "message.timeout.ms": int(STEP_S * 1000)})
    for i, v in enumerate(_values(tag)):
        producer.produce(TOPIC, key=f"k{i}".encode(), value=v.encode(),
                         on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert producer.flush(STEP_S) == 0 and errors == [], errors[:3]
    c = Consumer({**_rdkafka_conf(ep), "group.id": "matrix-assign-only", "enable.auto.commit": False})
    try:
        ends = {p: c.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=10)[1] for p in range(PARTITIONS)}
        c.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        at = {p: 0 for p in range(PARTITIONS)}
        got, deadline = [], time.monotonic() + STEP_S
        while any(at[p] < ends[p] for p in at) and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            assert m.error() is None, m.error()
            got.append((m.partition(), m.value().decode()))
            at[m.partition()] = m.offset() + 1
        return got
    finally:
        c.close()


def _produce_consume_aiokafka(ep: Endpoint, tag: str) -> list[tuple[int, str]]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    async def main() -> list[tuple[int, str]]:
        producer = AIOKafkaProducer(acks="all", **_aiokafka_conf(ep))
        await asyncio.wait_for(producer.start(), STEP_S)
        try:
            futures = [await producer.send(TOPIC, key=f"k{i}".encode(), value=v.encode())
                       for i, v in enumerate(_values(tag))]
            for meta in await asyncio.wait_for(asyncio.gather(*futures), STEP_S):
                assert meta.offset >= 0
        finally:
            await producer.stop()
        c = AIOKafkaConsumer(group_id=None, enable_auto_commit=False, auto_offset_reset="earliest",
                             **_aiokafka_conf(ep))
        await asyncio.wait_for(c.start(), STEP_S)
        try:
            tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
            c.assign(tps)
            await c.seek_to_beginning(*tps)
            end = await c.end_offsets(tps)
            got, deadline = [], time.monotonic() + STEP_S
            while time.monotonic() < deadline:
                if all([await c.position(tp) >= end[tp] for tp in tps]):
                    break
                for tp, batch in (await c.getmany(*tps, timeout_ms=500)).items():
                    got += [(tp.partition, r.value.decode()) for r in batch]
            return got
        finally:
            await c.stop()

    return asyncio.run(main())


def _produce_consume_kcat(ep: Endpoint, tag: str) -> list[tuple[int, str]]:
    lines = "".join(f"k{i}:{v}\n" for i, v in enumerate(_values(tag)))
    out = subprocess.run([*_kcat_args(ep), "-t", TOPIC, "-P", "-K:", "-X", "acks=all"], input=lines,
                         capture_output=True, text=True, timeout=STEP_S)
    assert out.returncode == 0 and "fail" not in out.stderr.lower(), out.stderr[-3000:]
    # -C without -G: every partition assigned from the beginning; -e: exit at the end of them all
    out = subprocess.run([*_kcat_args(ep), "-t", TOPIC, "-C", "-o", "beginning", "-e", "-q", "-f", "%p|%s\n"],
                         capture_output=True, text=True, timeout=STEP_S)
    assert out.returncode == 0, out.stderr[-3000:]
    return [(int(p), v) for p, v in (line.split("|", 1) for line in out.stdout.splitlines())]


#: KafkaJS (run with ``node -e`` in the directory holding its node_modules): produce COUNT records with acks=-1 in
#: one send, then read them back as a group member (KafkaJS's consumer has no assign-only mode), from the beginning.
KAFKAJS = r"""
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const cfg = JSON.parse(process.env.MATRIX_CONFIG);
  const ssl = { ca: [fs.readFileSync(cfg.ca, 'utf8')] };
  if (cfg.cert) { ssl.cert = fs.readFileSync(cfg.cert, 'utf8'); ssl.key = fs.readFileSync(cfg.key, 'utf8'); }
  const kafka = new Kafka({ clientId: 'kraftwire-matrix', brokers: [cfg.bootstrap], ssl, sasl: cfg.sasl,
                            logLevel: logLevel.WARN, connectionTimeout: 10000, requestTimeout: 15000,
                            retry: { retries: 3 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const messages = [];
  for (let i = 0; i < cfg.count; i++) {
    messages.push({ key: `k${i}`, value: `${cfg.tag}-${String(i).padStart(3, '0')}` });
  }
  const acked = await producer.send({ topic: cfg.topic, acks: -1, messages });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: cfg.group, sessionTimeout: 10000, heartbeatInterval: 1000,
                                    maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic: cfg.topic, fromBeginning: true });
  const values = [];
  let mine = 0;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${mine} of ${cfg.count} records`)), cfg.timeoutMs);
    consumer.run({
      eachMessage: async ({ partition, message }) => {
        const v = message.value.toString();
        values.push([partition, v]);
        if (v.startsWith(`${cfg.tag}-`) && ++mine >= cfg.count) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  console.log(JSON.stringify({ acked, values }));
}

main().catch((err) => { console.error(err && err.stack || String(err)); process.exit(1); });
"""


def _produce_consume_kafkajs(ep: Endpoint, tag: str) -> list[tuple[int, str]]:
    clients.ensure_kafkajs()
    cfg = {"bootstrap": ep.bootstrap, "topic": TOPIC, "tag": tag, "count": N, "group": f"matrix-{tag}",
           "timeoutMs": int(STEP_S * 1000), "ca": ep.ca}
    if ep.sasl:
        cfg["sasl"] = {"mechanism": MECHANISM.lower(), "username": USER, "password": ep.password}
    else:
        cfg.update(cert=ep.cert.cert_path, key=ep.cert.key_path)
    env = dict(os.environ, MATRIX_CONFIG=json.dumps(cfg), KAFKAJS_NO_PARTITIONER_WARNING="1")
    out = subprocess.run(["node", "-e", KAFKAJS], cwd=clients.KAFKAJS_DIR, capture_output=True, text=True,
                         timeout=2 * STEP_S + 10, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["acked"] and all(r["errorCode"] == 0 for r in result["acked"]), result["acked"]
    return [(p, v) for p, v in result["values"]]


RUN = {"kafka-python": _produce_consume_kafka_python, "confluent-kafka": _produce_consume_confluent,
       "aiokafka": _produce_consume_aiokafka, "kcat": _produce_consume_kcat, "kafkajs": _produce_consume_kafkajs}


# ------------------------------------------------------------------------------------------------ the matrix
def _principal_lines(proc, kind: str) -> int:
    """How many logins the node logged with the principal this listener must give its clients."""
    text = (f"User:{USER} authenticated with SASL {MECHANISM}" if kind == "sasl_ssl"
            else f"User:{CLIENT_DN} authenticated with TLS")
    return proc.stderr().count(text)


#: kcat is Debian's (librdkafka 2.0.2 built in): it enables SASL only when ApiVersions lists SaslHandshake v0, and its
#: SCRAM client-final repeats the client nonce in front of the server's — both as Kafka accepts them.
MATRIX = [pytest.param(c, k, id=f"{c}-{k}") for c, k in itertools.product(CLIENTS, LISTENERS)]


@pytest.mark.parametrize("client,kind", MATRIX)
def test_a_client_produces_and_consumes_on_a_secured_listener(node, pki, client, kind):
    ep = _endpoint(node, pki, kind)
    tag = f"{client}/{kind}"
    logins = _principal_lines(node, kind)
    got = RUN[client](ep, tag)
    mine = [(p, v) for p, v in got if v.startswith(tag + "-")]
    assert sorted(v for _, v in mine) == _values(tag), (client, kind, len(mine))
    for partition in range(PARTITIONS):  # each partition holds its share in the order produced
        values = [v for p, v in mine if p == partition]
        assert values == sorted(values), (client, kind, partition)
    assert len({p for p, _ in mine}) > 1, "the keys spread over the partitions"
    _alive(node)
    assert _principal_lines(node, kind) > logins, node.stderr()[-3000:]


# ------------------------------------------------------------------------------------------------ refusals
def _refused(ep: Endpoint) -> list:
    """confluent-kafka asks for metadata as ``ep``'s client and must never get it: the errors librdkafka reported."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    errors = []
    admin = AdminClient({**_rdkafka_conf(ep), "error_cb": errors.append})
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        admin.poll(0.1)
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=1)
    return errors


def _still_serving(proc, pki) -> None:
    """Both listeners serve a legitimate client after a refusal."""
    from confluent_kafka.admin import AdminClient

    _alive(proc)
    for kind in LISTENERS:
        md = AdminClient(_rdkafka_conf(_endpoint(proc, pki, kind))).list_topics(TOPIC, timeout=10)
        assert len(md.topics[TOPIC].partitions) == PARTITIONS, kind


def test_a_wrong_scram_password_is_refused_and_the_node_keeps_serving(node, pki):
    failures = node.stderr().count(f"failed SASL {MECHANISM} authentication")
    errors = _refused(_endpoint(node, pki, "sasl_ssl", password="not-alice-secret"))
    assert any("Authentication failed" in e.str() or e.name() == "_AUTHENTICATION" for e in errors), errors
    assert node.stderr().count(f"failed SASL {MECHANISM} authentication") > failures
    assert "not-alice-secret" not in node.stderr()  # the password is never logged
    _still_serving(node, pki)


def test_a_client_certificate_from_another_ca_is_refused_and_the_node_keeps_serving(node, pki):
    before = node.stderr().count("User:CN=stranger")
    errors = _refused(_endpoint(node, pki, "mtls", cert="stranger"))
    # TLS 1.3: the client's handshake completes before the node verifies its certificate; the node then closes
    assert errors and {e.name() for e in errors} <= {"_ALL_BROKERS_DOWN", "_TRANSPORT", "_SSL"}, errors
    assert node.stderr().count("User:CN=stranger") == before  # never authenticated
    _still_serving(node, pki)
