"""The test server's broker lifecycle (KIP-631), as state folded from the log and as the active controller's decisions.

A KRaft node (``server-start``) keeps brokers in Kafka's metadata records instead (``metadata_node``); this module
serves the test server, whose log is a client topic, with kraftwire's own control records.

States: a broker registers (BrokerRegistration) and is **Fenced**; the active controller makes it **Online** once a
heartbeat shows it has caught up (its high watermark has passed the record of its current state: a broker that
has seen its own registration — or its own fencing — committed has caught up to the high watermark it was
registered at); a broker whose heartbeats stop for ``broker.session.timeout.ms`` is **Fenced** again; a heartbeat
with WantShutDown moves it to **Stopping** (controlled shutdown), and once that is committed the controller answers
ShouldShutDown and writes **Offline**.

Every registration and state change is a kraftwire control record in the log (``KRAFTWIRE_BROKER_REGISTRATION``,
``KRAFTWIRE_BROKER_STATE``), folded on every replica by ``RegistryScan`` (so any new leader knows every broker's
state) and carried in the snapshot image as ``{"kw":"broker", ...}`` values (``BrokerRegistry.image``). A broker's
epoch is the offset of its registration record (as in Kafka). Session deadlines are the active controller's memory
only: a new leader gives every broker a fresh session, as Kafka does.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field

from kraftwire.error_codes import (
    BROKER_ID_NOT_REGISTERED,
    INCONSISTENT_CLUSTER_ID,
    NONE,
    NOT_CONTROLLER,
    REQUEST_TIMED_OUT,
    STALE_BROKER_EPOCH,
)
from kraftwire.errors import KraftwireError
from kraftwire.log.api import Isolation
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.records.control import (
    KRAFTWIRE_BROKER_REGISTRATION,
    KRAFTWIRE_BROKER_STATE,
    control_record_key,
    decode_control_record,
    encode_control_value,
)
from kraftwire.server.node.roles import FENCED, OFFLINE, ONLINE, STATE_NAMES, STOPPING
from kraftwire.server.test_server.scan import CommittedImage, replay, snapshot_values

log = logging.getLogger("kraftwire.lifecycle")




@dataclass
class BrokerInfo:
    broker_id: int
    epoch: int  # offset of the registration record
    incarnation: str
    endpoints: list = field(default_factory=list)  # [(name, host, port)]
    rack: str | None = None
    state: int = FENCED
    changed_at: int = -1  # offset of the record that set ``state``

    def as_json(self) -> dict:
        return {"kw": "broker", "id": self.broker_id, "epoch": self.epoch, "incarnation": self.incarnation,
                "endpoints": [list(e) for e in self.endpoints], "rack": self.rack, "state": self.state,
                "changed_at": self.changed_at}

    @property
    def state_name(self) -> str:
        return STATE_NAMES.get(self.state, str(self.state))


class BrokerRegistry:
    """Every broker's registration and state, folded from the log (``apply``) or loaded from an image."""

    def __init__(self) -> None:
        self.brokers: dict[int, BrokerInfo] = {}

    def clear(self) -> None:
        self.brokers.clear()

    def apply(self, b) -> None:
        if not b.is_control:
            return
        for r in b:
            key = r.key
            if key is None or len(key) < 4:
                continue
            ctype = int.from_bytes(bytes(key[2:4]), "big", signed=True)
            if ctype not in (KRAFTWIRE_BROKER_REGISTRATION, KRAFTWIRE_BROKER_STATE):
                continue
            try:
                _, msg = decode_control_record(key, r.value)
            except KraftwireError:
                continue
            offset = r.offset
            if ctype == KRAFTWIRE_BROKER_REGISTRATION:
                self.brokers[msg.broker_id] = BrokerInfo(
                    msg.broker_id, offset if msg.broker_epoch < 0 else msg.broker_epoch, str(msg.incarnation_id),
                    [(e.name, e.host, e.port) for e in msg.endpoints], msg.rack,
                    FENCED if msg.fenced else ONLINE, offset)
            else:
                info = self.brokers.get(msg.broker_id)
                if info is not None and info.epoch == msg.broker_epoch:
                    info.state = msg.state
                    info.changed_at = offset

    def image(self) -> list[bytes]:
        return [json.dumps(i.as_json(), separators=(",", ":")).encode() for _, i in sorted(self.brokers.items())]

    def load(self, values) -> None:
        self.clear()
        for value in values:
            try:
                o = json.loads(value)
                if o.get("kw") != "broker":
                    continue
                self.brokers[o["id"]] = BrokerInfo(o["id"], o["epoch"], o["incarnation"],
                                                   [tuple(e) for e in o["endpoints"]], o.get("rack"), o["state"],
                                                   o.get("changed_at", o["epoch"]))
            except (ValueError, TypeError, KeyError, AttributeError):
                continue

    def online(self) -> list[BrokerInfo]:
        return [i for _, i in sorted(self.brokers.items()) if i.state == ONLINE]


