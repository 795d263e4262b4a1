"""The generated declarations are current with the reference JSON specs. Outside CI a checkout without ``shared/``
beside it skips these; in CI (``CI`` set) a missing folder is a failure, never a skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kraftwire.protocol import messages, schemas
from kraftwire.tools import generate_schemas

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO.parent / "shared" / "reference" / "kafka-message-specs"
METADATA_DIR = REPO.parent / "shared" / "reference" / "kafka-metadata-records"
ALL_DIR = REPO.parent / "shared" / "reference" / "kafka-message-specs-all"
COORDINATOR_DIR = REPO.parent / "shared" / "reference" / "kafka-coordinator-records"
SCHEMAS_PY = REPO / "kraftwire" / "protocol" / "schemas.py"


def _folder(path: Path, what: str) -> Path:
    if not path.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{what} not present at {path}: CI runs with shared/ beside the checkout")
        pytest.skip(f"{what} not present at {path}")
    return path


@pytest.fixture(scope="module")
def spec_dir() -> Path:
    return _folder(SPEC_DIR, "reference specs")


@pytest.fixture(scope="module")
def metadata_dir() -> Path:
    return _folder(METADATA_DIR, "reference metadata record specs")


@pytest.fixture(scope="module")
def all_dir() -> Path:
    return _folder(ALL_DIR, "reference specs (all requests)")


def test_generated_region_is_current(spec_dir, all_dir):
    current = SCHEMAS_PY.read_text()
    assert generate_schemas.splice(current, generate_schemas.render(spec_dir, all_dir)) == current, (
        "kraftwire/protocol/schemas.py is stale: run python -m kraftwire.tools.generate_schemas")


def test_every_kafka_message_is_generated_from_a_spec(spec_dir, all_dir):
    """No Kafka message is declared by hand: each one kraftwire knows comes from the curated folder or, where that
    has no file, from the complete one (only kraftwire's own records, Vote v2's and Fetch v18's fields are written by hand)."""
    generated = {p.stem for p in generate_schemas.spec_paths(spec_dir, all_dir)}
    for name, decl in schemas.MESSAGES.items():
        if decl.kind in ("request", "response", "header", "data") and not decl.kraftwire:
            assert name in generated, f"{name} is declared by hand"
    for name in generate_schemas.FROM_ALL:
        assert not (spec_dir / f"{name}.json").exists(), f"{name} is in the curated folder: drop it from FROM_ALL"
        spec = generate_schemas.load_spec(all_dir / f"{name}.json")
        assert schemas.MESSAGES[name].valid == spec["validVersions"]


def test_every_reference_spec_is_declared_with_its_versions(spec_dir):
    specs = sorted(spec_dir.glob("*.json"))
    assert len(specs) >= 52
    for path in specs:
        spec = generate_schemas.load_spec(path)
        decl = schemas.MESSAGES[spec["name"]]
        assert decl.kind == spec["type"] and decl.api_key == spec.get("apiKey")
        assert decl.flexible == spec["flexibleVersions"]
        if spec["name"] not in ("VoteRequest", "VoteResponse", "FetchRequest", "FetchResponse"):
            # Vote v2 (KIP-996) and Fetch v18 (KIP-1166) are hand-declared on top
            assert decl.valid == spec["validVersions"], spec["name"]
        cls = messages.get(spec["name"])
        assert [f.name for f in cls._info.fields][: len(spec["fields"])] == [f["name"] for f in spec["fields"]]


def test_generated_metadata_records_are_current(metadata_dir):
    current = SCHEMAS_PY.read_text()
    assert generate_schemas.splice(current, generate_schemas.render_metadata(metadata_dir)) == current, (
        "kraftwire/protocol/schemas.py is stale: run python -m kraftwire.tools.generate_schemas")


def test_every_metadata_record_spec_is_declared_with_its_type_and_versions(metadata_dir):
    specs = sorted(metadata_dir.glob("*.json"))
    assert len(specs) >= 25
    for path in specs:
        spec = generate_schemas.load_spec(path)
        decl = schemas.MESSAGES[spec["name"]]
        assert (decl.kind, decl.api_key, decl.valid, decl.flexible) == (
            "metadata", spec["apiKey"], spec["validVersions"], spec["flexibleVersions"]), spec["name"]
        cls = messages.get(spec["name"])
        assert [f.name for f in cls._info.fields] == [f["name"] for f in spec["fields"]]


def test_no_prose_is_copied():
    text = SCHEMAS_PY.read_text()
    for region in text.split("BEGIN GENERATED")[1:]:
        assert "about" not in region.split("END GENERATED")[0]
    assert "Licensed to the Apache" not in text


def test_generated_coordinator_records_are_current():
    coordinator_dir = _folder(COORDINATOR_DIR, "reference coordinator record specs")
    current = SCHEMAS_PY.read_text()
    assert generate_schemas.splice(current, generate_schemas.render_coordinator(coordinator_dir)) == current, (
        "kraftwire/protocol/schemas.py is stale: run python -m kraftwire.tools.generate_schemas")
    for path in sorted(coordinator_dir.glob("*.json")):
        spec = generate_schemas.load_spec(path)
        decl = schemas.MESSAGES[spec["name"]]
        assert decl.kind == "coordinator" and decl.valid == spec["validVersions"], spec["name"]
