"""Controller registrations (KIP-919): the active controller's decision on a ControllerRegistration, and the state
each controller keeps of its own registration (Kafka's ClusterControlManager.registerController and
ControllerRegistrationManager), pure.

Every controller registers itself — its id, this process's incarnation id, its controller listeners and the feature
ranges it supports — so that the metadata image knows the controllers as it knows the brokers: DescribeCluster asked
of a controller listener (``--bootstrap-controller``) lists them from there, and ``metadata-shell`` shows them.

**Decision.** Before metadata.version 3.7-IV0 the request is refused with UNSUPPORTED_VERSION ("The current
MetadataVersion is too old to support controller registrations."); a listener with a security protocol Kafka does not
know gets UNKNOWN_SERVER_ERROR naming it; otherwise one RegisterControllerRecord (version 0, ZkMigrationReady false as
there is no ZooKeeper), which replaces any earlier registration of that id. A listener named twice keeps its last
entry, as Kafka's ordered map of listeners does.

**Unregistration** (KIP-1312, ``kafka-cluster unregister-controller``; Kafka's QuorumController and
ClusterControlManager.unregisterController), checked in Kafka's order: the active controller naming itself is
INVALID_REQUEST ("Controller cannot unregister itself while it is active."); below metadata.version 4.4-IV2
UNSUPPORTED_VERSION ("The current MetadataVersion is too old to support controller unregistration."); an id with no
registration CONTROLLER_ID_NOT_REGISTERED ("Controller ID <id> is not currently registered."); otherwise one
UnregisterControllerRecord (version 0) removes the registration. A controller still running re-registers after it,
as Kafka's ControllerRegistrationManager does once its registration leaves the image (the sender below).

**Sending.** A controller sends once the image it has folded says it is not registered with its own incarnation
(absent, or another process's registration) and the metadata.version allows it, one request at a time. A refusal is
retried after Kafka's exponential backoff (100 ms doubling to 120 s, 2 % jitter); an accepted request is sent again
only if the registration still has not shown up in the image after ``settle_ms`` (its record lost to a controller
failover before it committed).
"""

from __future__ import annotations

from kraftwire.error_codes import (
    CONTROLLER_ID_NOT_REGISTERED,
    INVALID_REQUEST,
    NONE,
    UNKNOWN_SERVER_ERROR,
    UNSUPPORTED_VERSION,
)
from kraftwire.ids import UUID
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import MetadataVersion
from kraftwire.protocol import messages as m

#: the first metadata.version with controller registrations (Kafka's isControllerRegistrationSupported)
SINCE = "3.7-IV0"
TOO_OLD = "The current MetadataVersion is too old to support controller registrations."
UNREGISTER_SELF = "Controller cannot unregister itself while it is active."
UNREGISTER_TOO_OLD = "The current MetadataVersion is too old to support controller unregistration."
#: Kafka's SecurityProtocol ids
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}


def supported_by(version: MetadataVersion | None) -> bool:
    return version is not None and version.at_least(SINCE)


def register(image: MetadataImage, req) -> ControllerResult:
    R = m.ControllerRegistrationResponse
    if not supported_by(image.metadata_version):
        return ControllerResult((), R(throttle_time_ms=0, error_code=UNSUPPORTED_VERSION, error_message=TOO_OLD),
                                "refused: metadata.version too old")
    for listener in req.listeners:
        if listener.security_protocol not in SECURITY_PROTOCOLS:
            message = f"Unknown security protocol {listener.security_protocol} in listener {listener.name}"
            return ControllerResult((), R(throttle_time_ms=0, error_code=UNKNOWN_SERVER_ERROR, error_message=message),
                                    "refused: " + message)
    listeners = {listener.name: listener for listener in req.listeners}  # the last entry of a name wins
    E, F = m.RegisterControllerRecord.ControllerEndpoint, m.RegisterControllerRecord.ControllerFeature
    record = m.RegisterControllerRecord(
        controller_id=req.controller_id, incarnation_id=req.incarnation_id, zk_migration_ready=False,
        end_points=[E(name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol)
                    for e in listeners.values()],
        features=[F(name=f.name, min_supported_version=f.min_supported_version,
                    max_supported_version=f.max_supported_version) for f in req.features])
    return ControllerResult((ApiMessageAndVersion(record, 0),), R(throttle_time_ms=0, error_code=NONE,
                                                                  error_message=None),
                            f"controller {req.controller_id} registered (incarnation {req.incarnation_id})")


