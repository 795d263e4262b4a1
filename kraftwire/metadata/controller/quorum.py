"""The controller of the quorum (Kafka's QuorumController), pure: one per controller node, active on the Raft leader.

Every controller folds the committed metadata batches it is handed (``replay_committed``) into its committed image.
The active one also decides: a request goes to its control manager (``brokers``, ``controllers``, ``topics``,
``configs``, ``features``, ``producer_ids``, ``acls``, ``scram``, ``client_quotas``) against the **latest** image —
the committed one plus what this controller has written and not yet seen committed — so that two requests in a row
see each other, as Kafka's controller does with its in-memory timeline. The records it returns are folded into that
latest image at once (``write``); the edge appends them as one batch and sends the response when the batch is
committed. Losing leadership (``deactivate``) throws the uncommitted part away: the latest image is the committed one
again, and the edge answers the requests still waiting with NOT_CONTROLLER.

Activation: a controller becomes active once it has folded everything before its epoch (the edge calls ``activate``
then, as Kafka's Raft client calls handleLeaderChange after the listener caught up). On an empty log it first writes
the bootstrap records (from ``bootstrap.checkpoint``), inside a metadata transaction from 3.6-IV1 (KIP-868), as
Kafka's activation does; brokers' sessions start afresh. While active, ``tick`` writes a NoOpRecord every
``metadata.max.idle.interval.ms`` (the log moves even when idle, so brokers see they are caught up), fences one
broker whose session expired, and every ``leader.imbalance.check.interval.seconds`` (when
``auto.leader.rebalance.enable``) moves leaderships back to preferred replicas that are in the ISR and active.

No clock, no randomness, no I/O: ``now_ms`` and offsets are passed in; placement randomness and topic ids come from
the ``rng`` and ``new_uuid`` given to the constructor.
"""

from __future__ import annotations

from typing import Callable

from kraftwire.error_codes import NOT_CONTROLLER
from kraftwire.ids import UUID
from kraftwire.kafka_configs import BrokerConfigs
from kraftwire.metadata.controller import acls as acl_control
from kraftwire.metadata.controller import client_quotas
from kraftwire.metadata.controller import controllers as controller_control
from kraftwire.metadata.controller import elr
from kraftwire.metadata.controller import features as feature_control
from kraftwire.metadata.controller import scram as scram_control
from kraftwire.metadata.controller import producer_ids
from kraftwire.metadata.controller import reassignment
from kraftwire.metadata.controller.brokers import BrokerControl
from kraftwire.metadata.controller.configs import ConfigControl
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.controller.topics import ReplicationControl
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.loader import MetadataLoader
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import BY_LEVEL, FEATURE_NAME
from kraftwire.protocol import messages as m


class NotActive(Exception):
    """A request reached a controller that is not active (answer NOT_CONTROLLER)."""

    code = NOT_CONTROLLER


