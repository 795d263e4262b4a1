"""The node's metrics under the names the Prometheus JMX exporter gives Kafka's, with ``config/jmx-exporter-rules.yaml``
(the mapping is documented there), built whole at every scrape on the event loop's thread (``Registry.sources``):
one Grafana dashboard (``config/grafana/kraftwire-dashboard.json``) then reads Kafka and kraftwire alike.

How each MBean becomes a name (lower case, as the rules file writes them):

* a gauge's ``Value`` — ``kafka_<domain>_<type>_<name>``, e.g. ``kafka_server_replicamanager_leadercount``;
* a meter's ``Count`` — ``kafka_<domain>_<type>_<name>_total`` (a counter), with the MBean's keys as labels, e.g.
  ``kafka_server_brokertopicmetrics_bytesinpersec_total{topic="t"}`` (no ``topic``: all topics);
* a histogram's percentiles — ``kafka_<domain>_<type>_<name>{quantile="0.99"}`` (0.50 … 0.999, milliseconds) with
  ``_count`` and ``_mean``, e.g. ``kafka_network_requestmetrics_totaltimems{request="Produce",quantile="0.99"}``;
* a Kafka-metrics MBean's attribute (``raft-metrics``, ``broker-metadata-metrics``) — ``kafka_server_<type>_<attribute>``
  with ``-`` read as ``_``, e.g. ``kafka_server_raft_metrics_high_watermark``;
* RequestHandlerAvgIdlePercent's one-minute rate — ``kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent``
  (a fraction, 0..1, as Kafka's).

Consumer-group lag is kraftwire's own: ``kraftwire_consumer_group_lag{group,topic,partition}`` on the broker that
coordinates the group, for the partitions it hosts a replica of (their high watermark here; a follower's can trail
the leader's by a fetch).
"""

from __future__ import annotations

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from kraftwire.coordinator.group.lag import group_lags
from kraftwire.metadata.health import cluster_health
from kraftwire.protocol.messages import APIS
from kraftwire.replica.health import replica_health
from kraftwire.server.edge.kafka_meters import PHASES, QUANTILES, ControllerEvents, ShareMeters, TopicMeters
from kraftwire.server.runtime.clocks import wall_ms

#: Kafka's raft-metrics ``current-state`` is a string the exporter drops; these numeric attributes are kept
RAFT = ("current-leader", "current-epoch", "current-vote", "high-watermark", "log-end-offset", "log-end-epoch",
        "number-of-voters")

def _gauge(name: str, help_text: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, help_text, value=value)

def _api_name(api_key: int) -> str:
    info = APIS.get(api_key)
    return info.name if info else str(api_key)

def families(node) -> list:
    """Every Kafka-named family of ``node`` (and ``kraftwire_requests_total``, made of the same counts)."""
    out = _requests(node)
    idle = node.loop_idle
    if idle is not None:
        out.append(_gauge("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
                          "share of the last minute the event loop waited for work (RequestHandlerAvgIdlePercent)",
                          idle.idle_share()))
    if node.raft is not None and node.log is not None:
        out += _raft(node)
    md = node.metadata
    if md is not None and node.raft is not None:
        out += _metadata_offsets(node)
        if md.controller is not None:
            out += _controller(node)
    if node.replicas is not None:
        out += _broker(node) + _share(node.share_meters)
    if node.group_apis is not None:
        out.append(_lag(node))
    return out

def _requests(node) -> list:
    meters = node.dispatcher.requests
    own = CounterMetricFamily("kraftwire_requests_total", "requests handled, by API", labels=["api"])
    per_version = CounterMetricFamily("kafka_network_requestmetrics_requestspersec_total",
                                      "requests by type and version (RequestMetrics RequestsPerSec)",
                                      labels=["request", "version"])
    by_api: dict[str, int] = {}
    for (api_key, version), n in sorted(meters.counts.items()):
        name = _api_name(api_key)
        by_api[name] = by_api.get(name, 0) + n
        per_version.add_metric([name, str(version)], n)
    for name, n in sorted(by_api.items()):
        own.add_metric([name], n)
    out = [own, per_version]
    by_request = sorted(((_api_name(api_key),), times) for api_key, times in meters.times.items())
    for i, phase in enumerate(PHASES):
        out += _histogram(f"kafka_network_requestmetrics_{phase.lower()}",
                          f"{phase} by request type, milliseconds (RequestMetrics)", by_request, ("request",), i)
    return out

