"""Regenerate the generated regions of ``kraftwire/protocol/schemas.py`` from the pinned Kafka release's JSON specs.

Usage::

    python -m kraftwire.tools.generate_schemas [--libs DIR] [--check]

The specs are read straight from Kafka's jars (``tests/kafka/fetch.sh`` puts them in
``~/.cache/kraftwire/kafka-<version>/libs``; ``--libs`` names another directory), so nothing outside the
repository is needed. Three regions:

* the messages kraftwire speaks (``APIS``' requests and responses and ``OTHERS``; ``kafka-clients``'
  ``common/message``, plus ``QuorumStateData`` of ``kafka-raft``);
* every metadata record of ``__cluster_metadata`` (``kafka-metadata``' ``common/metadata``; kind ``metadata``, the
  api key is the record type);
* every record key and value of the coordinators' internal topics (``kafka-group-coordinator``,
  ``kafka-transaction-coordinator``, ``kafka-share-coordinator``; kind ``coordinator``, the api key is the record
  type).

Only facts are carried over: message and field names, types, version ranges, nullable/tagged/flexible
versions, tags, api keys and defaults. Comments and ``about`` prose are not copied. ``commonStructs`` are
inlined where they are used, so every declaration is self-contained.

The generated text sits between the BEGIN/END markers in schemas.py; the hand-declared additions
(the versions Kafka 4.0 removed that kraftwire still serves, kraftwire's own state records) live below the END
marker and are never touched. ``--check`` exits 1 when the file on disk differs from what the specs produce.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import zipfile
from pathlib import Path

from kraftwire.kafka_configs import KAFKA_VERSION
from kraftwire.tools.generate_configs import default_libs

REPO = Path(__file__).resolve().parents[2]
#: the jars (artifact names) and the folder inside them that hold each region's specs
MESSAGE_JARS = (("kafka-clients", "common/message/"), ("kafka-raft", "common/message/"))
METADATA_JARS = (("kafka-metadata", "common/metadata/"),)
COORDINATOR_JARS = (("kafka-group-coordinator", "common/message/"),
                    ("kafka-transaction-coordinator", "common/message/"),
                    ("kafka-share-coordinator", "common/message/"))
#: the APIs kraftwire speaks: each one's request and response is declared
APIS = (
    "AddOffsetsToTxn", "AddPartitionsToTxn", "AddRaftVoter", "AllocateProducerIds", "AlterClientQuotas",
    "AlterConfigs", "AlterPartition", "AlterPartitionReassignments", "AlterReplicaLogDirs", "AlterShareGroupOffsets",
    "AlterUserScramCredentials", "ApiVersions", "AssignReplicasToDirs", "BeginQuorumEpoch", "BrokerHeartbeat",
    "BrokerRegistration", "ConsumerGroupDescribe", "ConsumerGroupHeartbeat", "ControllerRegistration", "CreateAcls",
    "CreatePartitions", "CreateTopics", "DeleteAcls", "DeleteGroups", "DeleteRecords", "DeleteShareGroupOffsets",
    "DeleteShareGroupState", "DeleteTopics", "DescribeAcls", "DescribeClientQuotas", "DescribeCluster",
    "DescribeConfigs", "DescribeGroups", "DescribeLogDirs", "DescribeProducers", "DescribeQuorum",
    "DescribeShareGroupOffsets", "DescribeTopicPartitions", "DescribeTransactions", "DescribeUserScramCredentials",
    "ElectLeaders", "EndQuorumEpoch", "EndTxn", "Envelope", "Fetch", "FetchSnapshot", "FindCoordinator", "Heartbeat",
    "IncrementalAlterConfigs", "InitProducerId", "InitializeShareGroupState", "JoinGroup", "LeaveGroup", "ListGroups",
    "ListOffsets", "ListPartitionReassignments", "ListTransactions", "Metadata", "OffsetCommit", "OffsetDelete",
    "OffsetFetch", "OffsetForLeaderEpoch", "Produce", "ReadShareGroupState", "ReadShareGroupStateSummary",
    "RemoveRaftVoter", "SaslAuthenticate", "SaslHandshake", "ShareAcknowledge", "ShareFetch", "ShareGroupDescribe",
    "ShareGroupHeartbeat", "SyncGroup", "TxnOffsetCommit", "UnregisterBroker", "UnregisterController",
    "UpdateFeatures", "UpdateRaftVoter", "Vote", "WriteShareGroupState", "WriteTxnMarkers",
)
#: the other messages kraftwire speaks: the headers, the KRaft control-record values, the quorum-state file
OTHERS = ("DefaultPrincipalData", "KRaftVersionRecord", "LeaderChangeMessage", "QuorumStateData", "RequestHeader",
          "ResponseHeader", "SnapshotFooterRecord", "SnapshotHeaderRecord", "VotersRecord")
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


def parse_spec(text: str) -> dict:
    return json.loads(_strip_comments(text))


def read_specs(libs: Path, jars: tuple[tuple[str, str], ...]) -> dict[str, dict]:
    """Every spec of ``jars`` (artifact, folder) in ``libs``, by file name without ``.json``, in file-name order.
    A missing jar, or one spec name in two jars, is an error, never an empty region."""
    specs: dict[str, dict] = {}
    for artifact, folder in jars:
        jar = Path(libs) / f"{artifact}-{KAFKA_VERSION}.jar"
        if not jar.is_file():
            raise FileNotFoundError(f"{jar} is missing: tests/kafka/fetch.sh fetches Kafka {KAFKA_VERSION}'s jars")
        with zipfile.ZipFile(jar) as z:
            for entry in z.namelist():
                if not entry.startswith(folder) or not entry.endswith(".json"):
                    continue
                stem = entry[len(folder):-len(".json")]
                if "/" in stem:
                    continue
                if stem in specs:
                    raise ValueError(f"{stem}.json is in two of Kafka's jars ({artifact} is the second)")
                specs[stem] = parse_spec(z.read(entry).decode("utf-8"))
    if not specs:
        raise ValueError(f"no specs under {', '.join(f'{a}:{f}' for a, f in jars)} in {libs}")
    return dict(sorted(specs.items()))


def declared_messages() -> list[str]:
    """The names of the messages kraftwire declares from ``kafka-clients`` and ``kafka-raft``, sorted."""
    return sorted([f"{api}{side}" for api in APIS for side in ("Request", "Response")] + list(OTHERS))


def message_specs(libs: Path) -> dict[str, dict]:
    """The specs of ``declared_messages()``; one the release does not have is an error."""
    everything = read_specs(libs, MESSAGE_JARS)
    missing = [name for name in declared_messages() if name not in everything]
    if missing:
        raise KeyError(f"not among Kafka {KAFKA_VERSION}'s message specs: {', '.join(missing)}")
    return {name: everything[name] for name in declared_messages()}


def metadata_specs(libs: Path) -> dict[str, dict]:
    return read_specs(libs, METADATA_JARS)


def coordinator_specs(libs: Path) -> dict[str, dict]:
    return read_specs(libs, COORDINATOR_JARS)


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


def render(specs: dict[str, dict], begin: str = BEGIN, end: str = END, kind: str | None = None) -> str:
    return "".join([begin, *(render_spec(spec, kind) for spec in specs.values()), end])


def regions(libs: Path) -> list[str]:
    """The three generated regions from the jars in ``libs``: the messages, the metadata records (kind
    ``metadata``), the coordinators' record keys and values (kind ``coordinator``; the api key is the record
    type)."""
    return [render(message_specs(libs)),
            render(metadata_specs(libs), BEGIN_METADATA, END_METADATA),
            render(coordinator_specs(libs), BEGIN_COORDINATOR, END_COORDINATOR, kind="coordinator")]


def splice(current: str, generated: str) -> str:
    """Replace the region ``generated`` is for (its first line names it) with ``generated``."""
    begin = generated[: generated.index("\n") + 1]
    end_marker = {BEGIN_METADATA: END_METADATA, BEGIN_COORDINATOR: END_COORDINATOR}.get(begin, END)
    start = current.index(begin)
    end = current.index(end_marker, start) + len(end_marker)
    return current[:start] + generated + current[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kraftwire.tools.generate_schemas", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--libs", type=Path, default=None, help="the directory of Kafka's jars")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = parser.parse_args(argv)
    try:
        generated = regions(args.libs or default_libs())
    except (OSError, KeyError, ValueError) as exc:
        print(f"generate_schemas: {exc}", file=sys.stderr)
        return 2
    current = SCHEMAS_PY.read_text()
    updated = current
    for region in generated:
        updated = splice(updated, region)
    if args.check:
        if updated != current:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), updated.splitlines(True),
                                                       "schemas.py", f"Kafka {KAFKA_VERSION}'s specs"))
            print(f"{SCHEMAS_PY} is out of date; run python -m kraftwire.tools.generate_schemas", file=sys.stderr)
            return 1
        return 0
    if updated != current:
        SCHEMAS_PY.write_text(updated)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