def unregister(image: MetadataImage, req, active_id: int) -> ControllerResult:
    """UnregisterController decided by the active controller *active_id* (see the module's docstring)."""
    R = m.UnregisterControllerResponse
    controller_id = req.controller_id

    def refuse(code: int, message: str) -> ControllerResult:
        return ControllerResult((), R(throttle_time_ms=0, error_code=code, error_message=message),
                                "refused: " + message)

    if controller_id == active_id:
        return refuse(INVALID_REQUEST, UNREGISTER_SELF)
    mv = image.metadata_version
    if mv is None or not mv.supports_controller_unregistration:
        return refuse(UNSUPPORTED_VERSION, UNREGISTER_TOO_OLD)
    if controller_id not in image.controllers:
        return refuse(CONTROLLER_ID_NOT_REGISTERED, f"Controller ID {controller_id} is not currently registered.")
    record = ApiMessageAndVersion(m.UnregisterControllerRecord(controller_id=controller_id), 0)
    return ControllerResult((record,), R(throttle_time_ms=0, error_code=NONE, error_message=None),
                            f"controller {controller_id} unregistered")


class RegistrationSender:
    """When a controller sends its ControllerRegistration. Time is passed in; ``jitter`` in [0, 1) is the caller's
    draw (a seeded one in simulations)."""

    INITIAL_MS, MULTIPLIER, MAX_MS, JITTER = 100, 2, 120_000, 0.02

    def __init__(self, node_id: int, incarnation_id: UUID, settle_ms: int = 30_000) -> None:
        self.node_id = node_id
        self.incarnation_id = incarnation_id
        self.settle_ms = settle_ms
        self.pending = False
        self.failures = 0
        self.next_ms = 0

    def registered_in(self, image: MetadataImage) -> bool:
        c = image.controllers.get(self.node_id)
        return c is not None and c.incarnation_id == self.incarnation_id

    def due(self, image: MetadataImage, now_ms: int) -> bool:
        """Whether to send now, given the image this controller has folded."""
        return (not self.pending and now_ms >= self.next_ms and not self.registered_in(image)
                and supported_by(image.metadata_version))

    def sent(self) -> None:
        self.pending = True

    def answered(self, error_code: int | None, now_ms: int, jitter: float) -> None:
        """The answer (None: no answer — the request failed or timed out)."""
        self.pending = False
        if error_code == NONE:
            self.failures = 0
            self.next_ms = now_ms + self.settle_ms
            return
        backoff = min(self.INITIAL_MS * self.MULTIPLIER ** self.failures, self.MAX_MS)
        self.failures += 1
        self.next_ms = now_ms + int(backoff * (1 + self.JITTER * (2 * jitter - 1)))

    def request(self, listeners, features: dict[str, tuple[int, int]]):
        """The request: ``listeners`` as (name, host, port, security protocol name), ``features`` as name ->
        (min, max) supported."""
        Q = m.ControllerRegistrationRequest
        ids = {name: code for code, name in SECURITY_PROTOCOLS.items()}
        return Q(controller_id=self.node_id, incarnation_id=self.incarnation_id, zk_migration_ready=False,
                 listeners=[Q.Listener(name=name, host=host, port=port, security_protocol=ids.get(protocol, 0))
                            for name, host, port, protocol in listeners],
                 features=[Q.Feature(name=name, min_supported_version=low, max_supported_version=high)
                           for name, (low, high) in sorted(features.items())])


__all__ = ["SINCE", "TOO_OLD", "UNREGISTER_SELF", "UNREGISTER_TOO_OLD", "RegistrationSender", "register",
           "supported_by", "unregister"]
