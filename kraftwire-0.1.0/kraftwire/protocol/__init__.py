"""Kafka wire protocol, schema-driven and sans-IO.

* :mod:`.schemas`      — the message declarations (data; partly generated from Kafka's JSON specs)
* :mod:`.wire_types`   — primitives (ints, varints, strings, bytes, uuid, records, tagged fields)
* :mod:`.messages`     — classes generated from the declarations; the api table (``api(key)``)
* :mod:`.codec`        — encode/decode any message at any version (see its docstring for the API)
* :mod:`.framing`      — size-prefixed frames, request/response headers, correlation ids
* :mod:`.api_versions` — the ApiVersions answer built from registered handlers (KIP-511 fallback)
"""
