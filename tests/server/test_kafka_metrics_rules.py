"""The JMX exporter rules file against Apache Kafka 4.4's MBeans (listed by ``tests/kafka/ListMBeans.java`` on a
running Kafka node): it parses, every rule names at least one of Kafka's metrics, and the names it gives are the
ones kraftwire serves (the real-process check of a scrape is ``tests/roles/test_kafka_metrics.py``)."""

from __future__ import annotations

from harness import jmx_rules


def test_the_rules_file_parses_and_every_rule_matches_a_kafka_metric():
    config = jmx_rules.load_rules()
    assert config["lowercaseOutputName"] is True
    attributes = jmx_rules.kafka_attributes()
    for rule in config["rules"]:
        assert {"pattern", "name", "type"} <= set(rule), rule
        assert any(jmx_rules.apply({"rules": [rule]}, a) for a in attributes), f"no Kafka 4.4 MBean matches {rule}"


def test_kafka_metrics_get_the_names_kraftwire_serves():
    config = jmx_rules.load_rules()
    named = {}
    for attribute in jmx_rules.kafka_attributes():
        out = jmx_rules.apply(config, attribute)
        if out is not None:
            named[attribute] = out
    got = {name for name, _ in named.values()}
    # a sample of what the rules file promises, spelled out
    assert 'kafka_server_replicamanager_underreplicatedpartitions' in got
    assert named["kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>99thPercentile: 0"] == (
        "kafka_network_requestmetrics_totaltimems", {"request": "Produce", "quantile": "0.99"})
    assert named["kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>999thPercentile: 0"][1][
        "quantile"] == "0.999"
    assert named["kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec, topic=t1><>Count: 0"] == (
        "kafka_server_brokertopicmetrics_bytesinpersec_total", {"topic": "t1"})
    assert named["kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec><>Count: 0"] == (
        "kafka_server_brokertopicmetrics_bytesinpersec_total", {})
    assert named["kafka.server<type=raft-metrics><>high-watermark: 0"] == ("kafka_server_raft_metrics_high_watermark", {})
    assert named["kafka.server<type=KafkaRequestHandlerPool, name=RequestHandlerAvgIdlePercent><>OneMinuteRate: 0"][0] \
        == "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent"
    # attributes the file leaves alone stay unnamed (the exporter's own rules, if any, take them)
    assert "kafka.server<type=ReplicaManager, name=ProducerIdCount><>Value: 0" not in named
    assert "kafka.server<type=KafkaRequestHandlerPool, name=BrokerRequestHandlerAvgIdlePercent><>OneMinuteRate: 0" \
        not in named


def test_every_dashboard_metric_is_one_the_rules_or_kraftwire_name():
    config = jmx_rules.load_rules()
    from_kafka = {out[0] for a in jmx_rules.kafka_attributes() if (out := jmx_rules.apply(config, a)) is not None}
    # histogram means and counts come with their percentiles; lag is kraftwire's own
    assert jmx_rules.dashboard_metrics() - from_kafka == {"kraftwire_consumer_group_lag"}
