"""Dynamic configs: the active controller's ConfigurationControlManager, pure.

IncrementalAlterConfigs (SET, DELETE, APPEND, SUBTRACT per key) and AlterConfigs (the legacy form: the given keys are
the whole new set, keys left out are deleted) for topics (resource type 2), brokers (type 4; the name is a broker
id, or "" for the cluster-wide default) and groups (type 32, KIP-848: any group name but the empty one, whether the
group exists or not; the whole new set is checked against this node's broker bounds, ``metadata.group_configs``).
Each changed key is one ConfigRecord (value null deletes it); a broker key is written even when unchanged, as Kafka
writes it (brokers reload on it). ``validate_only`` writes nothing.

Refusals, per resource, as Kafka answers them: APPEND/SUBTRACT on a key that is not a list, an unknown topic key, an
invalid value: INVALID_CONFIG; a topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION (an illegal name:
INVALID_TOPIC_EXCEPTION); a broker name that is not a broker id: INVALID_REQUEST; an id no broker is registered with:
BROKER_ID_NOT_REGISTERED; another resource type (broker loggers are the broker's own business): INVALID_REQUEST.
What Kafka's ConfigAdminManager refuses before its controller sees the request: a resource named twice, a key named
twice in one resource, a null value to set (INVALID_REQUEST, Kafka's words), and an unknown operation, which Kafka
answers UNKNOWN_SERVER_ERROR without a message (its IllegalArgumentException escapes).

Broker keys are checked by ``broker_check(name, value) -> reason`` from the edge (the node knows its own keys).
"""

from __future__ import annotations

from typing import Callable

from kraftwire.error_codes import (
    BROKER_ID_NOT_REGISTERED,
    INVALID_CONFIG,
    INVALID_REQUEST,
    INVALID_TOPIC_EXCEPTION,
    NONE,
    UNKNOWN_SERVER_ERROR,
    UNKNOWN_TOPIC_OR_PARTITION,
)
from kraftwire import kafka_configs
from kraftwire.metadata import group_configs
from kraftwire.metadata.controller import elr, topic_configs
from kraftwire.metadata.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from kraftwire.metadata.controller.topics import name_error
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m

TOPIC, BROKER, GROUP = 2, 4, group_configs.GROUP
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


class _Refused(Exception):
    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _no_broker_check(name: str, value: str | None) -> str:
    return ""


