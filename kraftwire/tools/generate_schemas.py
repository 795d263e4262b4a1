"""Regenerate the generated regions of ``kraftwire/protocol/schemas.py`` from Kafka's JSON specs.

Usage::

    python -m kraftwire.tools.generate_schemas [SPEC_DIR] [--all-specs DIR] [--metadata-records DIR]
        [--coordinator-records DIR] [--check]

Three regions: the messages (``SPEC_DIR``, default ``../shared/reference/kafka-message-specs`` relative to the
repository root, plus the ``FROM_ALL`` messages from ``--all-specs``, default
``../shared/reference/kafka-message-specs-all``) and the metadata records of ``__cluster_metadata`` (default
``../shared/reference/kafka-metadata-records``; kind ``metadata``, the api key is the record type), and the
coordinators' record keys and values (default ``../shared/reference/kafka-coordinator-records``; kind
``coordinator``).
Only facts are carried over: message and field names, types, version ranges, nullable/tagged/flexible
versions, tags, api keys and defaults. Comments and ``about`` prose are not copied. ``commonStructs`` are
inlined where they are used, so every declaration is self-contained.

The generated text sits between the BEGIN/END markers in schemas.py; the hand-declared additions
(Vote v2 ``PreVote``, kraftwire's own state records) live below the END marker and are never touched.
``--check`` exits 1 when the file on disk differs from what the specs produce (used by CI and a test).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SPEC_DIR = REPO.parent / "shared" / "reference" / "kafka-message-specs"
DEFAULT_METADATA_DIR = REPO.parent / "shared" / "reference" / "kafka-metadata-records"
DEFAULT_ALL_DIR = REPO.parent / "shared" / "reference" / "kafka-message-specs-all"
DEFAULT_COORDINATOR_DIR = REPO.parent / "shared" / "reference" / "kafka-coordinator-records"
#: messages kraftwire speaks that only the complete spec folder has (the curated one wins where both have a file)
FROM_ALL = (
    "AddOffsetsToTxnRequest", "AddOffsetsToTxnResponse", "AddPartitionsToTxnRequest", "AddPartitionsToTxnResponse",
    "AllocateProducerIdsRequest", "AllocateProducerIdsResponse", "AlterConfigsRequest", "AlterConfigsResponse",
    "AlterUserScramCredentialsRequest", "AlterUserScramCredentialsResponse", "CreateAclsRequest", "CreateAclsResponse",
    "DeleteAclsRequest", "DeleteAclsResponse", "DescribeAclsRequest", "DescribeAclsResponse",
    "DescribeUserScramCredentialsRequest", "DescribeUserScramCredentialsResponse",
    "DescribeTopicPartitionsRequest", "DescribeTopicPartitionsResponse",
    "AlterPartitionRequest", "AlterPartitionResponse", "BrokerHeartbeatRequest", "BrokerHeartbeatResponse",
    "BrokerRegistrationRequest", "BrokerRegistrationResponse", "CreatePartitionsRequest", "CreatePartitionsResponse",
    "ConsumerGroupDescribeRequest", "ConsumerGroupDescribeResponse", "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
    "CreateTopicsRequest", "CreateTopicsResponse", "DeleteGroupsRequest", "DeleteGroupsResponse",
    "DeleteRecordsRequest", "DeleteRecordsResponse", "DeleteTopicsRequest", "DeleteTopicsResponse",
    "AssignReplicasToDirsRequest", "AssignReplicasToDirsResponse",
    "DescribeConfigsRequest", "DescribeConfigsResponse", "DescribeLogDirsRequest", "DescribeLogDirsResponse",
    "DescribeGroupsRequest", "DescribeGroupsResponse", "ElectLeadersRequest", "ElectLeadersResponse",
    "DescribeProducersRequest", "DescribeProducersResponse",
    "DescribeTransactionsRequest", "DescribeTransactionsResponse", "EndTxnRequest", "EndTxnResponse",
    "IncrementalAlterConfigsRequest", "IncrementalAlterConfigsResponse", "ListGroupsRequest", "ListGroupsResponse",
    "ListTransactionsRequest", "ListTransactionsResponse",
    "OffsetDeleteRequest", "OffsetDeleteResponse", "OffsetForLeaderEpochRequest", "OffsetForLeaderEpochResponse",
    "SaslAuthenticateRequest", "SaslAuthenticateResponse",
    "SaslHandshakeRequest", "SaslHandshakeResponse", "UnregisterBrokerRequest", "UnregisterBrokerResponse",
    "TxnOffsetCommitRequest", "TxnOffsetCommitResponse",
    "UpdateFeaturesRequest", "UpdateFeaturesResponse", "WriteTxnMarkersRequest", "WriteTxnMarkersResponse",
)
SCHEMAS_PY = REPO / "kraftwire" / "protocol" / "schemas.py"
BEGIN = "# ---- BEGIN GENERATED (python -m kraftwire.tools.generate_schemas) ----\n"
END = "# ---- END GENERATED ----\n"
BEGIN_METADATA = "# ---- BEGIN GENERATED METADATA RECORDS (python -m kraftwire.tools.generate_schemas) ----\n"
END_METADATA = "# ---- END GENERATED METADATA RECORDS ----\n"
BEGIN_COORDINATOR = "# ---- BEGIN GENERATED COORDINATOR RECORDS (python -m kraftwire.tools.generate_schemas) ----\n"
END_COORDINATOR = "# ---- END GENERATED COORDINATOR RECORDS ----\n"

_PRIMITIVES = {"int8", "int16", "int32", "int64", "uint16", "uint32", "float64", "bool", "string", "bytes", "uuid", "records"}


def _strip_comments(text: str) -> str:
    return re.sub(r"^\s*//.*$", "", text, flags=re.M)


def load_spec(path: Path) -> dict:
    return json.loads(_strip_comments(path.read_text()))


def _default_literal(ftype: str, raw):
    base = ftype[2:] if ftype.startswith("[]") else ftype
    if raw == "null" or raw is None:  # JSON's null and the string "null" both mean a null default
        return "None"
    if ftype.startswith("[]"):
        return None  # arrays only ever default to empty or null
    if base == "bool":
        return "True" if str(raw).lower() == "true" else "False"
    if base in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        return str(int(str(raw), 0))
    if base == "float64":
        return repr(float(raw))
    if base == "string":
        return repr(str(raw))
    return None


def _field(f: dict, common: dict[str, dict], indent: int) -> str:
    pad = " " * indent
    ftype = f["type"]
    # a tagged field may leave out "versions": Kafka's generator then takes its tagged versions
    args = [repr(f["name"]), repr(ftype), repr(f.get("versions", f.get("taggedVersions")))]
    if "nullableVersions" in f:
        args.append(f"nullable={f['nullableVersions']!r}")
    if "tag" in f:
        args.append(f"tag={int(f['tag'])}")
        args.append(f"tagged={f.get('taggedVersions', f.get('versions'))!r}")
    if "flexibleVersions" in f:
        args.append(f"flexible={f['flexibleVersions']!r}")
    if "default" in f:
        lit = _default_literal(ftype, f["default"])
        if lit is not None:
            args.append(f"default={lit}")
    sub = f.get("fields")
    base = ftype[2:] if ftype.startswith("[]") else ftype
    if sub is None and base not in _PRIMITIVES:
        sub = common[base]["fields"]
    if sub is None:
        return f"{pad}F({', '.join(args)}),\n"
    inner = "".join(_field(s, common, indent + 4) for s in sub)
    return f"{pad}F({', '.join(args)}, fields=[\n{inner}{pad}]),\n"


def render_spec(spec: dict, kind: str | None = None) -> str:
    common = {c["name"]: c for c in spec.get("commonStructs", [])}
    key = spec.get("apiKey")
    head = (
        f"M({spec['name']!r}, {(kind or spec['type'])!r}, {key!r}, {spec['validVersions']!r}, "
        f"{spec['flexibleVersions']!r}, [\n"
    )
    body = "".join(_field(f, common, 4) for f in spec["fields"])
    return head + body + "])\n"


def spec_paths(spec_dir: Path, all_dir: Path | None = None) -> list[Path]:
    """Every spec of ``spec_dir``, plus the ``FROM_ALL`` ones of ``all_dir`` it lacks, sorted by file name."""
    paths = {p.name: p for p in spec_dir.glob("*.json")}
    if all_dir is not None:
        for name in FROM_ALL:
            paths.setdefault(f"{name}.json", all_dir / f"{name}.json")
    return [paths[n] for n in sorted(paths)]


def render(spec_dir: Path, all_dir: Path | None = None, begin: str = BEGIN, end: str = END,
           kind: str | None = None) -> str:
    parts = [begin]
    for path in spec_paths(spec_dir, all_dir):
        parts.append(render_spec(load_spec(path), kind))
    parts.append(end)
    return "".join(parts)


def render_metadata(spec_dir: Path) -> str:
    return render(spec_dir, None, BEGIN_METADATA, END_METADATA)


def render_coordinator(spec_dir: Path) -> str:
    """The keys and values of the coordinators' internal topics (``__consumer_offsets``, ``__transaction_state``):
    kind ``coordinator``; a key's version is its record type."""
    return render(spec_dir, None, BEGIN_COORDINATOR, END_COORDINATOR, kind="coordinator")


