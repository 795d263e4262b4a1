"""The client APIs of a KRaft broker's topic partitions (thin handlers over ``replicas.ReplicaManager``), one
module per API family, assembled here as ``PartitionApis``:

* ``produce_apis``   — Produce (and its transactional batches, KIP-98/KIP-890)
* ``fetch_apis``     — consumer and replica Fetch (file regions, purgatory)
* ``offset_apis``    — ListOffsets and OffsetForLeaderEpoch
* ``marker_apis``    — WriteTxnMarkers and DescribeProducers
* ``log_dir_apis``   — DeleteRecords, AlterReplicaLogDirs and DescribeLogDirs
* ``producer_ids``   — InitProducerId without a transactional id (blocks from the active controller)

Here: what they share (the partition's refusal when it is not hosted, the leader hints of KIP-951) and the
replica manager's calls to the active controller (AlterPartition, AssignReplicasToDirs).
"""

from __future__ import annotations

import random

from kraftwire import error_codes as ec
from kraftwire.config import METADATA_TOPIC
from kraftwire.metadata import answers
from kraftwire.protocol import messages as w
from kraftwire.protocol import served
from kraftwire.replica.fetch_sessions import FetchSessionCache
from kraftwire.replica.replication_quota import ReplicationQuota
from kraftwire.server.apis.fetch_apis import FetchApis
from kraftwire.server.apis.log_dir_apis import LogDirApis
from kraftwire.server.apis.marker_apis import MarkerApis
from kraftwire.server.apis.offset_apis import OffsetApis
from kraftwire.server.apis.produce_apis import ProduceApis
from kraftwire.server.apis.producer_ids import ProducerIdBlocks
from kraftwire.server.runtime.purgatory import FetchPurgatory
from kraftwire.server.runtime.replicas import Hosted, ReplicaManager