class ConfigControl:
    def __init__(self, broker_check: Callable[[str, str | None], str] = _no_broker_check,
                 broker_list_keys: frozenset[str] = frozenset(),
                 broker_value: Callable[[str], str | None] | None = None) -> None:
        self.broker_check = broker_check
        self.broker_list_keys = broker_list_keys
        #: this node's broker keys (the bounds a group's configs are checked against, as Kafka's controller reads
        #: its own GroupCoordinatorConfig)
        self.broker_value = broker_value or kafka_configs.BrokerConfigs().value

    # ------------------------------------------------------------------------------------------------ requests
    def incremental_alter(self, image: MetadataImage, req) -> ControllerResult:
        R = m.IncrementalAlterConfigsResponse
        return self._alter(image, req, R, lambda res, current: self._incremental(res, current))

    def legacy_alter(self, image: MetadataImage, req) -> ControllerResult:
        R = m.AlterConfigsResponse

        def changes(res, current):
            wanted = {c.name: c.value for c in res.configs}
            out = dict(wanted)
            for key in current:
                if key not in wanted:
                    out[key] = None
            return out

        return self._alter(image, req, R, changes)

    def _alter(self, image: MetadataImage, req, R, compute) -> ControllerResult:
        records: list[ApiMessageAndVersion] = []
        responses = []
        seen = [(r.resource_type, r.resource_name) for r in req.resources]
        for res in req.resources:
            code, message = NONE, None
            try:
                if seen.count((res.resource_type, res.resource_name)) > 1:
                    raise _Refused(INVALID_REQUEST, "Each resource must appear at most once.")
                keys = [c.name for c in res.configs]
                if len(set(keys)) < len(keys):
                    raise _Refused(INVALID_REQUEST, "Error due to duplicate config keys")
                for c in res.configs:
                    if c.value is None and getattr(c, "config_operation", SET) == SET:
                        raise _Refused(INVALID_REQUEST, f"Null value not supported for : {c.name}")
                self._check_resource(image, res.resource_type, res.resource_name)
                current = image.configs.get((res.resource_type, res.resource_name), {})
                new = compute(res, current)
                if res.resource_type == BROKER:
                    why = kafka_configs.check_dynamic_broker(
                        {k: v for k, v in new.items() if v is not None and current.get(k) != v},
                        per_broker=res.resource_name != "")
                    if why:
                        raise _Refused(INVALID_REQUEST, why)
                for key, value in new.items():
                    self._check_value(res.resource_type, key, value)
                why = elr.refusal(image, res.resource_type, res.resource_name, new)
                if why:
                    raise _Refused(INVALID_CONFIG, why)
                if res.resource_type == GROUP:
                    whole = {k: v for k, v in {**current, **new}.items() if v is not None}
                    why = group_configs.validate(whole, self.broker_value)
                    if why:
                        raise _Refused(INVALID_CONFIG, why)
                changed = [ApiMessageAndVersion(m.ConfigRecord(resource_type=res.resource_type,
                                                               resource_name=res.resource_name, name=k, value=v), 0)
                           for k, v in new.items() if res.resource_type == BROKER or current.get(k) != v]
                if len(records) + len(changed) > MAX_RECORDS_PER_USER_OP:
                    raise _Refused(INVALID_REQUEST, "Excessively large number of config changes per request.")
                records.extend(changed)
                records.extend(elr.clear_records(image, changed))
            except _Refused as r:
                code, message = r.code, r.message
            responses.append(R.AlterConfigsResourceResponse(error_code=code, error_message=message,
                                                            resource_type=res.resource_type,
                                                            resource_name=res.resource_name))
        return ControllerResult(() if req.validate_only else tuple(records),
                                R(throttle_time_ms=0, responses=responses))

    # ------------------------------------------------------------------------------------------------ checks
    def _incremental(self, res, current) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for c in res.configs:
            value = out.get(c.name, current.get(c.name))
            if c.config_operation == SET:
                value = c.value
            elif c.config_operation == DELETE:
                value = None
            elif c.config_operation in (APPEND, SUBTRACT):
                if not self._is_list(res.resource_type, c.name):
                    raise _Refused(INVALID_CONFIG, f"Can't {_OP_NAMES[c.config_operation]} to key {c.name} because "
                                                   "its type is not LIST.")
                parts = [p for p in (value if value is not None else self._default(res.resource_type, c.name))
                         .split(",") if p]
                for item in (c.value or "").split(","):
                    if c.config_operation == APPEND and item not in parts:
                        parts.append(item)
                    elif c.config_operation == SUBTRACT and item in parts:
                        parts.remove(item)
                value = ",".join(parts)
            else:
                raise _Refused(UNKNOWN_SERVER_ERROR, None)
            out[c.name] = value
        return out

    def _is_list(self, resource_type: int, key: str) -> bool:
        if resource_type == TOPIC:
            c = topic_configs.TOPIC_CONFIGS.get(key)
            return c is not None and c.type == "LIST"
        if resource_type == GROUP:
            g = group_configs.KEYS.get(key)
            return g is not None and g.type == "LIST"
        return key in self.broker_list_keys

    @staticmethod
    def _default(resource_type: int, key: str) -> str:
        c = topic_configs.TOPIC_CONFIGS.get(key) if resource_type == TOPIC else None
        return c.default or "" if c is not None else ""

    @staticmethod
    def _check_resource(image: MetadataImage, resource_type: int, name: str) -> None:
        if resource_type == TOPIC:
            why = name_error(name)
            if why:
                raise _Refused(INVALID_TOPIC_EXCEPTION, why)
            if name not in image.topic_ids:
                raise _Refused(UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        elif resource_type == GROUP:
            if name == "":
                raise _Refused(INVALID_REQUEST, "Default group resources are not allowed.")
        elif resource_type == BROKER:
            if name == "":
                return
            if not name.isdigit():
                raise _Refused(INVALID_REQUEST, f"Invalid broker name {name}")
            if int(name) not in image.brokers:
                raise _Refused(BROKER_ID_NOT_REGISTERED, f"No broker with id {name} found.")
        else:
            raise _Refused(INVALID_REQUEST, f"Unknown resource type {resource_type}")

    def _check_value(self, resource_type: int, key: str, value: str | None) -> None:
        if resource_type == GROUP:  # the group's whole new set is checked at once (group_configs.validate)
            return
        if value is None:
            if resource_type == TOPIC and key not in topic_configs.TOPIC_CONFIGS:
                raise _Refused(INVALID_CONFIG, f"Unknown topic config name: {key}")
            return  # deleting a key always works
        if resource_type == TOPIC:
            why = topic_configs.check(key, value)
            if why:
                raise _Refused(INVALID_CONFIG, why)
        else:
            why = self.broker_check(key, value)
            if why:
                raise _Refused(INVALID_REQUEST, why)