def _raft(node) -> list:
    raft, lg = node.raft, node.log
    voted = getattr(raft.quorum.state, "voted_key", None)  # Unattached/Voted and Prospective states carry one
    values = {"current-leader": raft.quorum.leader_id, "current-epoch": raft.epoch,
              "current-vote": voted.id if voted is not None else -1, "high-watermark": lg.high_watermark(),
              "log-end-offset": lg.end_offset(), "log-end-epoch": lg.last_fetched_epoch(),
              "number-of-voters": len(node.settings.voters)}
    return [_gauge("kafka_server_raft_metrics_" + key.replace("-", "_"), f"raft-metrics {key}", values[key])
            for key in RAFT]

def _metadata_offsets(node) -> list:
    """What the node folded of the metadata log: broker-metadata-metrics on a broker, KafkaController's on a
    controller (Kafka reports both on a combined node)."""
    md = node.metadata
    applied, stamp = md.image.offset, md.applied_timestamp
    lag = max(0, wall_ms() - stamp) if stamp >= 0 else 0
    out = []
    if node.replicas is not None:
        out += [_gauge("kafka_server_broker_metadata_metrics_last_applied_record_offset",
                       "broker-metadata-metrics last-applied-record-offset", applied),
                _gauge("kafka_server_broker_metadata_metrics_last_applied_record_timestamp",
                       "broker-metadata-metrics last-applied-record-timestamp", stamp),
                _gauge("kafka_server_broker_metadata_metrics_last_applied_record_lag_ms",
                       "broker-metadata-metrics last-applied-record-lag-ms", lag)]
    if md.controller is not None:
        out += [_gauge("kafka_controller_kafkacontroller_lastappliedrecordoffset",
                       "KafkaController LastAppliedRecordOffset", applied),
                _gauge("kafka_controller_kafkacontroller_lastcommittedrecordoffset",
                       "KafkaController LastCommittedRecordOffset", node.log.high_watermark() - 1),
                _gauge("kafka_controller_kafkacontroller_lastappliedrecordtimestamp",
                       "KafkaController LastAppliedRecordTimestamp", stamp),
                _gauge("kafka_controller_kafkacontroller_lastappliedrecordlagms",
                       "KafkaController LastAppliedRecordLagMs", lag)]
    return out

def _controller(node) -> list:
    md = node.metadata
    health = cluster_health(md.image)
    out = [_gauge("kafka_controller_kafkacontroller_activecontrollercount",
                  "1 on the active controller, else 0 (KafkaController ActiveControllerCount)", int(md.active))]
    for name, value in (("OfflinePartitionsCount", health.offline_partitions),
                        ("GlobalTopicCount", health.topics), ("GlobalPartitionCount", health.partitions),
                        ("ActiveBrokerCount", health.active_brokers), ("FencedBrokerCount", health.fenced_brokers),
                        ("PreferredReplicaImbalanceCount", health.preferred_replica_imbalance)):
        out.append(_gauge("kafka_controller_kafkacontroller_" + name.lower(), f"KafkaController {name}", value))
    times = md.events.times
    for i, name in enumerate(ControllerEvents.NAMES):
        out += _histogram("kafka_controller_controllereventmanager_" + name.lower(),
                          f"ControllerEventManager {name}, milliseconds", [((), times)], phase=i)
    return out

