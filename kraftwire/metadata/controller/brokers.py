"""The active controller's broker decisions (Kafka's ClusterControlManager and BrokerHeartbeatManager), pure.

``BrokerControl`` answers BrokerRegistration and BrokerHeartbeat from the metadata image and its own memory of
sessions, and says which broker's session has expired: each call returns the records to append and the response to
send once they are committed (``ControllerResult``). It never appends, sleeps or reads a clock: the caller passes
``now_ms`` and the offset the records will start at, and replays the records into the image when they commit.

Registration (checked in this order):

* another cluster id: INCONSISTENT_CLUSTER_ID;
* a ZooKeeper-migrating broker: BROKER_ID_NOT_REGISTERED (there is no ZooKeeper here);
* a registered broker of another incarnation that is unfenced and whose session is alive:
  DUPLICATE_BROKER_REGISTRATION;
* a finalized feature level outside the range the broker supports: UNSUPPORTED_VERSION (a broker that names no
  ``metadata.version`` range supports level 1 only, others default to 0);
* from metadata.version 3.7-IV2, a log directory listed twice, unassigned, or registered by another broker:
  INVALID_REGISTRATION;
* otherwise one RegisterBrokerRecord. The broker epoch is the offset the batch will start at. The same incarnation
  registering again (a retry whose answer was lost) keeps its epoch and its fenced / controlled-shutdown flags; a
  new incarnation starts fenced, after partition changes that take the old one out of every ISR and leadership.

Heartbeat: an unregistered broker or another epoch gets STALE_BROKER_EPOCH. Otherwise the broker's state moves:

===================  ==========================================================================================
from                 to
===================  ==========================================================================================
controlled shutdown  (fenced or not, as Kafka's heartbeat manager puts it first) shutdown-now once it leads nothing
                     and its offset is no further than the lowest offset an active broker reported
fenced               shutdown-now if it wants to shut down; unfenced once caught up (its metadata offset has
                     reached its registration record) unless it wants to stay fenced
unfenced             fenced if it asks; controlled shutdown if it wants to shut down and leads partitions,
                     shutdown-now if it leads none
===================  ==========================================================================================

Fencing (including shutdown-now) writes BrokerRegistrationChangeRecord Fenced=1, unfencing Fenced=-1, controlled
shutdown InControlledShutdown=1 (every supported metadata.version has that record; Fence/UnfenceBrokerRecord are
older), with the partition changes of ``topics``: a broker fenced or shutting down leaves every ISR and leadership,
one unfenced may lead the partitions that have no leader.
A session expires ``broker.session.timeout.ms`` after the last heartbeat: ``expire`` fences one broker per call (the
one silent longest), as Kafka's controller does per event. A new active controller starts every session afresh.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.error_codes import (
    BROKER_ID_NOT_REGISTERED,
    DUPLICATE_BROKER_REGISTRATION,
    INCONSISTENT_CLUSTER_ID,
    INVALID_REGISTRATION,
    NONE,
    STALE_BROKER_EPOCH,
    UNSUPPORTED_VERSION,
)
from kraftwire.ids import UUID
from kraftwire.metadata.image import UNASSIGNED_DIR, BrokerRegistration, MetadataImage, replay_all
from kraftwire.metadata.controller import topics
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import FEATURE_NAME, MetadataVersion
from kraftwire.protocol import messages as m

FENCE, UNFENCE = 1, -1


@dataclass(slots=True)
class Session:
    deadline_ms: int
    #: the metadata offset the broker last reported
    metadata_offset: int = -1


class BrokerControl:
    def __init__(self, cluster_id: str, session_timeout_ms: int) -> None:
        self.cluster_id = cluster_id
        self.session_timeout_ms = session_timeout_ms
        self.sessions: dict[int, Session] = {}
        #: the controller's node id and properties file (unclean election resolves through them)
        self.node: topics.NodeConfig = topics.KAFKA_DEFAULTS

    # ------------------------------------------------------------------------------------------------ sessions
    def activate(self, image: MetadataImage, now_ms: int) -> None:
        """A new active controller: every registered broker gets a fresh session (Kafka does the same)."""
        self.sessions = {bid: Session(now_ms + self.session_timeout_ms) for bid in image.brokers}

    def _touch(self, broker_id: int, now_ms: int, offset: int = -1) -> None:
        self.sessions[broker_id] = Session(now_ms + self.session_timeout_ms, offset)

    def _alive(self, broker_id: int, now_ms: int) -> bool:
        s = self.sessions.get(broker_id)
        return s is not None and s.deadline_ms > now_ms

    def expire(self, image: MetadataImage, now_ms: int) -> ControllerResult | None:
        """Fence the unfenced broker whose session ended first, if any (one per call)."""
        due = [(s.deadline_ms, bid) for bid, s in self.sessions.items() if s.deadline_ms <= now_ms]
        for _, bid in sorted(due):
            b = image.brokers.get(bid)
            if b is None:
                del self.sessions[bid]
                continue
            if b.fenced:
                continue
            del self.sessions[bid]
            return ControllerResult(tuple(_fence_records(image, b, self.node)), None, "session expired: fenced")
        return None

    # ------------------------------------------------------------------------------------------------ registration
    def register(self, image: MetadataImage, req, *, next_offset: int, now_ms: int, version: int = 4) -> ControllerResult:
        """BrokerRegistration -> RegisterBrokerRecord. ``next_offset``: the offset the record will be written at;
        ``version``: the request's (PreviousBrokerEpoch, the clean shutdown detection, comes with v3)."""

        def refuse(error: int, why: str) -> ControllerResult:
            return ControllerResult((), m.BrokerRegistrationResponse(error_code=error, broker_epoch=-1), why)

        mv = _metadata_version(image)
        if req.cluster_id != self.cluster_id:
            return refuse(INCONSISTENT_CLUSTER_ID, f"cluster id {req.cluster_id} is not {self.cluster_id}")
        if req.is_migrating_zk_broker:
            return refuse(BROKER_ID_NOT_REGISTERED, "a ZooKeeper-migrating broker cannot register in this cluster")
        existing = image.brokers.get(req.broker_id)
        same = existing is not None and existing.incarnation_id == req.incarnation_id
        # a fenced registration has no session to protect (Kafka's heartbeat manager: fenced -> no valid session),
        # so a broker that shut down or was fenced restarts at once with its new incarnation
        if existing is not None and not same and not existing.fenced and self._alive(req.broker_id, now_ms):
            return refuse(DUPLICATE_BROKER_REGISTRATION,
                          f"broker {req.broker_id} is registered with incarnation {existing.incarnation_id} and its "
                          "session has not expired")
        ranges = {f.name: (f.min_supported_version, f.max_supported_version) for f in req.features}
        for name, level in sorted(image.features.items()):
            lo, hi = ranges.get(name, (1, 1) if name == FEATURE_NAME else (0, 0))
            if not lo <= level <= hi:
                return refuse(UNSUPPORTED_VERSION, f"Unable to register because the broker does not support finalized "
                                                   f"version {level} of {name}. The broker wants a version between "
                                                   f"{lo} and {hi}, inclusive.")
        log_dirs = tuple(req.log_dirs)
        if mv.at_least("3.7-IV2"):
            why = _bad_log_dirs(image, req.broker_id, log_dirs)
            if why:
                return refuse(INVALID_REGISTRATION, why)
        epoch = existing.epoch if same else next_offset
        fenced = existing.fenced if same else True
        shutting = existing.in_controlled_shutdown if same else False
        R = m.RegisterBrokerRecord
        record = R(broker_id=req.broker_id, is_migrating_zk_broker=False, incarnation_id=req.incarnation_id,
                   broker_epoch=epoch,
                   end_points=[R.BrokerEndpoint(name=e.name, host=e.host, port=e.port,
                                                security_protocol=e.security_protocol) for e in req.listeners],
                   features=[R.BrokerFeature(name=f.name, min_supported_version=f.min_supported_version,
                                             max_supported_version=f.max_supported_version) for f in req.features],
                   rack=req.rack, fenced=fenced, in_controlled_shutdown=shutting, log_dirs=list(log_dirs))
        self._touch(req.broker_id, now_ms)
        # a new incarnation starts fenced: the old one's ISR places and leaderships go first (Kafka's
        # handleBrokerShutdown); the epoch stays the batch's first offset, as Kafka's
        cleanup = [] if same else _shutdown_records(image, req, existing, version, self.node)
        return ControllerResult((*cleanup, ApiMessageAndVersion(record, mv.register_broker_record_version)),
                                m.BrokerRegistrationResponse(error_code=NONE, broker_epoch=epoch),
                                "registered again (same incarnation)" if same else "registered")

    # ------------------------------------------------------------------------------------------------ heartbeat
    def heartbeat(self, image: MetadataImage, req, *, now_ms: int) -> ControllerResult:
        R = m.BrokerHeartbeatResponse
        b = image.brokers.get(req.broker_id)
        if b is None or b.epoch != req.broker_epoch:
            return ControllerResult((), R(error_code=STALE_BROKER_EPOCH, is_caught_up=False, is_fenced=True,
                                          should_shut_down=False), "stale broker epoch")
        self._touch(b.id, now_ms, req.current_metadata_offset)
        caught_up = req.current_metadata_offset >= b.epoch  # the registration record's offset
        records: list[ApiMessageAndVersion] = _offline_dir_records(image, b, getattr(req, "offline_log_dirs", None))
        if records:  # the rest is decided on the image those records make
            image = replay_all(records, image)
            b = image.brokers[b.id]
        fenced, shut, event = b.fenced, False, ""
        # a broker in controlled shutdown stays there (fenced or not) until it shuts down or registers again
        if b.in_controlled_shutdown:
            if self._may_shut_down(image, b, req.current_metadata_offset, now_ms):
                records = [] if b.fenced else _fence_records(image, b, self.node)
                fenced, shut, event = True, True, "controlled shutdown complete"
        elif b.fenced:
            if req.want_shut_down:
                shut, event = True, "shut down while fenced"
            elif caught_up and not req.want_fence:
                records, fenced, event = records + _unfence_records(image, b, self.node), False, "unfenced"
        elif req.want_fence:
            records, fenced, event = records + _fence_records(image, b, self.node), True, "fenced at its request"
        elif req.want_shut_down:
            if _leads_partitions(image, b.id):
                records, event = records + _controlled_shutdown_records(image, b, self.node), "in controlled shutdown"
            else:
                records, fenced, shut, event = (records + _fence_records(image, b, self.node), True, True,
                                                "shut down (leads nothing)")
        return ControllerResult(tuple(records), R(error_code=NONE, is_caught_up=caught_up, is_fenced=fenced,
                                                  should_shut_down=shut), event)

    # ------------------------------------------------------------------------------------------------ unregister
    def unregister(self, image: MetadataImage, req) -> ControllerResult:
        """UnregisterBroker (``kafka-cluster.sh unregister``): the broker leaves every ISR and leadership, then an
        UnregisterBrokerRecord removes its registration; an unknown id is BROKER_ID_NOT_REGISTERED, as Kafka's
        ReplicationControlManager.unregisterBroker answers."""
        R = m.UnregisterBrokerResponse
        b = image.brokers.get(req.broker_id)
        if b is None:
            return ControllerResult((), R(error_code=BROKER_ID_NOT_REGISTERED,
                                          error_message=f"Broker ID {req.broker_id} is not currently registered"),
                                    "not registered")
        self.sessions.pop(b.id, None)
        records = [*topics.fenced_changes(image, b.id, self.node),
                   ApiMessageAndVersion(m.UnregisterBrokerRecord(broker_id=b.id, broker_epoch=b.epoch), 0)]
        return ControllerResult(tuple(records), R(error_code=NONE, error_message=None), "unregistered")

    def _may_shut_down(self, image: MetadataImage, b: BrokerRegistration, offset: int, now_ms: int) -> bool:
        if _leads_partitions(image, b.id):
            return False
        active = [self.sessions[o.id].metadata_offset for o in image.brokers.values()
                  if o.id != b.id and not o.fenced and not o.in_controlled_shutdown and self._alive(o.id, now_ms)]
        return not active or offset <= min(active)