class PartitionApis(ProduceApis, FetchApis, OffsetApis, MarkerApis, LogDirApis):
    """A KRaft broker's partition APIs: each family's handlers over one ``ReplicaManager`` and the image."""

    def __init__(self, node, metadata, replicas: ReplicaManager, kraft) -> None:
        self.node = node
        self.md = metadata
        self.replicas = replicas
        self.kraft = kraft  # KraftApis: the listener view and the path to the active controller
        self.purgatory = FetchPurgatory(self._ready_answer, self._fetch_ready, self._finish, self._send_fetch)
        #: incremental fetch sessions (KIP-227), ``max.incremental.fetch.session.cache.slots`` of them
        self.sessions = FetchSessionCache(node.settings.config.max_incremental_fetch_session_cache_slots,
                                          random.Random())
        self.region_bytes = 0  # Fetch bytes (consumers' and followers') answered as file regions (sendfile)
        self.ids = ProducerIdBlocks(node, kraft, replicas)
        self.quotas = node.quotas  # client quotas (KIP-13/KIP-219), the node's
        self.replication = ReplicationQuota()  # leader.replication.throttled.rate (KIP-73)
        replicas.watchers.append(self._hw_moved)
        #: called with (topic, partition, producer id, producer epoch, commit) after a marker is appended
        self.marker_listeners: list = []
        replicas.alter = self._alter_partition
        replicas.assign = self._assign_replicas_to_dirs

    def register(self) -> None:
        d = self.node.dispatcher
        d.serve("Produce", self.produce)
        d.serve("ListOffsets", self.list_offsets)
        d.serve("OffsetForLeaderEpoch", self.offset_for_leader_epoch)
        d.serve("DeleteRecords", self.delete_records)
        d.serve("DescribeLogDirs", self.describe_log_dirs)
        d.serve("AlterReplicaLogDirs", self.alter_replica_log_dirs)
        d.serve("InitProducerId", self.ids.handle)
        d.serve("WriteTxnMarkers", self.write_txn_markers)
        d.serve("DescribeProducers", self.describe_producers)
        self.node.broker_fetch = (served.versions("Fetch")[0], self.fetch)

    # ------------------------------------------------------------------------------------------------ shared
    def _unhosted_error(self, name: str | None, index: int) -> int:
        """The error for a partition this broker does not host (or does not lead)."""
        image = self.md.image
        if name is None or name == METADATA_TOPIC:
            return ec.UNKNOWN_TOPIC_OR_PARTITION
        topic = image.topic(name)
        if topic is None or index not in topic.partitions:
            return ec.UNKNOWN_TOPIC_OR_PARTITION
        return ec.NOT_LEADER_OR_FOLLOWER

    def _leader_hint(self, name: str, index: int):
        """(leader id, leader epoch) the image holds for the partition, or (-1, -1)."""
        topic = self.md.image.topic(name) if name else None
        reg = topic.partitions.get(index) if topic is not None else None
        return (reg.leader, reg.leader_epoch) if reg is not None else (-1, -1)

    def _node_endpoints(self, R, leaders: set[int], conn) -> list:
        listener = self.kraft.listener_of(conn)
        out = []
        for broker_id in sorted(leaders):
            ep = answers.broker_endpoint(self.md.image, broker_id, listener)
            if ep is not None:
                out.append(R.NodeEndpoint(node_id=broker_id, host=ep.host, port=ep.port,
                                          rack=self.md.image.brokers[broker_id].rack))
        return out

    # ------------------------------------------------------------------------------------------------ ISR changes
    def _alter_partition(self, hp: Hosted, pending) -> None:
        """Propose ``pending`` (the new ISR) to the active controller (AlterPartition v3, with each member's broker
        epoch as the leader knows it)."""
        A = w.AlterPartitionRequest
        state = hp.state
        me = self.node.settings.node_id
        epochs = {me: self.replicas.broker_epoch()}
        for b, f in state.followers.items():
            epochs[b] = f.broker_epoch
        body = A(broker_id=me, broker_epoch=epochs[me], topics=[A.TopicData(topic_id=hp.topic_id, partitions=[
            A.PartitionData(partition_index=hp.index, leader_epoch=state.leader_epoch,
                            new_isr_with_epochs=[A.BrokerState(broker_id=b, broker_epoch=epochs.get(b, -1))
                                                 for b in pending.isr],
                            leader_recovery_state=0, partition_epoch=state.partition_epoch)])])

        def answered(response) -> None:
            if self.replicas.get(hp.topic, hp.index) is not hp:
                return  # the partition went away meanwhile
            error, data = response.error_code, None
            if not error:
                parts = [p for t in response.topics for p in t.partitions if p.partition_index == hp.index]
                if not parts:
                    error = ec.UNKNOWN_SERVER_ERROR
                else:
                    data = parts[0]
                    error = data.error_code
            self.replicas.alter_answered(hp, pending, error, data)

        self.kraft.call("AlterPartition", body, 3, answered)

    # ------------------------------------------------------------------------------------------------ KIP-858
    def _assign_replicas_to_dirs(self, wanted: dict, answered) -> None:
        """AssignReplicasToDirs v0 to the active controller: ``wanted`` is {directory id: {topic id: [index]}}."""
        A = w.AssignReplicasToDirsRequest
        epoch = self.replicas.broker_epoch()
        if epoch < 0:
            answered(ec.STALE_BROKER_EPOCH)
            return
        body = A(broker_id=self.node.settings.node_id, broker_epoch=epoch, directories=[
            A.DirectoryData(id=d, topics=[A.TopicData(topic_id=t, partitions=[A.PartitionData(partition_index=i)
                                                                            for i in sorted(idx)])
                                          for t, idx in per_dir.items()])
            for d, per_dir in wanted.items()])

        def done(response) -> None:
            codes = [response.error_code] + [p.error_code for d in response.directories for t in d.topics
                                             for p in t.partitions]
            answered(next((c for c in codes if c), ec.NONE))

        self.kraft.call("AssignReplicasToDirs", body, 0, done)