def _histogram(base: str, help_text: str, series, labels=(), phase: int = 0) -> list:
    """A Kafka histogram's percentiles (``quantile``), ``_count`` and ``_mean``: one series per ``(label values,
    RequestTimes)`` of ``series``."""
    labels = list(labels)
    quantiles = GaugeMetricFamily(base, help_text, labels=[*labels, "quantile"])
    count = GaugeMetricFamily(base + "_count", f"values recorded ({help_text})", labels=labels)
    mean = GaugeMetricFamily(base + "_mean", f"mean over the node's life ({help_text})", labels=labels)
    for values, times in series:
        for (label, _), value in zip(QUANTILES, times.percentiles_ms(phase, [p for _, p in QUANTILES])):
            quantiles.add_metric([*values, label], value)
        count.add_metric(list(values), times.count)
        mean.add_metric(list(values), times.mean_ms(phase))
    return [quantiles, count, mean]

def _share(meters: ShareMeters) -> list:
    """ShareGroupMetrics: the acknowledgement meters and the load times from the start, as Kafka registers them;
    the per-group histograms and DLQ meters once the group has used them."""
    base = "kafka_server_sharegroupmetrics_"
    acks = CounterMetricFamily(base + "recordacknowledgementspersec", "ShareGroupMetrics RecordAcknowledgementsPerSec "
                               "(Count): acknowledged offsets by type", labels=["acktype"])
    for ack_type, name in meters.ACK_TYPES:
        acks.add_metric([name], meters.acks[ack_type])
    out = [acks, *_histogram(base + "partitionloadtimems", "ShareGroupMetrics PartitionLoadTimeMs, milliseconds",
                             [((), meters.load_times)])]
    groups = sorted(meters.histograms.items())
    for i, name in enumerate(meters.HISTOGRAMS):
        out += _histogram(base + name.lower(), f"ShareGroupMetrics {name}, per group",
                          [((g,), times[i]) for g, times in groups], labels=("group",))
    for i, name in enumerate(meters.DLQ):
        family = CounterMetricFamily(base + name.lower(), f"ShareGroupMetrics {name} (Count), per group",
                                     labels=["group"])
        for (group, what), count in sorted(meters.dlq.items()):
            if what == i:
                family.add_metric([group], count)
        out.append(family)
    return out

def _broker(node) -> list:
    replicas = node.replicas
    health = replica_health((hp.state, hp.min_isr, hp.failed) for hp in replicas.partitions.values())
    out = []
    for name, value in (("UnderReplicatedPartitions", health.under_replicated),
                        ("UnderMinIsrPartitionCount", health.under_min_isr),
                        ("AtMinIsrPartitionCount", health.at_min_isr), ("LeaderCount", health.leaders),
                        ("PartitionCount", health.partitions), ("OfflineReplicaCount", health.offline)):
        out.append(_gauge("kafka_server_replicamanager_" + name.lower(), f"ReplicaManager {name}", value))
    for name, value in (("IsrShrinksPerSec", replicas.isr_shrinks), ("IsrExpandsPerSec", replicas.isr_expands)):
        out.append(CounterMetricFamily("kafka_server_replicamanager_" + name.lower(),
                                       f"ReplicaManager {name} (Count): ISR changes this broker made as leader",
                                       value=value))
    meters = node.topic_meters
    meters.forget(node.metadata.image.topic_ids)
    for index, name in TopicMeters.NAMES:
        family = CounterMetricFamily("kafka_server_brokertopicmetrics_" + name.lower(),
                                     f"BrokerTopicMetrics {name} (Count), per topic; no topic: all topics",
                                     labels=["topic"])
        total = 0
        for topic, counters in sorted(meters.topics.items()):
            family.add_metric([topic], counters[index])
            total += counters[index]
        family.add_metric([""], total)
        out.append(family)
    return out

def _lag(node) -> GaugeMetricFamily:
    replicas = node.replicas

    def end_of(topic: str, partition: int) -> int | None:
        hp = replicas.get(topic, partition)
        return hp.log.high_watermark() if hp is not None and not hp.failed else None

    family = GaugeMetricFamily("kraftwire_consumer_group_lag",
                               "committed offset's distance to the partition's high watermark, per group, on the "
                               "group's coordinator", labels=["group", "topic", "partition"])
    shards = (h.shard.offsets for h in node.group_apis.runtime.active())
    for group, topic, partition, lag in group_lags(shards, end_of):
        family.add_metric([group, topic, str(partition)], lag)
    return family