def splice(current: str, generated: str) -> str:
    """Replace the region ``generated`` is for (its first line names it) with ``generated``."""
    begin = generated[: generated.index("\n") + 1]
    end_marker = {BEGIN_METADATA: END_METADATA, BEGIN_COORDINATOR: END_COORDINATOR}.get(begin, END)
    start = current.index(begin)
    end = current.index(end_marker, start) + len(end_marker)
    return current[:start] + generated + current[end:]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    metadata_dir = DEFAULT_METADATA_DIR
    if "--metadata-records" in args:
        i = args.index("--metadata-records")
        if i + 1 >= len(args):
            print("--metadata-records needs a directory", file=sys.stderr)
            return 2
        metadata_dir = Path(args[i + 1])
        del args[i:i + 2]
    all_dir = DEFAULT_ALL_DIR
    if "--all-specs" in args:
        i = args.index("--all-specs")
        if i + 1 >= len(args):
            print("--all-specs needs a directory", file=sys.stderr)
            return 2
        all_dir = Path(args[i + 1])
        del args[i:i + 2]
    coordinator_dir = DEFAULT_COORDINATOR_DIR
    if "--coordinator-records" in args:
        i = args.index("--coordinator-records")
        if i + 1 >= len(args):
            print("--coordinator-records needs a directory", file=sys.stderr)
            return 2
        coordinator_dir = Path(args[i + 1])
        del args[i:i + 2]
    spec_dir = Path(args[0]) if args else DEFAULT_SPEC_DIR
    for d in (spec_dir, metadata_dir, all_dir, coordinator_dir):
        if not d.is_dir():
            print(f"spec directory not found: {d}", file=sys.stderr)
            return 2
    current = SCHEMAS_PY.read_text()
    updated = splice(splice(current, render(spec_dir, all_dir)), render_metadata(metadata_dir))
    updated = splice(updated, render_coordinator(coordinator_dir))
    if check:
        if updated != current:
            print(f"{SCHEMAS_PY} is out of date; run python -m kraftwire.tools.generate_schemas", file=sys.stderr)
            return 1
        return 0
    if updated != current:
        SCHEMAS_PY.write_text(updated)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
