"""The broker's replica manager: the topic partitions the metadata image assigns this broker, hosted in its log
directories, and the asyncio side of ``kraftwire.replica`` (Kafka's ``ReplicaManager``/``LogManager``, facts in
kafka-replication-facts.md §1, §4). The rules are the pure layer's; the decisions taking them (image, appends,
fetches, ISR, waits) are ``replica_core``'s, which the partition simulation runs too; the partition's files are
``hosted``'s, the log directories ``log_dirs``'s, retention and compaction ``partition_cleaning``'s.

* **Following the image.** After every metadata commit the node calls ``apply(image)``: a partition listing this
  broker among its replicas is opened (created in the log directory holding the fewest partitions, or where it
  already is) and its ``ReplicaState`` applies the registration — a new leader epoch goes into the log's epoch cache
  at the log end. A partition that left the image (its topic deleted, or this broker no longer a replica) is closed
  and removed; leftovers of an interrupted removal go at the next start. Topic configs (``segment.bytes``,
  ``segment.ms``, ``index.interval.bytes``, ``max.message.bytes``, ``min.insync.replicas``) are read from the image
  each time, so an altered config applies to the open log.
* **Leading.** ``append`` runs the leader's append plan (``kraftwire.replica.leader_append``: framing, CRC-32C,
  every record, idempotent producers' sequences, transactions), appends as leader with the partition's leader epoch
  and raises the high watermark. ``waits`` holds acks=-1 answers until the high watermark passes them.
  WriteTxnMarkers appends a COMMIT or ABORT control batch (``append_marker``).
* **Verification** (KIP-890, ``transaction.partition.verification.enable``): a client's first transactional batch
  of a producer with no open transaction here is appended only with the guard of a verification the transaction
  coordinator confirmed (``start_verification``; ``txn_verifier`` asks); a transactional batch or marker of the
  producer reaching the log — as leader or follower — ends its verification.
* **The beat** (every second): ISR shrinks proposed, retention and compaction when due, idle producers expired,
  the log directories' offset checkpoints rewritten.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from typing import Callable

from kraftwire.errors import LogIOError
from kraftwire.log import clean_shutdown
from kraftwire.log.meta_properties import read_meta_properties
from kraftwire.log.partition_log import LogDirCheckpoints, parse_future_dir, parse_partition_dir
from kraftwire.kafka_configs import LONG_MAX, BrokerConfigs
from kraftwire.metadata.controller.topics import BROKER_RESOURCE, TOPIC_RESOURCE, broker_configs
from kraftwire.replica.leader_append import AppendResult
from kraftwire.server.runtime.clocks import monotonic_ms as _now_ms
from kraftwire.server.runtime.clocks import wall_ms as _wall_ms
from kraftwire.server.runtime.driver import fail_stop
from kraftwire.server.runtime.fetcher import ReplicaFetchers
from kraftwire.server.runtime.hosted import Hosted
from kraftwire.server.runtime.log_dir_moves import LogDirMoves
from kraftwire.server.runtime.log_dirs import DELETE_SUFFIX, LogDirs
from kraftwire.server.runtime.partition_cleaning import PartitionCleaning
from kraftwire.server.runtime.replica_core import ReplicaCore
from kraftwire.server.runtime.txn_verifier import TxnVerifier

__all__ = ["AppendResult", "Hosted", "ReplicaManager"]

log = logging.getLogger("kraftwire.replicas")


#: the longest an image pass spends creating partitions before it lets the event loop run (``apply``)
APPLY_BUDGET_S = 0.02

class ReplicaManager(LogDirs, LogDirMoves, PartitionCleaning, ReplicaCore):
    """The partitions this broker hosts, following the metadata image (see the module's docstring); its decisions
    are ``ReplicaCore``'s, this class hosts them on files, the event loop and the replica fetchers."""

    def __init__(self, node) -> None:
        self.node = node
        self.broker_id = node.settings.node_id
        self.partitions: dict[tuple[str, int], Hosted] = {}
        self.by_id: dict[tuple[object, int], Hosted] = {}
        self.roots: dict[str, LogDirCheckpoints] = {}
        self.offline_roots: set[str] = set()
        #: the epoch the last run closed every directory at (-1: it did not stop cleanly), for BrokerRegistration
        self.previous_broker_epoch = clean_shutdown.NO_EPOCH
        #: each log directory's ``directory.id`` (meta.properties): registered with the controller, which records
        #: where each replica lives (KIP-858) and is told when a directory goes offline
        self.dir_ids: dict[str, object] = {}
        self._assigning: set = set()  # (topic id, index) whose AssignReplicasToDirs is on its way
        self._assign_all = True  # look at every hosted partition at the next image (at start, after a refusal)
        self._found: dict[tuple[str, int], str] = {}  # partition directories present at start -> their root
        self._topics_seen: dict = {}
        self._configs_seen = None
        self._image_to_apply = None
        self._registration_seen = False  # the image has shown this incarnation's registration (``apply``)
        self._resume: asyncio.Handle | None = None  # the next apply pass, when one was cut short
        self._changed_before: set = set()  # topics the passes cut short went through
        #: called with the ``Hosted`` whose high watermark or (as leader) log end moved: parked fetches listen
        self.watchers: list[Callable[[Hosted], None]] = []
        #: ``alter(hp, pending)`` sends an AlterPartition for ``hp``'s pending ISR (set by the partition APIs)
        self.alter: Callable | None = None
        #: ``assign({dir id: {topic id: [index]}}, answered(error))`` sends AssignReplicasToDirs (partition APIs)
        self.assign: Callable | None = None
        self.lag_ms = node.settings.config.replica_lag_time_max_ms
        #: called when the last log directory goes offline (fail-stop; tests replace it)
        self.on_all_offline: Callable[[str, BaseException], None] = fail_stop
        self._retain_at = _now_ms() + node.settings.config.log_retention_check_interval_ms
        self._clean_at = _now_ms() + node.settings.config.log_cleaner_backoff_ms
        self._expire_producers_at = _now_ms() + node.settings.config.producer_id_expiration_check_interval_ms
        self.cleaning: asyncio.Future | None = None  # the cleaner's pass under way (one at a time, off the loop)
        self.started = False
        self.fetchers = ReplicaFetchers(self, node)
        #: asks transaction coordinators to verify transactional Produce (KIP-890, Kafka's AddPartitionsToTxnManager)
        self.verifier = TxnVerifier(node, self)
        self._init_moves()

    # ------------------------------------------------------------------------------------------------ start / stop
    def start(self) -> None:
        """Index the partition directories of every log directory and remove interrupted deletions."""
        roots = [os.path.abspath(root) for root in self.node.settings.config.all_log_dirs()]
        self.previous_broker_epoch = clean_shutdown.previous_epoch(roots)
        for root in roots:
            clean_shutdown.clear(root)
        for root in roots:
            self.roots[root] = LogDirCheckpoints(root)
            meta = read_meta_properties(root)
            if meta is not None and meta.directory_id is not None:
                self.dir_ids[root] = meta.directory_id
            for name in sorted(os.listdir(root)):
                path = os.path.join(root, name)
                if not os.path.isdir(path):
                    continue
                if name.endswith(DELETE_SUFFIX):
                    shutil.rmtree(path, ignore_errors=True)
                    continue
                future = parse_future_dir(name)
                if future is not None:  # a log-dir move under way when the broker stopped (``log_dir_moves``)
                    self._found_future[future] = (root, path)
                    continue
                parsed = parse_partition_dir(name)
                if parsed is None or parsed[0] == self.node.settings.config.metadata_log_topic:
                    continue
                if parsed in self._found:
                    log.error("partition %s-%d has directories in both %s and %s: serving the first", *parsed,
                              self._found[parsed], root)
                    continue
                self._found[parsed] = root
        self.started = True

    def close(self) -> None:
        self.started = False  # an image published after this is not applied
        self.verifier.close()
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        # the high watermarks while the logs are open: a leader still leading at shutdown (its controlled shutdown
        # unconfirmed, the controllers gone first) would otherwise meet a closed log and fail its directory
        self.beat(retain=False)
        self.close_moves()
        for hp in list(self.partitions.values()):
            hp.waits.leadership_lost()
            if not hp.failed:
                try:
                    hp.write_producer_snapshot()
                except OSError as exc:
                    log.warning("no producer snapshot for %s-%d: %s", hp.topic, hp.index, exc)
                try:
                    hp.log.close()
                except LogIOError as exc:
                    log.error("closing %s-%d: %s", hp.topic, hp.index, exc)
        self._write_checkpoints()  # the directories' checkpoints as the closed logs left them
        self.partitions.clear()
        self.by_id.clear()

    def mark_clean_shutdown(self, broker_epoch: int) -> None:
        """After ``close``: the clean shutdown marker in every directory (Kafka's LogManager.shutdown), unless the
        broker never registered or a directory failed (the next start then reports no previous epoch)."""
        if broker_epoch < 0 or self.offline_roots:
            return
        for root in self.roots:
            try:
                clean_shutdown.write(root, broker_epoch)
            except LogIOError as exc:
                log.error("no clean shutdown marker in %s: %s", root, exc)
                return

    def beat(self, now_ms: int | None = None, *, retain: bool = True) -> None:
        """Propose ISR shrinks for followers that fell behind; write the log directories' offset checkpoints that
        changed (the high watermarks first)."""
        now_ms = _now_ms() if now_ms is None else now_ms
        if retain and now_ms >= self._retain_at:
            self._retain_at = now_ms + self.node.settings.config.log_retention_check_interval_ms
            self.retain()
        if now_ms >= self._expire_producers_at:
            self._expire_producers_at = now_ms + self.node.settings.config.producer_id_expiration_check_interval_ms
            # scheduled on the monotonic clock, judged on the wall clock: the producers' ages come from their
            # batches' timestamps (Kafka's removeExpiredProducers(time.milliseconds))
            self.expire_producers(_wall_ms())
        if retain and now_ms >= self._clean_at and self.cleaning is None:
            self._clean_at = now_ms + self.node.settings.config.log_cleaner_backoff_ms
            self.compact()
        self.check_isr(now_ms)
        for hp in list(self.partitions.values()):
            if not hp.failed and hp.flush_ms < LONG_MAX:
                self._maybe_flush(hp, now_ms)
            if hp.verifications.entries:
                hp.verifications.expire(now_ms)  # verifications never followed by an append
        for hp in self.partitions.values():
            if not hp.failed:  # followers' too, as Kafka's replica manager checkpoints every partition's
                try:
                    hp.log.checkpoint_high_watermark()
                except LogIOError as exc:
                    self.dir_failed(hp.root, exc)
        self._write_checkpoints()

    def expire_producers(self, wall_ms: int) -> None:
        """Forget the producers idle for ``producer.id.expiration.ms`` without an open transaction, on every
        partition whose table is folded (leader or follower, as Kafka's broker does each on its own).
        ``wall_ms``: wall-clock milliseconds, the clock of the batch timestamps the producers' ages come from."""
        expiration = self.node.settings.config.producer_id_expiration_ms
        for hp in self.partitions.values():
            if hp.failed or hp.producers is None or hp.truncations != hp.log.truncations:
                continue
            gone = hp.producers.expire(wall_ms, expiration, hp.txns.ongoing if hp.txns is not None else ())
            if gone:
                log.info("%s-%d: forgot %d producer id(s) idle for %d ms", hp.topic, hp.index, len(gone), expiration)

    # ------------------------------------------------------------------------------------------------ the image
    def apply(self, image) -> None:
        """Host, lead, follow or drop partitions as ``image`` says. Creating a partition's files costs a few
        milliseconds of fsyncs, so a pass that must create many (a burst of CreateTopics: thousands) stops after
        ``APPLY_BUDGET_S`` (20 ms) of them and goes on at the next turn of the event loop, with the latest image
        then: the broker keeps heartbeating (it would otherwise be fenced for a session timeout's worth of file
        creation) and serving; a partition not created yet answers as not hosted, as in Kafka until its log
        exists."""
        if not self.started:
            return
        self._image_to_apply = image
        if not self.registered_in(image):
            return  # held until this incarnation's registration is in the image (then with the latest image)
        if self._resume is None:
            self._apply_pass()

    def registered_in(self, image) -> bool:
        """Does the image hold this process's own registration (its incarnation id)? Until then a
        restarted broker's image is the one it had before it stopped: it would lead the partitions that image gave
        it, replicate to its followers from a log that may be shorter than theirs, and load coordinators from it,
        while the controller is about to take them away (a new incarnation registers after the changes that take
        the old one out of every ISR and leadership). Kafka's broker likewise publishes no metadata to its replica
        manager before it has caught up and registered. The image that holds this process's incarnation id holds
        those changes too (they come first in the registration's batch). Nodes without roles apply at once."""
        if self._registration_seen:
            return True
        incarnation = getattr(getattr(self.node, "roles", None), "incarnation", None)
        mine = image.brokers.get(self.broker_id)
        self._registration_seen = incarnation is None or (mine is not None and mine.incarnation_id == incarnation)
        return self._registration_seen

    def _apply_pass(self) -> None:
        self._resume = None
        image = self._image_to_apply
        if not self.started or image is None:
            return
        seen = self._topics_seen
        done = dict(seen)  # what this pass finished (a pass cut short keeps the unfinished topics unseen)
        changed = set()
        deadline = time.monotonic() + APPLY_BUDGET_S
        cut_short, created = False, [0]

        def may_create() -> bool:
            """At least one log per pass (every pass progresses), then until the budget is spent."""
            if created[0] and time.monotonic() > deadline:
                return False
            created[0] += 1
            return True

        layers_changed = self._broker_layers_changed(image)
        brokers = self.broker_configs(image)
        for topic_id, topic in image.topics.items():
            if seen.get(topic_id) is topic and not layers_changed and not self._configs_changed(image, topic):
                continue
            if cut_short:
                break
            changed.add(topic_id)
            cfg = brokers.topic_config(image.configs.get((TOPIC_RESOURCE, topic.name), {}))
            for index, reg in topic.partitions.items():
                if self.place(topic_id, topic.name, index, reg, cfg, may_create) is None:
                    cut_short = True
                    break
            if not cut_short:
                done[topic_id] = topic
        if cut_short:
            self._topics_seen = done
            self._changed_before |= changed  # their directories are told once the pass completes
            self._resume = asyncio.get_running_loop().call_soon(self._apply_pass)
            return
        changed |= self._changed_before
        self._changed_before = set()
        for topic_id in [t for t in seen if t not in image.topics]:
            for hp in [h for (tid, _), h in list(self.by_id.items()) if tid == topic_id]:
                self._delete(hp, "its topic was deleted")
        self._topics_seen = dict(image.topics)
        self._configs_seen = image.configs
        self._assign_dirs(image, None if self._assign_all else changed)

    # ------------------------------------------------------------------------------------------------ the core's host
    def now_ms(self) -> int:
        return _now_ms()

    def wall_ms(self) -> int:
        return _wall_ms()

    def image_brokers(self):
        return self.node.metadata.image.brokers

    def timers(self):
        return asyncio.get_running_loop()

    def verification_enabled(self) -> bool:
        """``transaction.partition.verification.enable`` (KIP-890; Kafka's default true)."""
        return self.node.settings.config.transaction_partition_verification_enable

    def _follow(self, hp: Hosted) -> None:
        self.fetchers.follow(hp)

    def _unfollow(self, hp: Hosted) -> None:
        self.fetchers.unfollow((hp.topic, hp.index))

    def _followed(self, hp: Hosted) -> bool:
        f = self.fetchers.fetchers.get(hp.state.leader)
        return f is not None and f.partitions.get((hp.topic, hp.index)) is hp

    def _broker_layers_changed(self, image) -> bool:
        """Whether the dynamic broker configuration of this broker or the cluster-wide default changed since the
        last pass: every hosted partition's effective configuration is resolved again, as Kafka reconfigures its
        logs on a dynamic change."""
        before = self._configs_seen
        return before is None or any(before.get(key) is not image.configs.get(key)
                                     for key in ((BROKER_RESOURCE, ""), (BROKER_RESOURCE, str(self.broker_id))))

    def broker_configs(self, image=None) -> BrokerConfigs:
        """The broker-level layers topic configs resolve through on this broker (``kafka_configs``)."""
        image = self.node.metadata.image if image is None else image
        return broker_configs(image, self.broker_id, self.node.settings.config.raw)

    def _configs_changed(self, image, topic) -> bool:
        before = self._configs_seen
        key = (TOPIC_RESOURCE, topic.name)
        return before is None or before.get(key) is not image.configs.get(key)

    # ------------------------------------------------------------------------------------------------ lookups
    def get(self, topic: str, index: int) -> Hosted | None:
        return self.partitions.get((topic, index))

    def get_by_id(self, topic_id, index: int) -> Hosted | None:
        return self.by_id.get((topic_id, index))

    def broker_epoch(self) -> int:
        """This broker's registration epoch (-1 before it registered)."""
        epoch = getattr(self.node.roles, "broker_epoch", None)
        return -1 if epoch is None else epoch
