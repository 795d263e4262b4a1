"""KIP-368 with a real client: a node whose SASL_PLAINTEXT listener sets ``connections.max.reauth.ms=3000``, and
confluent-kafka (librdkafka >= 2.2.0 re-authenticates, at 90% of the session lifetime) producing with acks=all for
about 8 s. Every record is delivered; the node logs re-authentications on the very connections that logged in once,
closes none for an expired session, and librdkafka never had to reconnect."""

from __future__ import annotations

import json
import re
import time

import pytest

pytestmark = pytest.mark.interop

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
        'user_admin="admin-secret" user_alice="alice-secret";')
LIFETIME_MS = 3000
PRODUCE_S, MAX_RECORDS = 8.0, 400


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    from harness import roles

    props = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:SASL_PLAINTEXT\n"
             "sasl.enabled.mechanisms=PLAIN\n"
             f"listener.name.broker.plain.sasl.jaas.config={JAAS}\n"
             f"connections.max.reauth.ms={LIFETIME_MS}\n")
    cluster = roles.RolesCluster(str(tmp_path_factory.mktemp("reauth")), controllers=1, brokers=0, combined=True,
                                 extra_props=props)
    try:
        cluster.start_all()
        cluster.wait_for_leader()
        yield cluster.nodes[1]
    finally:
        cluster.close()


def test_librdkafka_re_authenticates_on_its_connections_while_producing(node):
    from confluent_kafka import Producer

    port = node.port_of("BROKER")
    stats: list[dict] = []
    delivered, errors = [], []
    p = Producer({"bootstrap.servers": f"localhost:{port}", "security.protocol": "SASL_PLAINTEXT",
                  "sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret",
                  "acks": "all", "linger.ms": 5, "message.timeout.ms": 20000, "statistics.interval.ms": 500,
                  "stats_cb": lambda text: stats.append(json.loads(text))})

    def on_delivery(err, msg):
        (errors if err else delivered).append(err or msg.offset())

    start, produced = time.monotonic(), 0
    while time.monotonic() - start < PRODUCE_S and produced < MAX_RECORDS:
        p.produce("roles", b"reauth-%d" % produced, on_delivery=on_delivery)
        produced += 1
        p.poll(0)
        time.sleep(0.025)
    assert p.flush(20) == 0, "records still in flight 20 s after the last one"
    p.poll(0.6)  # one more statistics report
    assert errors == [] and len(delivered) == produced >= 200

    log = node.stderr()
    logins = re.findall(r"User:alice authenticated with SASL PLAIN from ([^\s;]+)", log)
    renewals = re.findall(r"User:alice re-authenticated with SASL PLAIN from ([^\s;]+)", log)
    # 8 s of a 3 s session renewed at 90%: at least two renewals, each on a connection that logged in once
    assert len(renewals) >= 2, log[-3000:]
    assert set(renewals) <= set(logins) and len(logins) == len(set(logins))
    assert "session expired" not in log and "failed SASL" not in log
    brokers = stats[-1]["brokers"].values()
    assert all(b["disconnects"] == 0 and b["connects"] <= 1 for b in brokers), [
        (b["name"], b["connects"], b["disconnects"]) for b in brokers]
