"""The ApiVersions answer, built from the handlers a node has registered — never from the schema list.

A node advertises exactly what it can serve: ``registered`` maps api key -> (min, max) of the handlers
installed for its roles. Two Kafka rules are applied here:

* Produce is advertised from min version 0 whatever its handler accepts: librdkafka only enables
  compressed produce when it sees min 0 (KAFKA-18659); the handler rejects the old versions itself.
* KIP-511 fallback: a request for an ApiVersions version the node does not support gets error 35
  (UNSUPPORTED_VERSION) in a **v0-format** body listing ApiVersions' own range only, as Kafka 4.4 answers (the
  conformance run's ApiVersions-v4-unknown-version), so the client can retry at a version both sides know. The
  response header is v0 in every case (see framing).
* KAFKA-17492: below v4 the supported features leave out those whose range starts at 0 (kraft.version), which
  older clients cannot read.
* KIP-511 names: from v3 the client's software name and version must match ``SOFTWARE_PATTERN``; otherwise the
  answer is INVALID_REQUEST with no api keys, at the request's version (Kafka's ``ApiVersionsRequest.isValid``).
* KIP-1242 (v5): a client names the cluster and node it means to reach, both or neither (one alone is
  INVALID_REQUEST, ``isValid``); a broker listener (``identity`` given: its cluster id and node id) that is not
  that node answers REBOOTSTRAP_REQUIRED with no api keys, so the client bootstraps again (Kafka's
  ``KafkaApis.handleApiVersionsRequest``); a controller listener does not check (``ControllerApis``).

Public API::

    advertised_ranges(registered) -> dict[int, tuple[int, int]]
    api_versions_response(registered, request_version, *, throttle_time_ms=0, features=None, request=None,
                          identity=None) -> (ApiVersionsResponse, body_version)
    encode_api_versions_response(registered, request_version, correlation_id, features, request, identity)
        -> list  # framed
    answer_frame(frame, registered, features, identity) -> list  # the framed answer to a raw ApiVersions frame
"""

from __future__ import annotations

import re
import struct
from typing import Mapping, NamedTuple

from kraftwire.error_codes import INVALID_REQUEST, REBOOTSTRAP_REQUIRED, UNSUPPORTED_VERSION
from kraftwire.errors import KraftwireError, ProtocolError
from kraftwire.java_order import hashmap_capacity, hashmap_order, string_hash
from kraftwire.protocol.framing import decode_request, encode_response
from kraftwire.protocol.messages import ApiVersionsResponse

