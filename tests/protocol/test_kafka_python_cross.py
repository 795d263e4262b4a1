"""Cross-encoding with an independent implementation: kafka-python 3.x's classes generated from Kafka's JSON.

For every API (request and response) and every version both implement: bytes we encode decode in
kafka-python to the same values, and bytes kafka-python encodes (from the same values) decode in ours
to the same values — and are byte-identical to our own encoding.
"""

from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire.ids import ZERO_UUID
from kraftwire.protocol import codec, messages

from harness.messages import message_strategy



def _kafka_python_classes() -> dict[str, type]:
    from kafka.protocol.api_message import ApiMessage

    found: dict[str, type] = {}
    for mod in ("kafka.protocol.admin", "kafka.protocol.consumer", "kafka.protocol.metadata", "kafka.protocol.producer"):
        module = importlib.import_module(mod)
        for attr in dir(module):
            c = getattr(module, attr)
            if isinstance(c, type) and issubclass(c, ApiMessage) and c is not ApiMessage and getattr(c, "_json", None):
                found[c.name] = c
    return found


THEIRS = _kafka_python_classes()


def _cases():
    for name, ours in messages.MESSAGES.items():
        theirs = THEIRS.get(name)
        if theirs is None:
            continue
        lo = max(ours.VALID_VERSIONS[0], theirs.valid_versions[0])
        hi = min(ours.VALID_VERSIONS[1], theirs.valid_versions[1])
        for v in range(lo, hi + 1):
            yield pytest.param(name, v, id=f"{name}-v{v}")


CASES = list(_cases())


def test_the_overlap_is_substantial():
    names = {p.values[0] for p in CASES}
    for api in ("ApiVersions", "Metadata", "Produce", "Fetch", "ListOffsets", "FindCoordinator", "InitProducerId",
                "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch", "DescribeQuorum",
                "DescribeCluster"):
        assert api + "Request" in names and api + "Response" in names, api
    assert len(CASES) > 200


def _their_fields(struct_field) -> dict:
    out = {f._json["name"]: (attr, f) for attr, f in struct_field.fields.items()}
    # kafka-python renames the *AuthorizedOperations int32 bitfields to a set of bit positions
    if "authorized_operations" in out:
        for name in ("ClusterAuthorizedOperations", "TopicAuthorizedOperations"):
            out[name] = out["authorized_operations"]
    # a field Kafka renamed after the JSON kafka-python ships (the bytes are the same): Kafka 4.4.0's name -> theirs
    for ours, older in (("GenerationIdOrMemberEpoch", "GenerationId"),):
        if older in out and ours not in out:
            out[ours] = out[older]
    return out


_NO_OPS = -(2**31)


def _ops_to_theirs(v):
    return None if v == _NO_OPS else {i for i in range(32) if (v >> i) & 1}


def _ops_from_theirs(v):
    if v is None:
        return _NO_OPS
    n = sum(1 << i for i in v)
    return n - (1 << 32) if n >= 1 << 31 else n


def _uuid_from_theirs(v):
    return ZERO_UUID if v is None else v  # kafka-python decodes the zero uuid as None


def _to_theirs(obj, info, their_cls, struct_field, version):
    tf = _their_fields(struct_field)
    kwargs = {}
    for f in info.fields:
        if not f.present(version):
            continue
        attr, tfield = tf[f.name]
        v = getattr(obj, f.attr)
        if f.is_tagged(version) and v == f.make_default():
            continue  # Kafka writes a tagged field only when it differs from its default
        if f.struct is not None:
            if f.is_array:
                v = None if v is None else [_to_theirs(e, f.struct, tfield.data_class, tfield, version) for e in v]
            elif v is not None:  # a nullable struct (DescribeTopicPartitions' Cursor) may be null
                v = _to_theirs(v, f.struct, tfield.data_class, tfield, version)
        elif isinstance(v, memoryview):
            v = bytes(v)
        elif attr == "authorized_operations":  # renamed to a set of bits (not in every message: see below)
            v = _ops_to_theirs(v)
        kwargs[attr] = v
    return their_cls(version=version, **kwargs)


def _from_theirs(tobj, info, struct_field, version):
    tf = _their_fields(struct_field)
    kwargs = {}
    for f in info.fields:
        if not f.present(version):
            continue
        attr, tfield = tf[f.name]
        v = getattr(tobj, attr)
        if f.struct is not None:
            if f.is_array:
                v = None if v is None else [_from_theirs(e, f.struct, tfield, version) for e in v]
            elif v is None:
                v = f.make_default()
            else:
                v = _from_theirs(v, f.struct, tfield, version)
        elif attr == "authorized_operations":  # DescribeTopicPartitions keeps its int32 as it is
            v = _ops_from_theirs(v)
        elif f.type == "uuid":
            v = [_uuid_from_theirs(x) for x in v] if f.is_array and v is not None else _uuid_from_theirs(v)
        kwargs[f.attr] = v
    return info.cls(**kwargs)


@pytest.mark.interop
@pytest.mark.parametrize("name,version", CASES)
@settings(max_examples=25, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_cross_encoding_with_kafka_python(name, version, data):
    ours_cls = messages.get(name)
    theirs_cls = THEIRS[name]
    msg = data.draw(message_strategy(ours_cls, version))
    if name == "ApiVersionsResponse":
        msg.error_code = 0  # kafka-python reads any error body as v0 (KIP-511); covered in test_api_versions
    wire = codec.encode(msg, version)

    # ours -> bytes -> kafka-python
    decoded_theirs = theirs_cls.decode(wire, version=version)
    assert _from_theirs(decoded_theirs, ours_cls._info, theirs_cls._struct, version) == msg

    # same values built in kafka-python -> bytes -> ours
    built = _to_theirs(msg, ours_cls._info, theirs_cls, theirs_cls._struct, version)
    their_wire = bytes(built.encode(version=version))
    assert codec.decode(ours_cls, their_wire, version) == msg
    assert their_wire == wire


@pytest.mark.interop
@pytest.mark.parametrize("flexible", [False, True])
def test_request_header_matches_kafka_python(flexible):
    from kafka.protocol.api_header import RequestHeader as TheirHeader

    ours = messages.RequestHeader(request_api_key=1, request_api_version=12 if flexible else 4,
                                  correlation_id=77, client_id="kraftwire-client")
    wire = codec.encode(ours, 2 if flexible else 1)
    theirs = TheirHeader(request_api_key=1, request_api_version=ours.request_api_version, correlation_id=77,
                         client_id="kraftwire-client")
    assert bytes(theirs.encode(flexible=flexible)) == wire