# ---------------------------------------------------------------------------------------------------- helpers
def _metadata_version(image: MetadataImage) -> MetadataVersion:
    mv = image.metadata_version
    if mv is None:
        raise ValueError("the image has no metadata.version: the bootstrap records come first")
    return mv


def _offline_dir_records(image: MetadataImage, b: BrokerRegistration, offline,
                         node: topics.NodeConfig = topics.KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    """Kafka's handleDirectoriesOffline: directories a heartbeat reports offline that the registration still lists
    move the broker out of the ISR and leadership of the partitions placed there, then a BrokerRegistrationChange
    lists the directories left online. Nothing once the registration has caught up."""
    newly = [d for d in (offline or ()) if d in b.log_dirs]
    if not newly:
        return []
    records = topics.offline_dir_changes(image, b.id, newly, node)
    online = [d for d in b.log_dirs if d not in newly]
    mv = _metadata_version(image)
    records.append(ApiMessageAndVersion(m.BrokerRegistrationChangeRecord(
        broker_id=b.id, broker_epoch=b.epoch, fenced=0, in_controlled_shutdown=0, log_dirs=online),
        mv.broker_registration_change_record_version))
    return records


def _shutdown_records(image: MetadataImage, req, existing: BrokerRegistration | None, version: int,
                      node: topics.NodeConfig) -> list[ApiMessageAndVersion]:
    """Kafka's handleBrokerShutdown for a new incarnation of ``req.broker_id``. Its shutdown was clean when the
    request (v3+) names, as its previous broker epoch (read from the clean shutdown marker its log directories
    kept), the epoch the controller holds for it. With eligible leader replicas on, an unclean one takes it out of
    every ISR and ELR; otherwise it only leaves the ISRs and leaderships, as a fenced broker does."""
    known_epoch = existing.epoch if existing is not None else -2
    clean = version >= 3 and req.previous_broker_epoch == known_epoch
    if topics.elr_enabled(image) and not clean:
        return topics.unclean_shutdown_changes(image, req.broker_id, node)
    return topics.fenced_changes(image, req.broker_id, node)


def _leads_partitions(image: MetadataImage, broker_id: int) -> bool:
    return any(p.leader == broker_id for t in image.topics.values() for p in t.partitions.values())


def _bad_log_dirs(image: MetadataImage, broker_id: int, dirs: tuple[UUID, ...]) -> str:
    if not dirs:
        return ""
    if len(set(dirs)) != len(dirs):
        return "a log directory is listed twice"
    if UNASSIGNED_DIR in dirs:
        return "the unassigned directory id is not a log directory"
    for other in image.brokers.values():
        if other.id != broker_id and set(other.log_dirs) & set(dirs):
            return f"a log directory is registered by broker {other.id}"
    return ""


def _change(image: MetadataImage, b: BrokerRegistration, *, fenced: int = 0, shutting: int = 0) -> ApiMessageAndVersion:
    # Fence/UnfenceBrokerRecord belong to levels below 3.3-IV2, older than the oldest kraftwire supports
    mv = _metadata_version(image)
    return ApiMessageAndVersion(m.BrokerRegistrationChangeRecord(broker_id=b.id, broker_epoch=b.epoch, fenced=fenced,
                                                                 in_controlled_shutdown=shutting),
                                mv.broker_registration_change_record_version)


# As Kafka orders them: a fenced broker leaves the ISRs and leaderships before it is marked fenced; an unfenced one
# is marked first and then elected where partitions have no leader; one entering controlled shutdown is marked, then
# leaves the ISRs and leaderships.
def _fence_records(image: MetadataImage, b: BrokerRegistration,
                   node: topics.NodeConfig = topics.KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    return [*topics.fenced_changes(image, b.id, node), _change(image, b, fenced=FENCE)]


def _unfence_records(image: MetadataImage, b: BrokerRegistration,
                     node: topics.NodeConfig = topics.KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    return [_change(image, b, fenced=UNFENCE), *topics.unfenced_changes(image, b.id, node)]


def _controlled_shutdown_records(image: MetadataImage, b: BrokerRegistration,
                                 node: topics.NodeConfig = topics.KAFKA_DEFAULTS) -> list[ApiMessageAndVersion]:
    return [_change(image, b, shutting=1), *topics.fenced_changes(image, b.id, node)]
