"""The generated declarations are current with the JSON specs of the pinned Kafka release, read straight from its
jars as ``tests/kafka/fetch.sh`` fetches them (``kafka-clients``, ``kafka-raft``, ``kafka-metadata`` and the three
coordinator jars). A missing jar fails these tests, never skips them."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.kafka import kafka_libs
from kraftwire.protocol import messages, schemas, served
from kraftwire.protocol.messages import parse_versions
from kraftwire.tools import generate_schemas

REPO = Path(__file__).resolve().parents[2]
SCHEMAS_PY = REPO / "kraftwire" / "protocol" / "schemas.py"
STALE = "kraftwire/protocol/schemas.py is stale: run python -m kraftwire.tools.generate_schemas"


@pytest.fixture(scope="module")
def libs() -> Path:
    return Path(kafka_libs())


@pytest.fixture(scope="module")
def message_specs(libs) -> dict[str, dict]:
    return generate_schemas.message_specs(libs)


def _as_generated(spec: dict, kind: str | None = None) -> schemas.Message:
    """The declaration the generator writes for ``spec``, built without registering it."""
    build = {"F": schemas.F, "M": lambda name, kind, key, valid, flexible, fields: schemas.Message(
        name, kind, key, valid, flexible, tuple(fields))}
    return eval(generate_schemas.render_spec(spec, kind), build)


def _at(fields: tuple, version: int) -> tuple:
    """The fields present at ``version``, their structs' fields likewise."""
    out = []
    for f in fields:
        lo, hi = parse_versions(f.versions)
        if lo <= version <= hi:
            out.append(f if f.fields is None else f._replace(fields=_at(f.fields, version)))
    return tuple(out)


def test_generated_region_is_current(libs):
    current = SCHEMAS_PY.read_text()
    assert generate_schemas.splice(current, generate_schemas.regions(libs)[0]) == current, STALE


def test_generated_metadata_records_are_current(libs):
    current = SCHEMAS_PY.read_text()
    assert generate_schemas.splice(current, generate_schemas.regions(libs)[1]) == current, STALE


def test_generated_coordinator_records_are_current(libs):
    current = SCHEMAS_PY.read_text()
    assert generate_schemas.splice(current, generate_schemas.regions(libs)[2]) == current, STALE


def test_the_check_mode_reads_the_jars(libs):
    assert generate_schemas.main(["--libs", str(libs), "--check"]) == 0
    assert generate_schemas.main(["--libs", str(libs.parent / "no-such-libs"), "--check"]) == 2


def test_every_kafka_message_is_generated_from_a_spec(message_specs):
    """No Kafka message is declared by hand: each one kraftwire knows comes from the release's specs (only
    kraftwire's own records are written by hand), and every API kraftwire serves is among the generated ones."""
    for name, decl in schemas.MESSAGES.items():
        if decl.kind in ("request", "response", "header", "data") and not decl.kraftwire:
            assert name in message_specs, f"{name} is declared by hand"
    assert set(served.SERVED) <= set(generate_schemas.APIS)
    assert set(schemas.RETAINED_FROM) <= set(generate_schemas.APIS)


def test_every_spec_is_declared_with_its_versions(message_specs):
    """Each declaration is the spec's: kind, api key, flexible versions, field names, and at every version the
    release has, exactly the spec's fields. Only the APIs of ``RETAINED_FROM`` reach lower (versions Kafka 4.0
    removed that kraftwire still serves), with the same highest version."""
    assert len(message_specs) == len(generate_schemas.declared_messages()) >= 130
    for name, spec in message_specs.items():
        decl = schemas.MESSAGES[name]
        assert decl.kind == spec["type"] and decl.api_key == spec.get("apiKey"), name
        assert decl.flexible == spec["flexibleVersions"], name
        lo, hi = parse_versions(spec["validVersions"])
        api = name.removesuffix("Request").removesuffix("Response")
        if api in schemas.RETAINED_FROM:
            assert schemas.RETAINED_FROM[api] < lo, f"{api}: Kafka has versions from {lo}, nothing to retain"
            assert decl.valid == f"{schemas.RETAINED_FROM[api]}-{hi}", name
        else:
            assert decl.valid == spec["validVersions"], name
        generated = _as_generated(spec)
        for version in range(lo, hi + 1):
            assert _at(decl.fields, version) == _at(generated.fields, version), f"{name} v{version}"
        cls = messages.get(name)
        assert [f.name for f in cls._info.fields][: len(spec["fields"])] == [f["name"] for f in spec["fields"]]


def test_every_metadata_record_spec_is_declared_with_its_type_and_versions(libs):
    specs = generate_schemas.metadata_specs(libs)
    assert len(specs) >= 27
    for spec in specs.values():
        decl = schemas.MESSAGES[spec["name"]]
        assert (decl.kind, decl.api_key, decl.valid, decl.flexible) == (
            "metadata", spec["apiKey"], spec["validVersions"], spec["flexibleVersions"]), spec["name"]
        cls = messages.get(spec["name"])
        assert [f.name for f in cls._info.fields] == [f["name"] for f in spec["fields"]]


def test_every_coordinator_record_spec_is_declared_with_its_type_and_versions(libs):
    specs = generate_schemas.coordinator_specs(libs)
    assert {"TransactionLogKey", "OffsetCommitValue", "ConsumerGroupMetadataKey", "ShareSnapshotKey"} <= set(specs)
    for spec in specs.values():
        decl = schemas.MESSAGES[spec["name"]]
        assert (decl.kind, decl.api_key, decl.valid, decl.flexible) == (
            "coordinator", spec["apiKey"], spec["validVersions"], spec["flexibleVersions"]), spec["name"]
        cls = messages.get(spec["name"])
        assert [f.name for f in cls._info.fields] == [f["name"] for f in spec["fields"]]


def test_a_missing_jar_is_an_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="kafka-clients-.*jar is missing"):
        generate_schemas.message_specs(tmp_path)


def test_no_prose_is_copied():
    text = SCHEMAS_PY.read_text()
    for region in text.split("BEGIN GENERATED")[1:]:
        assert "about" not in region.split("END GENERATED")[0]
    assert "Licensed to the Apache" not in text