# ---------------------------------------------------------------------------------------------------- log folding
def base_image(lg, registry: BrokerRegistry, limit: int) -> int:
    """Load the registry from the latest snapshot at or below ``limit`` the log continues; where to scan from."""
    start = lg.start_offset()
    latest = lg.latest_snapshot_id()
    registry.clear()
    if latest is not None and start <= latest.end_offset <= min(limit, lg.end_offset()):
        values = snapshot_values(lg, latest)
        if values is not None:
            registry.load(values)
            return latest.end_offset
    return start


class RegistryScan:
    """The live registry of this replica: the log folded up to its end, rebuilt after a truncation or when the
    log start passes it (a snapshot installed on a replica that fell behind: the image, then the log)."""

    def __init__(self) -> None:
        self.registry = BrokerRegistry()
        self.scanned_to = -1
        self.loaded_from_snapshot = None

    def catch_up(self, lg) -> None:
        if lg is None:
            return
        end = lg.end_offset()
        if end < self.scanned_to or self.scanned_to < lg.start_offset():
            self.scanned_to = base_image(lg, self.registry, end)
            latest = lg.latest_snapshot_id()
            if latest is not None and self.scanned_to == latest.end_offset and self.scanned_to > 0:
                self.loaded_from_snapshot = self.scanned_to
                log.info("broker registry loaded from snapshot %d-%d: %d brokers", latest.end_offset, latest.epoch,
                         len(self.registry.brokers))
        if self.scanned_to < end:
            self.scanned_to = replay(lg, self.registry, self.scanned_to, end, Isolation.UNCOMMITTED)


class ImageListener:
    """Raft listener wrapping the broker APIs' snapshot source so one snapshot holds both images: theirs, then the
    broker registry as of the same committed offset."""

    def __init__(self, inner, node) -> None:
        self.inner = inner
        self.node = node
        self.position = 0
        self.registry = CommittedImage(BrokerRegistry, base_image)

    def handle_commit(self, batches) -> None:
        if batches:
            self.position = batches[-1].last_offset + 1
            if self.node.log is not None:
                self.registry.fold(self.node.log, batches)
        if self.inner is not None:
            self.inner.handle_commit(batches)

    def handle_load_snapshot(self, reader) -> None:
        self.position = reader.snapshot_id.end_offset
        if self.inner is not None:
            self.inner.handle_load_snapshot(reader)

    def handle_leader_change(self, leader) -> None:
        if self.inner is not None:
            self.inner.handle_leader_change(leader)

    def snapshot_records(self) -> list[bytes]:
        out = list(self.inner.snapshot_records()) if self.inner is not None else []
        return out + self.registry.advance(self.node.log, self.position).image()


# ---------------------------------------------------------------------------------------------------- controller
def _state_batch(broker_id: int, epoch: int, state: int) -> bytes:
    builder = RecordBatchBuilder(is_control=True)
    msg = w.KraftwireBrokerStateRecord(broker_id=broker_id, broker_epoch=epoch, state=state)
    builder.append(control_record_key(KRAFTWIRE_BROKER_STATE), encode_control_value(KRAFTWIRE_BROKER_STATE, msg))
    return builder.build()


def _registration_batch(req) -> bytes:
    builder = RecordBatchBuilder(is_control=True)
    R = w.KraftwireBrokerRegistrationRecord
    msg = R(broker_id=req.broker_id, incarnation_id=req.incarnation_id, broker_epoch=-1,
            rack=req.rack or None, fenced=True,
            endpoints=[R.Endpoint(name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol)
                       for e in req.listeners])
    builder.append(control_record_key(KRAFTWIRE_BROKER_REGISTRATION),
                   encode_control_value(KRAFTWIRE_BROKER_REGISTRATION, msg))
    return builder.build()


