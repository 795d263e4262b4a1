"""What turning eligible leader replicas on (KIP-966) does to ``min.insync.replicas``, as Kafka 4.4's controller
does it, pure.

With ELR on, the ELR of a partition is only meaningful against one min ISR for the whole cluster, so Kafka makes
``min.insync.replicas`` cluster-level:

* a cluster bootstrapped with ``eligible.leader.replicas.version`` 1 gets a cluster-level ConfigRecord holding the
  controller's own (static) min.insync.replicas, in the bootstrap transaction (ActivationRecordsGenerator);
* UpdateFeatures raising it above 0 writes that record when the cluster has none, and removes every broker-level
  value (ConfigurationControlManager.maybeGenerateElrSafetyRecords);
* while it is on, a broker-level value may not be set or removed, nor the cluster-level one removed
  (INVALID_CONFIG with Kafka's messages);
* changing a topic's min.insync.replicas clears that topic's ELRs (ClearElrRecord naming it), changing the
  cluster's clears them all (an unnamed ClearElrRecord).
"""

from __future__ import annotations

from typing import Mapping

from kraftwire import kafka_configs
from kraftwire.metadata import features as ft
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m

MIN_ISR = "min.insync.replicas"
TOPIC, BROKER = 2, 4  # ConfigResource types
BROKER_LEVEL_REFUSED = "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
CLUSTER_REMOVAL_REFUSED = "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."


def enabled(features: Mapping[str, int]) -> bool:
    """Kafka's isElrFeatureEnabled: ``eligible.leader.replicas.version`` finalized at 1 or above."""
    return features.get(ft.ELR_VERSION, 0) >= 1


def static_min_isr(static: Mapping[str, str]) -> int:
    """The controller's statically configured min.insync.replicas (Kafka's default 1 when it sets none)."""
    return kafka_configs.number(static.get(MIN_ISR, "1"))


def cluster_min_isr_record(static: Mapping[str, str]) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(m.ConfigRecord(resource_type=BROKER, resource_name="", name=MIN_ISR,
                                               value=str(static_min_isr(static))), 0)


def bootstrap_records(bootstrap_features: Mapping[str, int], static: Mapping[str, str]) -> list[ApiMessageAndVersion]:
    """The records a bootstrap with these feature levels gets after its own (ActivationRecordsGenerator)."""
    return [cluster_min_isr_record(static)] if enabled(bootstrap_features) else []


def safety_records(image: MetadataImage, static: Mapping[str, str]) -> list[ApiMessageAndVersion]:
    """maybeGenerateElrSafetyRecords, for an UpdateFeatures turning ELR on: the cluster-level min ISR if the
    cluster has none, and every broker-level value removed."""
    out = []
    if MIN_ISR not in image.configs.get((BROKER, ""), {}):
        out.append(cluster_min_isr_record(static))
    for (kind, name), values in sorted(image.configs.items()):
        if kind == BROKER and name != "" and MIN_ISR in values:
            out.append(ApiMessageAndVersion(m.ConfigRecord(resource_type=BROKER, resource_name=name, name=MIN_ISR,
                                                           value=None), 0))
    return out


def refusal(image: MetadataImage, resource_type: int, resource_name: str, changes: Mapping[str, str | None]) -> str:
    """Why these config changes are refused while ELR is on ("" when they are not)."""
    if resource_type != BROKER or MIN_ISR not in changes or not enabled(image.features):
        return ""
    if resource_name != "":
        return BROKER_LEVEL_REFUSED
    return CLUSTER_REMOVAL_REFUSED if changes[MIN_ISR] is None else ""


def clear_records(image: MetadataImage, records) -> list[ApiMessageAndVersion]:
    """createClearElrRecordsAsNeeded: a ClearElrRecord for every min.insync.replicas ConfigRecord written while ELR
    is on (the topic's, or all topics' for a broker-level one)."""
    if not enabled(image.features):
        return []
    out = []
    for r in records:
        msg = r.message
        if isinstance(msg, m.ConfigRecord) and msg.name == MIN_ISR:
            name = msg.resource_name if msg.resource_type == TOPIC else ""
            out.append(ApiMessageAndVersion(m.ClearElrRecord(topic_name=name), 0))
    return out