API_VERSIONS_KEY = 18
PRODUCE_KEY = 0
#: what a client software name and version may look like (KIP-511)
_HEADER = struct.Struct(">hi")  # request api version and correlation id, after the api key
SOFTWARE_PATTERN = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def advertised_ranges(registered: Mapping[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """The (min, max) per api key the node advertises, sorted by key, Produce from min 0."""
    out: dict[int, tuple[int, int]] = {}
    for key in sorted(registered):
        lo, hi = registered[key]
        if not (0 <= lo <= hi <= 0x7FFF) or not (0 <= key <= 0x7FFF):
            raise ProtocolError(f"bad registered range for api key {key}: ({lo}, {hi})")
        if key == PRODUCE_KEY:
            lo = 0
        out[key] = (lo, hi)
    return out


class Features(NamedTuple):
    """What a KRaft node's ApiVersions v3+ carries (KIP-584): the feature ranges it supports, and the finalized
    levels of its metadata image with that image's offset as their epoch."""

    supported: Mapping[str, tuple[int, int]]
    finalized: Mapping[str, int]
    epoch: int


class Identity(NamedTuple):
    """Who a broker listener is, for KIP-1242's check: its cluster id and node id."""

    cluster_id: str
    node_id: int


#: the version from which a client names the cluster and node it means to reach (KIP-1242)
TARGET_SINCE = 5


def valid_request(request, version: int) -> bool:
    """Kafka's ``ApiVersionsRequest.isValid``: from v5 the cluster id and node id come both or neither; from v3 both
    software fields match the pattern."""
    if version >= TARGET_SINCE and (request.cluster_id is None) != (request.node_id == -1):
        return False
    return version < 3 or (SOFTWARE_PATTERN.fullmatch(request.client_software_name) is not None
                           and SOFTWARE_PATTERN.fullmatch(request.client_software_version) is not None)


def wrong_target(request, version: int, identity: Identity | None) -> bool:
    """KIP-1242: the v5+ ``request`` names a cluster, and this broker listener (``identity``) is not that cluster's
    node it names (a controller listener, ``identity`` None, never checks)."""
    return (identity is not None and version >= TARGET_SINCE and request.cluster_id is not None
            and (request.cluster_id != identity.cluster_id or request.node_id != identity.node_id))


METADATA_VERSION = "metadata.version"  # the feature Kafka's FinalizedFeatures keeps apart and lists last


def finalized_order(finalized: Mapping[str, int]) -> list[str]:
    """The finalized features' names in the order Kafka's broker lists them: a copy of its image's map of the
    features other than metadata.version (a ``HashMap`` sized for them), with metadata.version put last
    (``FinalizedFeatures``), iterated by bucket."""
    others = sorted(name for name in finalized if name != METADATA_VERSION)
    capacity = hashmap_capacity(len(others), copied=True)
    if len(others) + 1 > capacity * 3 // 4:  # the put of metadata.version resizes the copy
        capacity *= 2
    names = others + [METADATA_VERSION] if METADATA_VERSION in finalized else others
    return hashmap_order(names, string_hash, capacity)


def api_versions_response(registered: Mapping[int, tuple[int, int]], request_version: int, *,
                          throttle_time_ms: int = 0, features: Features | None = None, request=None,
                          identity: Identity | None = None) -> tuple[ApiVersionsResponse, int]:
    """Return ``(response, version to encode the body at)``.

    ``request_version`` outside the registered ApiVersions range (or ApiVersions not registered at all)
    yields error 35, ApiVersions' own range (if any) and body version 0; a ``request`` that is not valid
    (``valid_request``) error 42 and no api keys; one meant for another node than ``identity`` (``wrong_target``)
    error 129 and no api keys; otherwise error 0 at the request's own version, with ``features`` in the tagged fields
    from v3.
    """
    ranges = advertised_ranges(registered)
    keys = [ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in ranges.items()]
    own = ranges.get(API_VERSIONS_KEY)
    if own is None or not own[0] <= request_version <= own[1]:
        return ApiVersionsResponse(error_code=UNSUPPORTED_VERSION,
                                   api_keys=[k for k in keys if k.api_key == API_VERSIONS_KEY]), 0
    if request is not None and not valid_request(request, request_version):
        return ApiVersionsResponse(error_code=INVALID_REQUEST, api_keys=[], throttle_time_ms=throttle_time_ms), \
            request_version
    if request is not None and wrong_target(request, request_version, identity):
        return ApiVersionsResponse(error_code=REBOOTSTRAP_REQUIRED, api_keys=[],
                                   throttle_time_ms=throttle_time_ms), request_version
    body = ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=throttle_time_ms)
    if features is not None and request_version >= 3:
        R = ApiVersionsResponse
        # below v4 a feature whose range starts at 0 is left out: older clients cannot read it (KAFKA-17492); in
        # the order of Kafka's HashMap of them
        body.supported_features = [R.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
                                   for n in hashmap_order(features.supported, string_hash)
                                   for lo, hi in [features.supported[n]] if request_version >= 4 or lo != 0]
        body.finalized_features = [R.FinalizedFeatureKey(name=n, max_version_level=features.finalized[n],
                                                         min_version_level=features.finalized[n])
                                   for n in finalized_order(features.finalized)]
        body.finalized_features_epoch = features.epoch
    return body, request_version


def encode_api_versions_response(registered: Mapping[int, tuple[int, int]], request_version: int,
                                 correlation_id: int, features: Features | None = None, request=None,
                                 identity: Identity | None = None, throttle_time_ms: int = 0) -> list:
    """The whole framed response (header v0) as a chunk list."""
    body, version = api_versions_response(registered, request_version, features=features, request=request,
                                          identity=identity, throttle_time_ms=throttle_time_ms)
    return encode_response(body, version, correlation_id)


def answer_frame(frame: bytes, registered: Mapping[int, tuple[int, int]], features: Features | None = None,
                 identity: Identity | None = None, throttle_time_ms: int = 0) -> list:
    """The framed answer to the ApiVersions request ``frame`` (a listener answering before its dispatcher: a role's
    listener, a SASL listener before login). Its body is read when its version is served, for the software-name
    check; one that does not decode is answered without that check."""
    version, correlation_id = _HEADER.unpack_from(frame, 2)
    request = None
    own = registered.get(API_VERSIONS_KEY)
    if own is not None and own[0] <= version <= own[1]:
        try:
            request = decode_request(frame).body
        except (KraftwireError, ValueError):
            request = None
    return encode_api_versions_response(registered, version, correlation_id, features, request, identity,
                                        throttle_time_ms)
