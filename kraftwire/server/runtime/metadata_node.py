"""The KRaft node's metadata edge: ``__cluster_metadata`` folded into one metadata image on every node, and the active
controller's decisions appended through the Raft core. The decisions themselves are pure
(``kraftwire.metadata.controller.QuorumController``); this module is the asyncio side around them.

* **Every node** (controller, broker, combined) registers ``MetadataNode`` as its Raft listener: committed batches are
  decoded (Kafka's serde: a record that cannot be read stops the node, it is never skipped) and folded in offset order
  into the image; a snapshot replaces it (``handle_load_snapshot``); the Raft snapshots this node writes are the image
  as metadata records (``snapshot_records``, at a batch boundary; the only metadata transaction, the bootstrap, is one
  batch, so a snapshot never splits one).
* **A controller** becomes active when the Raft core tells it it leads (which happens once the leader's first record
  of the epoch is committed) and it has folded a batch of that epoch: everything before the epoch is then in its
  image, as Kafka's controller waits for its listener to catch up. On an empty log it first writes the bootstrap
  records of ``bootstrap.checkpoint``. ``submit`` decides a request against the latest image, appends the records as
  one batch at the offset the decision was made for (the core's next append offset, read in the same call so nothing
  can come between), and answers once the high watermark passes them. A request with no records is answered once
  everything written before it has committed, so an answer never shows state that could still be lost. Losing the
  leadership answers everything still waiting with NOT_CONTROLLER and forgets what was not committed.
* ``tick`` (the roles' 100 ms beat) lets the active controller fence brokers whose sessions expired and write its
  idle NoOpRecord.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time

from kraftwire.error_codes import NONE, NOT_CONTROLLER, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT
from kraftwire.errors import CorruptRecordError, KraftwireError, NotLeaderError
from kraftwire.ids import random_kafka_uuid
from kraftwire.log.api import Isolation
from kraftwire.metadata import records as serde
from kraftwire.metadata import version as mv
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, bootstrap_records, decode_bootstrap_file
from kraftwire.metadata.controller.quorum import QuorumController
from kraftwire.metadata.controller.refusals import refusal
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.features import supported_ranges
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.loader import MetadataLoader
from kraftwire.metadata.records import MetadataRecordError
from kraftwire.metadata.snapshot import metadata_batches
from kraftwire.records import read_batches
from kraftwire.server.edge.kafka_meters import ControllerEvents
from kraftwire.server.runtime.clocks import monotonic_ms, wall_ms
from kraftwire.server.runtime.waits import HIGH_WATERMARK, OffsetWaits

log = logging.getLogger("kraftwire.controller")

#: how long a request waits for its records to commit before REQUEST_TIMED_OUT
COMMIT_TIMEOUT_MS = 30_000


#: kraftwire's private control record types (group offsets and generations, the legacy broker lifecycle)
PRIVATE_CONTROL_TYPES = range(0x7000, 0x7100)
#: how much of the log ``check_metadata_log`` reads at start
CHECK_BYTES = 1 << 20


def check_metadata_log(lg) -> str:
    """'' when the log's latest snapshot and its first MiB hold Kafka metadata records only (and Raft's own control
    records); else what was found where. A log written by an earlier kraftwire (client data, kraftwire control
    records, JSON snapshot images) or by the test server fails on its first such record."""
    def scan(data, where: str) -> str:
        try:
            for batch in read_batches(data, validate=False):
                for r in batch:
                    if batch.is_control:
                        key = r.key
                        ctype = int.from_bytes(bytes(key[2:4]), "big") if key is not None and len(key) >= 4 else -1
                        if ctype in PRIVATE_CONTROL_TYPES:
                            return f"{where} offset {r.offset}: a kraftwire control record (type {ctype:#06x})"
                    elif batch.base_offset >= 0:
                        try:
                            serde.decode(r.value)
                        except MetadataRecordError as exc:
                            return f"{where} offset {r.offset}: not a Kafka metadata record ({exc})"
        except CorruptRecordError:
            return ""  # a torn tail is the log's recovery's business, not a foreign format
        return ""

    latest = lg.latest_snapshot_id()
    if latest is not None:
        raw = lg.read_snapshot(latest)
        if raw is not None:
            why = scan(raw.records(), f"snapshot {latest.end_offset}-{latest.epoch}")
            if why:
                return why
    start = lg.start_offset()
    if lg.end_offset() <= start:
        return ""
    return scan(lg.read(start, CHECK_BYTES, Isolation.UNCOMMITTED).records, "the log at")


def supported_features() -> dict[str, tuple[int, int]]:
    """The finalized features this build supports (what it registers with and what UpdateFeatures may set)."""
    return supported_ranges()


class MetadataNode:
    """The metadata image of this node and, on a controller, the controller that writes it."""

    def __init__(self, node) -> None:
        self.node = node
        s = node.settings
        self.controller: QuorumController | None = None
        self._loader = MetadataLoader()
        if s.is_controller:
            config = s.config
            self.controller = QuorumController(
                s.node_id, "", rng=random.Random(), new_uuid=random_kafka_uuid,
                session_timeout_ms=s.broker_session_timeout_ms,
                idle_interval_ms=config.metadata_max_idle_interval_ms,
                default_partitions=config.num_partitions,
                default_replication_factor=config.default_replication_factor,
                supported_features=supported_features(), static_config=config.raw,
                leader_rebalance_interval_ms=(config.leader_imbalance_check_interval_seconds * 1000
                                              if config.auto_leader_rebalance_enable else 0))
            self._loader = self.controller.loader
            self.controller.kraft_version = lambda: node.raft.membership.kraft_version if node.raft is not None else 0
        self._leads_epoch: int | None = None  # the epoch the core said this node leads (not yet active)
        self._last_epoch_seen = -1  # epoch of the last batch folded
        self._written_end = 0  # one past the last offset the active controller appended
        self._waits = OffsetWaits()
        self._attached = None
        self.activated_at: float | None = None
        self.loaded_snapshot = None  # the id of the last snapshot this node's image was loaded from
        #: called with the image after commits were folded (once per event-loop turn, never inside the core)
        self.on_image: list = []
        self._publish_pending = False
        #: the append time (wall ms) of the last committed batch folded (-1: none yet): LastAppliedRecordTimestamp
        self.applied_timestamp = -1
        #: the controller's decision times (Kafka's ControllerEventManager EventQueueTimeMs and
        #: EventQueueProcessingTimeMs)
        self.events = ControllerEvents()

    # ------------------------------------------------------------------------------------------------ the image
    @property
    def image(self) -> MetadataImage:
        return self._loader.image

    @property
    def active(self) -> bool:
        return self.controller is not None and self.controller.active

    def start(self, cluster_id: str) -> None:
        if self.controller is not None:
            self.controller.brokers.cluster_id = cluster_id

    # ------------------------------------------------------------------------------------------------ Raft listener
    def handle_commit(self, batches) -> None:
        for b in batches:
            if b.is_control or b.source is None:
                items = ()
            else:
                items = [serde.decode(r.value) for r in b.source]
            if self.controller is not None:
                self.controller.replay_committed(b.last_offset, items)
            else:
                self._loader.load_batch(b.last_offset, items)
            self._last_epoch_seen = b.epoch
            if b.append_timestamp >= 0:
                self.applied_timestamp = b.append_timestamp
        self._publish()
        if self._leads_epoch is not None and not self.active and self._last_epoch_seen == self._leads_epoch:
            self._schedule_activation()

    def handle_load_snapshot(self, reader) -> None:
        items = [serde.decode(v) for v in reader.records]
        end = reader.snapshot_id.end_offset
        if self.controller is not None:
            image = self.controller.load_snapshot(end, items)
        else:
            image = self._loader.load_snapshot(end, items)
        self._last_epoch_seen = reader.snapshot_id.epoch
        self.loaded_snapshot = reader.snapshot_id
        self._publish()
        log.info("metadata image loaded from snapshot %d-%d: %d brokers, %d topics", end,
                 reader.snapshot_id.epoch, len(image.brokers), len(image.topics))

    def handle_leader_change(self, leader) -> None:
        me = self.node.settings.node_id
        if leader.is_leader(me) and self.controller is not None:
            self._leads_epoch = leader.epoch
            if self._last_epoch_seen == leader.epoch:
                self._schedule_activation()
            return
        self._leads_epoch = None
        if self.active:
            self._deactivate(f"node {leader.leader_id} leads epoch {leader.epoch}")

    def _publish(self) -> None:
        if self.on_image and not self._publish_pending:
            self._publish_pending = True
            asyncio.get_running_loop().call_soon(self._published)

    def _published(self) -> None:
        self._publish_pending = False
        for listener in list(self.on_image):
            try:
                listener(self.image)
            except Exception:  # noqa: BLE001 - a listener's failure must not stop the metadata fold
                log.exception("applying metadata image at offset %d", self.image.offset)

    def snapshot_records(self) -> list[bytes]:
        return [serde.encode(r.message, r.version) for r in self.image.records()]

    # ------------------------------------------------------------------------------------------------ activation
    def _schedule_activation(self) -> None:
        # never append from inside the core's listener callback: once the current Ready has run
        epoch = self._leads_epoch
        asyncio.get_running_loop().call_soon(self._activate, epoch)

    def _activate(self, epoch) -> None:
        raft, driver = self.node.raft, self.node.driver
        if (self.active or epoch is None or self._leads_epoch != epoch or raft is None or driver is None
                or driver.stopped or not raft.is_leader() or raft.epoch != epoch):
            return
        bootstrap = self._bootstrap() if self.image.metadata_version is None else ()
        records = self.controller.activate(monotonic_ms(), bootstrap)
        self._written_end = self.node.log.high_watermark()
        self.activated_at = time.monotonic()
        log.info("node %d is the active controller in epoch %d (metadata offset %d: %d brokers, %d topics)%s",
                 self.node.settings.node_id, epoch, self.image.offset, len(self.image.brokers),
                 len(self.image.topics), f"; writing {len(records)} bootstrap records" if records else "")
        if records:
            try:
                self._append(records)
            except NotLeaderError:
                self._deactivate("lost the leadership while writing the bootstrap records")

    def _bootstrap(self):
        path = os.path.join(self.node.settings.metadata_dir, BOOTSTRAP_FILE)
        try:
            with open(path, "rb") as f:
                return decode_bootstrap_file(f.read()).records
        except FileNotFoundError:
            # a directory formatted before bootstrap.checkpoint existed: Kafka's default for such a log
            log.warning("%s does not exist: bootstrapping at metadata.version %s", path, mv.DEFAULT)
            return bootstrap_records(mv.DEFAULT).records

    def _deactivate(self, why: str) -> None:
        log.info("node %d is no longer the active controller: %s", self.node.settings.node_id, why)
        self.controller.deactivate()
        self.activated_at = None
        self._waits.leadership_lost()

    # ------------------------------------------------------------------------------------------------ writing
    def _write(self, decide) -> tuple[object, int]:
        """In one call on the core: read its next append offset, ``decide(next_offset)`` → a ControllerResult,
        append its records (batches of at most 10,000) there and fold them into the latest image. Nothing else can
        append in between. Returns the result and the offset to wait for (one past its records, or past everything
        written so far when it has none). Raises ``NotLeaderError``."""
        def call(raft, now):
            first = raft.next_append_offset()
            result = decide(first)
            records = result.records
            if not records:
                return result, self._written_end
            wall = wall_ms()
            for raw in metadata_batches(records, base_offset=first, epoch=raft.epoch, timestamp=wall):
                raft.append_batch(raw, now)
            self.controller.write(records, first)
            return result, first + len(records)

        result, end = self.node.driver.call(call)
        self._written_end = max(self._written_end, end)
        return result, end

    def _append(self, records) -> int:
        return self._write(lambda _first: ControllerResult(tuple(records), None))[1]

    def submit(self, api: str, request, version: int, answer, queued_ns: int | None = None, quota=None) -> None:
        """Decide ``request`` (an api the controller handles) and ``answer(response)`` once its records commit.
        ``queued_ns``: when the request reached this node (``perf_counter_ns``), for the event queue time;
        ``quota``: the request's controller mutation quota (``replica.quotas.MutationQuota``), or None."""
        raft, driver = self.node.raft, self.node.driver
        if not self.active or raft is None or driver is None or driver.stopped or not raft.is_leader():
            answer(refusal(api, request, version, NOT_CONTROLLER))
            return
        epoch = raft.epoch
        started = time.perf_counter_ns()
        try:
            result, end = self._write(lambda first: self.controller.handle(api, request, version,
                                                                           now_ms=monotonic_ms(), next_offset=first,
                                                                           quota=quota))
        except NotLeaderError:
            self._deactivate("the Raft core is no longer leader")
            answer(refusal(api, request, version, NOT_CONTROLLER))
            return
        self.events.record(started if queued_ns is None else queued_ns, started, time.perf_counter_ns())
        if result.event:
            who = getattr(request, "broker_id", None)
            log.info("controller: %s%s: %s", api, f" (broker {who})" if who is not None else "", result.event)

        def done(error: int) -> None:
            if error == NONE:
                answer(result.response)
            else:
                answer(refusal(api, request, version,
                               NOT_CONTROLLER if error == NOT_LEADER_OR_FOLLOWER else REQUEST_TIMED_OUT))

        self._wait(end, epoch, done)

    def _wait(self, end: int, epoch: int, callback) -> None:
        driver = self.node.driver
        if self._attached is not driver:
            driver.on_ready.append(self._check_waits)
            self._attached = driver
        self._waits.add(HIGH_WATERMARK, end, epoch, callback, loop=asyncio.get_running_loop(),
                        timeout_s=COMMIT_TIMEOUT_MS / 1000.0, timeout_error=REQUEST_TIMED_OUT)
        self._check_waits()

    def _check_waits(self) -> None:
        lg, raft = self.node.log, self.node.raft
        if lg is not None and raft is not None:
            self._waits.check(lg.high_watermark(), lg.flushed_offset(), raft.epoch if raft.is_leader() else None)

    def tick(self) -> None:
        """The active controller's periodic work: session expiry, the idle NoOpRecord."""
        if not self.active:
            return
        raft = self.node.raft
        if raft is None or not raft.is_leader():
            return
        try:
            for result in self.controller.tick(monotonic_ms()):
                if result.records:
                    self._append(result.records)
                if result.event:
                    log.info("controller: %s", result.event)
        except NotLeaderError:
            self._deactivate("the Raft core is no longer leader")
        except KraftwireError as exc:
            log.warning("controller tick: %s", exc)