class QuorumController:
    def __init__(self, node_id: int, cluster_id: str, *, rng, new_uuid: Callable[[], UUID],
                 session_timeout_ms: int = 9000, idle_interval_ms: int = 500, default_partitions: int = 1,
                 default_replication_factor: int = 1, supported_features: dict[str, tuple[int, int]] | None = None,
                 broker_check=None, leader_rebalance_interval_ms: int = 0,
                 static_config: dict[str, str] | None = None) -> None:
        self.node_id = node_id
        self.brokers = BrokerControl(cluster_id, session_timeout_ms)
        self.topics = ReplicationControl(rng=rng, new_topic_id=new_uuid, default_partitions=default_partitions,
                                         default_replication_factor=default_replication_factor,
                                         node_id=node_id, static_config=static_config)
        self.brokers.node = self.topics.node_config
        broker_value = BrokerConfigs(static=dict(static_config or {})).value
        self.configs = ConfigControl(broker_check, broker_value=broker_value) if broker_check is not None else \
            ConfigControl(broker_value=broker_value)
        self.supported_features = dict(supported_features or {})
        #: the Raft log's kraft.version (the runtime sets where to read it; UpdateFeatures checks against it)
        self.kraft_version: Callable[[], int] = lambda: 0
        self.idle_interval_ms = idle_interval_ms
        #: auto.leader.rebalance.enable with leader.imbalance.check.interval.seconds; 0: off
        self.leader_rebalance_interval_ms = leader_rebalance_interval_ms
        self._last_rebalance_ms = 0
        self.loader = MetadataLoader()
        self.latest: MetadataImage = self.loader.image
        self.active = False
        self._last_noop_ms = 0
        self._handlers = {
            "BrokerRegistration": lambda img, req, v, now, off: self.brokers.register(img, req, next_offset=off,
                                                                                      now_ms=now, version=v),
            "BrokerHeartbeat": lambda img, req, v, now, off: self.brokers.heartbeat(img, req, now_ms=now),
            "UnregisterBroker": lambda img, req, v, now, off: self.brokers.unregister(img, req),
            "ControllerRegistration": lambda img, req, v, now, off: controller_control.register(img, req),
            "UnregisterController": lambda img, req, v, now, off: controller_control.unregister(img, req,
                                                                                                self.node_id),
            "CreateTopics": lambda img, req, v, now, off, quota=None: self.topics.create_topics(img, req, v, quota),
            "DeleteTopics": lambda img, req, v, now, off, quota=None: self.topics.delete_topics(img, req, v, quota),
            "CreatePartitions": lambda img, req, v, now, off, quota=None: self.topics.create_partitions(img, req,
                                                                                                        quota),
            "AlterPartition": lambda img, req, v, now, off: self.topics.alter_partition(img, req, v),
            "ElectLeaders": lambda img, req, v, now, off: self.topics.elect_leaders(img, req, v),
            "AlterPartitionReassignments": lambda img, req, v, now, off: reassignment.alter(
                img, req, v, self.topics.node_config),
            "ListPartitionReassignments": lambda img, req, v, now, off: reassignment.list_reassignments(img, req),
            "IncrementalAlterConfigs": lambda img, req, v, now, off: self.configs.incremental_alter(img, req),
            "AlterConfigs": lambda img, req, v, now, off: self.configs.legacy_alter(img, req),
            "UpdateFeatures": lambda img, req, v, now, off: feature_control.update_features(
                img, req, v, self.supported_features, self.node_id, self.kraft_version(), self.topics.node_config.static),
            "AllocateProducerIds": lambda img, req, v, now, off: producer_ids.allocate(img, req),
            "AssignReplicasToDirs": lambda img, req, v, now, off: self.topics.assign_replicas_to_dirs(img, req),
            "CreateAcls": lambda img, req, v, now, off: acl_control.create_acls(img, req, v, new_uuid),
            "DeleteAcls": lambda img, req, v, now, off: acl_control.delete_acls(img, req, v),
            "AlterUserScramCredentials": lambda img, req, v, now, off: scram_control.alter_credentials(img, req),
            "AlterClientQuotas": lambda img, req, v, now, off: client_quotas.alter_client_quotas(img, req),
        }

    @property
    def committed(self) -> MetadataImage:
        return self.loader.image

    def handles(self, api: str) -> bool:
        return api in self._handlers

    # ------------------------------------------------------------------------------------------------ every node
    def replay_committed(self, last_offset: int, records) -> MetadataImage | None:
        """Fold one committed batch; the new committed image (None inside an open metadata transaction)."""
        published = self.loader.load_batch(last_offset, records)
        if not self.active and published is not None:
            self.latest = published
        elif self.active and self.latest.offset <= self.loader.image.offset:
            self.latest = self.loader.image  # everything written has been committed
        return published

    def load_snapshot(self, end_offset: int, records) -> MetadataImage:
        image = self.loader.load_snapshot(end_offset, records)
        if not self.active:
            self.latest = image
        return image

    # ------------------------------------------------------------------------------------------------ leadership
    def activate(self, now_ms: int, bootstrap: tuple[ApiMessageAndVersion, ...] = ()) -> tuple[ApiMessageAndVersion, ...]:
        """Become the active controller. Returns the records to write first: the bootstrap (in a metadata
        transaction from 3.6-IV1) when the log holds no metadata yet, else none."""
        if self.loader.in_transaction:
            raise ValueError("cannot activate inside an open metadata transaction")
        self.active = True
        self.latest = self.loader.image
        self._last_noop_ms = self._last_rebalance_ms = now_ms
        self.brokers.activate(self.latest, now_ms)
        if self.latest.metadata_version is not None or not bootstrap:
            return ()
        version = _bootstrap_version(bootstrap)
        levels = {r.message.name: r.message.feature_level for r in bootstrap
                  if isinstance(r.message, m.FeatureLevelRecord)}
        bootstrap = (*bootstrap, *elr.bootstrap_records(levels, self.topics.node_config.static))
        if version is not None and version.uses_metadata_transactions:
            return (ApiMessageAndVersion(m.BeginTransactionRecord(name="Bootstrap records"), 0), *bootstrap,
                    ApiMessageAndVersion(m.EndTransactionRecord(), 0))
        return tuple(bootstrap)

    def deactivate(self) -> None:
        """Leadership lost: forget what was written and not committed."""
        self.active = False
        self.latest = self.loader.image

    # ------------------------------------------------------------------------------------------------ decisions
    def handle(self, api: str, request, version: int, *, now_ms: int, next_offset: int,
               quota=None) -> ControllerResult:
        """Decide ``request`` against the latest image. The caller then ``write``s the result's records at
        ``next_offset`` (the offset the batch will start at) and answers once they commit. ``quota``: a
        CreateTopics', DeleteTopics' or CreatePartitions' controller mutation quota (``replica.quotas``)."""
        if not self.active:
            raise NotActive(f"node {self.node_id} is not the active controller")
        handler = self._handlers[api]
        if quota is not None:
            return handler(self.latest, request, version, now_ms, next_offset, quota)
        return handler(self.latest, request, version, now_ms, next_offset)

    def write(self, records, next_offset: int) -> None:
        """Fold records the edge is appending at ``next_offset`` into the latest image."""
        if not records:
            return
        if next_offset <= self.latest.offset:
            raise ValueError(f"records written at {next_offset}, at or below the latest image ({self.latest.offset})")
        loader = MetadataLoader(self.latest)
        # a metadata transaction in one write is folded whole (the decisions never leave one open)
        image = loader.load_batch(next_offset + len(records) - 1, records)
        if image is None:
            raise ValueError("a write left a metadata transaction open")
        self.latest = image

    def tick(self, now_ms: int) -> list[ControllerResult]:
        """Periodic work of the active controller: a session expiry (one broker per tick), the preferred leader
        elections of ``auto.leader.rebalance.enable`` every check interval, and a NoOpRecord every idle interval."""
        if not self.active:
            return []
        out = []
        expired = self.brokers.expire(self.latest, now_ms)
        if expired is not None:
            out.append(expired)
        if (self.leader_rebalance_interval_ms > 0
                and now_ms - self._last_rebalance_ms >= self.leader_rebalance_interval_ms):
            self._last_rebalance_ms = now_ms
            balanced = self.topics.balance_leaders(self.latest)
            if balanced is not None:
                out.append(balanced)
        if self.idle_interval_ms > 0 and now_ms - self._last_noop_ms >= self.idle_interval_ms:
            self._last_noop_ms = now_ms
            out.append(ControllerResult((ApiMessageAndVersion(m.NoOpRecord(), 0),), None, ""))
        return out


def _bootstrap_version(records):
    for r in records:
        if isinstance(r.message, m.FeatureLevelRecord) and r.message.name == FEATURE_NAME:
            return BY_LEVEL.get(r.message.feature_level)
    return None