class Controller:
    """The active controller's side: BrokerRegistration, BrokerHeartbeat and session expiry (leader only)."""

    def __init__(self, roles) -> None:
        self.roles = roles
        self.sessions: dict[int, float] = {}  # broker id -> monotonic deadline
        self.pending: dict[int, int] = {}  # broker id -> state being appended
        self.leader_epoch = -1

    @property
    def timeout_s(self) -> float:
        return self.roles.session_timeout_ms / 1000.0

    def _ctx(self):
        return self.roles.node.broker

    def leading(self) -> bool:
        node = self.roles.node
        return node.raft is not None and node.driver is not None and not node.driver.stopped and node.raft.is_leader()

    def tick(self) -> None:
        """Session expiry; a new leadership starts every broker's session afresh."""
        if not self.leading():
            self.leader_epoch = -1
            return
        node = self.roles.node
        now = time.monotonic()
        if self.leader_epoch != node.raft.epoch:
            self.leader_epoch = node.raft.epoch
            self.pending.clear()
            self.sessions = {bid: now + self.timeout_s for bid in self.roles.registry.brokers}
            log.info("active controller in epoch %d: %d registered brokers (%s)", self.leader_epoch,
                     len(self.roles.registry.brokers), ", ".join(f"{i.broker_id}:{i.state_name}" for i in
                                                                  self.roles.registry.brokers.values()))
        for bid, info in list(self.roles.registry.brokers.items()):
            deadline = self.sessions.get(bid)
            if info.state == ONLINE and deadline is not None and now > deadline and bid not in self.pending:
                log.info("broker %d missed its heartbeats for %d ms: fenced", bid, self.roles.session_timeout_ms)
                self._change(info, FENCED)
            elif info.state == STOPPING and deadline is not None and now > deadline and bid not in self.pending:
                self._change(info, OFFLINE)

    def _change(self, info: BrokerInfo, state: int, callback=None) -> None:
        ctx = self._ctx()
        bid = info.broker_id
        self.pending[bid] = state

        def done(error: int) -> None:
            if self.pending.get(bid) == state:
                del self.pending[bid]
            if error == NONE:
                log.info("broker %d (epoch %d) is %s", bid, info.epoch, STATE_NAMES[state])
            if callback is not None:
                callback(error)

        ctx.append_and_commit(_state_batch(bid, info.epoch, state), done)

    # ------------------------------------------------------------------------------------------------ requests
    def registration(self, request, conn) -> None:
        req, version, cid = request.body, request.version, request.header.correlation_id
        R = w.BrokerRegistrationResponse

        def answer(error: int, epoch: int = -1) -> None:
            conn.send_response(R(error_code=error, broker_epoch=epoch), version, cid)

        if not self.leading():
            answer(NOT_CONTROLLER)
            return
        if req.cluster_id != self.roles.node.cluster_id:
            log.warning("refused the registration of broker %d: cluster id %s is not ours (%s)", req.broker_id,
                        req.cluster_id, self.roles.node.cluster_id)
            answer(INCONSISTENT_CLUSTER_ID)
            return
        if not self._ctx().attach():
            answer(NOT_CONTROLLER)
            return
        bid = req.broker_id
        self.sessions[bid] = time.monotonic() + self.timeout_s

        def done(error: int) -> None:
            self.roles.catch_up()
            info = self.roles.registry.brokers.get(bid)
            if error != NONE or info is None or info.incarnation != str(req.incarnation_id):
                answer(NOT_CONTROLLER if error in (NONE, 6) else REQUEST_TIMED_OUT)
                return
            log.info("broker %d registered (epoch %d, incarnation %s, endpoints %s): Fenced", bid, info.epoch,
                     info.incarnation, ",".join(f"{n}://{h}:{p}" for n, h, p in info.endpoints))
            answer(NONE, info.epoch)

        self._ctx().append_and_commit(_registration_batch(req), done)

    def heartbeat(self, request, conn) -> None:
        req, version, cid = request.body, request.version, request.header.correlation_id
        R = w.BrokerHeartbeatResponse

        def answer(error: int = NONE, *, fenced: bool = True, caught_up: bool = False, shut: bool = False) -> None:
            conn.send_response(R(error_code=error, is_caught_up=caught_up, is_fenced=fenced, should_shut_down=shut),
                               version, cid)

        if not self.leading() or not self._ctx().attach():
            answer(NOT_CONTROLLER)
            return
        info = self.roles.registry.brokers.get(req.broker_id)
        if info is None:
            answer(BROKER_ID_NOT_REGISTERED)
            return
        if info.epoch != req.broker_epoch or info.state == OFFLINE:
            answer(STALE_BROKER_EPOCH)
            return
        self.sessions[info.broker_id] = time.monotonic() + self.timeout_s
        caught_up = req.current_metadata_offset > info.changed_at
        pending = self.pending.get(info.broker_id)
        if req.want_shut_down:
            if info.state == STOPPING and pending is None:
                def offline(error: int) -> None:
                    answer(error if error else NONE, fenced=True, caught_up=caught_up, shut=error == NONE)
                self._change(info, OFFLINE, offline)
                return
            if info.state in (FENCED, ONLINE) and pending is None:
                log.info("broker %d asks for a controlled shutdown: Stopping", info.broker_id)
                self._change(info, STOPPING)
            answer(fenced=info.state != ONLINE, caught_up=caught_up)
            return
        if req.want_fence:
            if info.state == ONLINE and pending is None:
                self._change(info, FENCED)
            answer(fenced=True, caught_up=caught_up)
            return
        if info.state == FENCED and caught_up and pending is None:
            def unfenced(error: int) -> None:
                answer(error, fenced=error != NONE, caught_up=True)
            self._change(info, ONLINE, unfenced)
            return
        answer(fenced=info.state != ONLINE, caught_up=caught_up)
