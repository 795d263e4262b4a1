"""``reassign-partitions --execute --throttle``: Kafka 4.4's tool and ours, on the same four-broker kraftwire cluster
(``test_reassignment``'s), print the same lines and set the same throttles — the topic's leader and follower
throttled replicas and each moving broker's throttled rates, read back with ``kafka-configs`` — which the node then
accepts as honoured keys (a refused one would fail the tool); the move completes under the throttle and ``--verify``
clears it all."""

from __future__ import annotations

import pytest

from harness import roles

from kafka_software.test_reassignment import bootstrap, cluster, ours, placed, plan  # noqa: F401 (the fixture)

pytestmark = pytest.mark.interop
THROTTLE = "10000000"


def _throttles(tools, cluster, topic: str) -> list[str]:
    """The throttle configs now set on the topic and on brokers 1-4, as kafka-configs prints them."""
    boot = bootstrap(cluster, 1)
    lines = tools.ok("kafka-configs", "--bootstrap-server", boot, "--describe", "--entity-type", "topics",
                     "--entity-name", topic).out.splitlines()
    for broker in (1, 2, 3, 4):
        lines += tools.ok("kafka-configs", "--bootstrap-server", boot, "--describe", "--entity-type", "brokers",
                          "--entity-name", str(broker)).out.splitlines()
    return [line.split(" sensitive=")[0].strip() for line in lines if "throttled" in line]


def test_throttled_moves_as_kafkas_tool(tools, cluster, tmp_path, capsys):
    boot = bootstrap(cluster, 1)
    set_by = {}
    for who, topic in (("kafka", "thr-kafka"), ("ours", "thr-ours")):
        placed(tools, cluster, topic, "1:2")
        target = plan(tmp_path / f"{who}.json", topic, [2, 3])
        args = ("--execute", "--throttle", THROTTLE, "--reassignment-json-file", target)
        if who == "kafka":
            out = tools.ok("kafka-reassign-partitions", "--bootstrap-server", boot, *args).out
        else:
            code, out = ours(capsys, "--bootstrap-server", boot, *args)
            assert code == 0, out
        set_by[who] = (out.replace(topic, "T").split("Save this to use")[1], _throttles(tools, cluster, topic))
        roles.wait_until(lambda: "is completed" in ours(capsys, "--bootstrap-server", boot, "--verify",
                                                        "--reassignment-json-file", target)[1],
                         f"{topic}'s throttled move completed", cluster)
        assert _throttles(tools, cluster, topic) == []  # --verify cleared them once the move was done
    assert set_by["ours"][0] == set_by["kafka"][0]
    assert "The inter-broker throttle limit was set to 10000000 B/s" in set_by["ours"][0]
    kafka_lines, our_lines = (sorted(line.replace("thr-kafka", "T").replace("thr-ours", "T") for line in lines)
                              for _, lines in (set_by["kafka"], set_by["ours"]))
    assert our_lines == kafka_lines and "leader.replication.throttled.replicas=0:1,0:2" in our_lines, our_lines
    assert "follower.replication.throttled.replicas=0:3" in our_lines
