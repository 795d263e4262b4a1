"""``kraftwire dump-log --files F [F ...] [--json] [--deep-iteration] [--print-data-log] [--offsets-decoder |
--transaction-log-decoder | --cluster-metadata-decoder]``: like ``kafka-dump-log.sh`` for segments (``.log``),
snapshots (``.checkpoint``), indexes (``.index``, ``.timeindex``), transaction indexes (``.txnindex``: one
``version: 0 producerId: P firstOffset: F lastOffset: L lastStableOffset: S`` line per aborted transaction) and
producer snapshots (``.snapshot``: one ``producerId: ...`` line per producer, as Kafka's tool prints them).

Text output, per batch (Kafka's field names and order)::

    baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1
    partitionLeaderEpoch: 1 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty
    position: 0 CreateTime: 1700000000002 size: 120 magic: 2 compresscodec: none crc: 123 isvalid: true

(one line; ``deleteHorizonMs: OptionalLong[<ms>]`` when the log cleaner stamped a horizon), and with
``--deep-iteration`` one ``| offset: ...`` line per record (its ``sequence`` and ``headerKeys: [a,b]``); control
records are decoded (transaction markers as ``endTxnMarker: COMMIT coordinatorEpoch: N``, LeaderChange,
SnapshotHeader/Footer, KRaftVersion, Voters). ``--print-data-log`` (``--print-records``, kraftwire's older name)
adds each data record's ``key: ...`` and ``payload: ...`` as ``kraftwire.tools.dump_log_parsers`` reads them: text,
or with ``--offsets-decoder`` / ``--transaction-log-decoder`` the coordinators' records as Kafka's decoders print
them (each decoder implies ``--print-data-log``, which implies ``--deep-iteration``). ``--cluster-metadata-decoder`` prints every data
record as Kafka's tool does, ``payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":...,"topicId":...}}``
(in ``--json``: a ``metadata`` object per record). ``--json`` prints one JSON object per batch with the
keys ``base_offset, last_offset, partition_leader_epoch, crc, crc_valid, is_control, compression, record_count,
size_in_bytes, position`` (+ ``records`` with ``--print-records``: ``offset, timestamp, key_size, value_size,
headers`` and either ``control_type`` + ``control`` or ``key``/``value`` as base64). A corrupt or torn tail is
reported (a line, or an object with ``error``), never a traceback; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import struct
import sys
from typing import Any, Iterator

from kraftwire.errors import CorruptRecordError
from kraftwire.metadata import records as metadata_records
from kraftwire.log.segment import TXN_INDEX_SUFFIX
from kraftwire.metadata.records import MetadataRecordError
from kraftwire.replica import producer_snapshot
from kraftwire.replica.transactions import decode_txn_index
from kraftwire.records import CONTROL_TYPE_NAMES, parse_control_key, read_batches, validate_batches
from kraftwire.snapshot.paths import parse_snapshot_path

__all__ = ["add_arguments", "run", "dump_file", "decode_control"]

# Control record type -> the protocol message holding its value (Kafka's types 2-6, written at version 0).
_CONTROL_MESSAGES = {
    2: ("LeaderChange", "LeaderChangeMessage"),
    3: ("SnapshotHeader", "SnapshotHeaderRecord"),
    4: ("SnapshotFooter", "SnapshotFooterRecord"),
    5: ("KRaftVersion", "KRaftVersionRecord"),
    6: ("KRaftVoters", "VotersRecord"),
}

_INDEX_ENTRY = struct.Struct(">ii")
_TIME_INDEX_ENTRY = struct.Struct(">qi")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--files", nargs="+", required=True, metavar="FILE",
                        help="segment (.log), snapshot (.checkpoint), or index (.index/.timeindex) files")
    parser.add_argument("--json", action="store_true", help="one JSON object per batch (snake_case keys)")
    parser.add_argument("--deep-iteration", action="store_true", help="print every record (not its content)")
    parser.add_argument("--print-data-log", "--print-records", dest="print_records", action="store_true",
                        help="print every record with its key and payload")
    parser.add_argument("--offsets-decoder", action="store_true",
                        help="decode the records as __consumer_offsets records (implies --print-data-log)")
    parser.add_argument("--transaction-log-decoder", action="store_true",
                        help="decode the records as __transaction_state records (implies --print-data-log)")
    parser.add_argument("--cluster-metadata-decoder", action="store_true",
                        help="decode data records as Kafka metadata records (type, version, data as JSON; implies "
                        "--print-records); control records are always decoded")


def run(args: argparse.Namespace) -> int:
    from kraftwire.tools import dump_log_parsers

    status = 0
    out = sys.stdout
    parser = (dump_log_parsers.offsets if args.offsets_decoder else
              dump_log_parsers.transaction_log if args.transaction_log_decoder else None)
    for path in args.files:
        try:
            for line in dump_file(path, as_json=args.json, print_records=args.print_records or parser is not None,
                                  metadata_decoder=args.cluster_metadata_decoder, deep=args.deep_iteration,
                                  parser=parser):
                if line.startswith("\0error"):
                    status = 1
                    line = line[len("\0error"):]
                out.write(line + "\n")
        except BrokenPipeError:
            raise  # the reader went away (| head): kraftwire.cli ends quietly, as Kafka's tool does
        except OSError as exc:
            print(f"kraftwire dump-log: cannot read {path}: {exc}", file=sys.stderr)
            status = 1
    out.flush()
    return status


def _to_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _message_plain(msg: Any, version: int) -> Any:
    """A decoded protocol message as plain data with only the fields present at ``version``, keyed by Kafka's
    field names in lowerCamel (as Kafka's JSON converters print them); UUIDs in Kafka's base64 form."""
    import uuid

    from kraftwire.ids import uuid_to_base64

    info = getattr(msg, "_info", None)
    if info is None:
        if isinstance(msg, list):
            return [_message_plain(x, version) for x in msg]
        if isinstance(msg, uuid.UUID):
            return uuid_to_base64(msg)
        return _to_jsonable(msg)
    out = {}
    for f in info.fields:
        if f.present(version):
            out[f.name[:1].lower() + f.name[1:]] = _message_plain(getattr(msg, f.attr), version)
    return out


def decode_control(key: bytes | None, value: bytes | None) -> tuple[str, Any]:
    """(type name, decoded value as plain data) of a control record; unknown or undecodable values come back as
    ``{"raw": <base64>}``."""
    _version, ctype = parse_control_key(key)
    try:  # the protocol engineer's decoder, when it exists
        from kraftwire.records.control import decode_control_record  # type: ignore

        decoded = decode_control_record(key, value)
        if isinstance(decoded, tuple):  # (type, message)
            decoded = decoded[1]
        name = _CONTROL_MESSAGES[ctype][0] if ctype in _CONTROL_MESSAGES else CONTROL_TYPE_NAMES.get(ctype, f"UNKNOWN({ctype})")
        if getattr(decoded, "_info", None) is not None:
            return name, _message_plain(decoded, 0)
    except Exception:
        pass
    spec = _CONTROL_MESSAGES.get(ctype)
    if spec is not None and value is not None:
        try:
            from kraftwire.protocol import codec

            msg = codec.decode(spec[1], value, 0, exact=False)
            return spec[0], _message_plain(msg, 0)
        except Exception:
            pass
    name = spec[0] if spec else CONTROL_TYPE_NAMES.get(ctype, f"UNKNOWN({ctype})")
    return name, {"raw": _to_jsonable(value)}


def _crc_valid(batch_bytes: bytes | memoryview) -> bool:
    try:
        res = validate_batches(batch_bytes, check_records=False, stop_at_corruption=True)
    except CorruptRecordError:
        return False
    return res.error is None and res.batch_count == 1


def decode_metadata(value) -> dict:
    """A data record's value as Kafka's metadata decoder prints it: ``{"type", "version", "data"}``; a value that is
    no metadata record gives ``{"error": reason}``."""
    if value is None:
        return {"error": "null value (a metadata record has one)"}
    try:
        record, version = metadata_records.decode(value)
    except MetadataRecordError as exc:
        return {"error": str(exc)}
    return {"type": metadata_records.type_name(type(record)), "version": version,
            "data": _message_plain(record, version)}


def _record_objects(batch, metadata_decoder: bool = False) -> tuple[list[dict], str | None]:
    out: list[dict] = []
    try:
        for r in batch:
            entry: dict[str, Any] = {
                "offset": r.offset,
                "sequence": _sequence(batch, r.offset),
                "timestamp": r.timestamp,
                "key_size": -1 if r.key is None else len(r.key),
                "value_size": -1 if r.value is None else len(r.value),
                "headers": [[h[0], _to_jsonable(h[1])] for h in r.headers],
            }
            if batch.is_control:
                name, decoded = decode_control(r.key, r.value)
                entry["control_type"] = name
                entry["control"] = decoded
            else:
                entry["key"] = _to_jsonable(r.key)
                entry["value"] = _to_jsonable(r.value)
                if metadata_decoder:
                    entry["metadata"] = decode_metadata(r.value)
            out.append(entry)
    except CorruptRecordError as exc:
        return out, f"corrupt record at byte {exc.position}: {exc.reason}"
    return out, None


def _sequence(batch, offset: int) -> int:
    """A record's sequence number: its batch's base sequence plus its offset delta (wrapping at 2^31), or -1."""
    if batch.base_sequence < 0:
        return -1
    return (batch.base_sequence + offset - batch.base_offset) % (1 << 31)


def _batch_text(b, crc_valid: bool) -> str:
    last_seq = -1 if b.base_sequence < 0 else b.base_sequence + b.last_offset_delta
    ts_name = "LogAppendTime" if b.timestamp_type else "CreateTime"
    # Java's OptionalLong, as Kafka's tool prints it: the cleaner's delete horizon (KIP-534, attribute bit 6)
    horizon = "OptionalLong.empty" if b.delete_horizon_ms is None else f"OptionalLong[{b.delete_horizon_ms}]"
    return (
        f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.record_count} "
        f"baseSequence: {b.base_sequence} lastSequence: {last_seq} producerId: {b.producer_id} "
        f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.partition_leader_epoch} "
        f"isTransactional: {str(b.is_transactional).lower()} isControl: {str(b.is_control).lower()} "
        f"deleteHorizonMs: {horizon} position: {b.position} {ts_name}: {b.max_timestamp} "
        f"size: {b.size_in_bytes} magic: {b.magic} compresscodec: {b.compression} crc: {b.crc} "
        f"isvalid: {str(crc_valid).lower()}"
    )


def _record_text(rec: dict, ts_name: str, parser=None) -> str:
    """One record's line; ``parser`` (``dump_log_parsers``) prints a data record's key and payload (None: neither,
    as Kafka's tool without ``--print-data-log``)."""
    head = (f"| offset: {rec['offset']} {ts_name}: {rec['timestamp']} keySize: {rec['key_size']} "
            f"valueSize: {rec['value_size']} sequence: {rec['sequence']} "
            f"headerKeys: [{','.join(h[0] for h in rec['headers'])}]")
    if "control_type" in rec:
        if rec["control_type"] in ("ABORT", "COMMIT"):
            raw = base64.b64decode(rec["control"].get("raw") or "")
            epoch = struct.unpack_from(">i", raw, 2)[0] if len(raw) >= 6 else -1
            return f"{head} endTxnMarker: {rec['control_type']} coordinatorEpoch: {epoch}"
        body = json.dumps(rec["control"], separators=(",", ":"))
        return f"{head} {rec['control_type']}: {body}"
    if "metadata" in rec:
        meta = rec["metadata"]
        if "error" in meta:
            return f"{head} payload: (not a metadata record: {meta['error']})"
        return f"{head} payload: {json.dumps(meta, separators=(',', ':'))}"
    if parser is None:
        return head
    key, payload = parser(rec["offset"], _raw(rec["key"]), _raw(rec["value"]))
    return head + ("" if key is None else f" key: {key}") + ("" if payload is None else f" payload: {payload}")


def _raw(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def dump_file(path: str, *, as_json: bool = False, print_records: bool = False,
              metadata_decoder: bool = False, deep: bool = False, parser=None) -> Iterator[str]:
    """Yield the output lines for one file. A line starting with NUL+"error" marks a problem found in the file.
    ``metadata_decoder`` decodes data records as metadata records (and prints records); ``deep`` prints each
    record's line, ``print_records`` its key and payload too (through ``parser``, text by default)."""
    from kraftwire.tools import dump_log_parsers

    print_records = print_records or metadata_decoder
    content = (parser or dump_log_parsers.plain) if print_records else None
    deep = deep or print_records
    name = os.path.basename(path)
    if name.endswith(".index"):
        yield from _dump_index(path, as_json, time_index=False)
        return
    if name.endswith(".timeindex"):
        yield from _dump_index(path, as_json, time_index=True)
        return
    if name.endswith(TXN_INDEX_SUFFIX):
        yield from _dump_txn_index(path, as_json)
        return
    if name.endswith(producer_snapshot.SUFFIX):
        yield from _dump_producer_snapshot(path, as_json)
        return
    with open(path, "rb") as f:
        data = f.read()
    if not as_json:
        yield f"Dumping {path}"
        snap = parse_snapshot_path(path)
        if snap is not None:
            yield f"Snapshot end offset: {snap.snapshot_id.end_offset}, epoch: {snap.snapshot_id.epoch}"
        elif name.endswith(".log") and name[:-4].isdigit():
            yield f"Log starting offset: {int(name[:-4])}"
    reader = read_batches(data, validate=False)
    problem: str | None = None
    problem_pos = 0
    try:
        for b in reader:
            crc_valid = _crc_valid(b.buffer)
            records, record_problem = _record_objects(b, metadata_decoder) if deep else ([], None)
            if as_json:
                obj: dict[str, Any] = {
                    "base_offset": b.base_offset,
                    "last_offset": b.last_offset,
                    "partition_leader_epoch": b.partition_leader_epoch,
                    "crc": b.crc,
                    "crc_valid": crc_valid,
                    "is_control": b.is_control,
                    "compression": b.compression,
                    "record_count": b.record_count,
                    "size_in_bytes": b.size_in_bytes,
                    "position": b.position,
                }
                if deep:
                    obj["records"] = records
                    if record_problem:
                        obj["records_error"] = record_problem
                yield json.dumps(obj, separators=(",", ":"))
            else:
                yield _batch_text(b, crc_valid)
                ts_name = "LogAppendTime" if b.timestamp_type else "CreateTime"
                for rec in records:
                    yield _record_text(rec, ts_name, content)
                if record_problem:
                    yield "\0error" + f"| {record_problem}"
        if reader.incomplete:
            problem_pos = reader.valid_bytes
            problem = "incomplete batch"
    except CorruptRecordError as exc:
        problem_pos = reader.valid_bytes
        problem = f"corrupt batch at byte {exc.position}: {exc.reason}"
    if problem is not None:
        invalid = len(data) - problem_pos
        if as_json:
            yield "\0error" + json.dumps({"error": problem, "position": problem_pos, "invalid_bytes": invalid},
                                         separators=(",", ":"))
        else:
            yield "\0error" + f"Found {invalid} invalid bytes at the end of {name} ({problem} at position {problem_pos})"


def _dump_txn_index(path: str, as_json: bool) -> Iterator[str]:
    """A ``.txnindex``: its aborted transactions (a torn last entry, from a crash mid-write, is left out as the
    broker's loader leaves it)."""
    with open(path, "rb") as f:
        data = f.read()
    if not as_json:
        yield f"Dumping {path}"
    try:
        aborted = decode_txn_index(data)
    except ValueError as exc:
        yield "\0error" + (json.dumps({"error": str(exc)}) if as_json else str(exc))
        return
    for txn in aborted:
        if as_json:
            yield json.dumps({"version": 0, **txn._asdict()})
        else:
            yield (f"version: 0 producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
                   f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}")


def _dump_producer_snapshot(path: str, as_json: bool) -> Iterator[str]:
    """A producer snapshot: per producer, its epoch, coordinator epoch, open transaction and last batch (Kafka's
    ``BatchMetadata``: first sequence counted back from the last one, wrapping below 0 as sequences do)."""
    with open(path, "rb") as f:
        data = f.read()
    if not as_json:
        yield f"Dumping {path}"
    try:
        entries = producer_snapshot.entries(data)
    except producer_snapshot.CorruptProducerSnapshot as exc:
        yield "\0error" + (json.dumps({"error": str(exc)}) if as_json else str(exc))
        return
    for e in entries:
        if as_json:
            yield json.dumps(e._asdict())
            continue
        txn = "OptionalLong.empty" if e.current_txn_first_offset < 0 else f"OptionalLong[{e.current_txn_first_offset}]"
        line = (f"producerId: {e.producer_id} producerEpoch: {e.epoch} coordinatorEpoch: {e.coordinator_epoch} "
                f"currentTxnFirstOffset: {txn} lastTimestamp: {e.timestamp} ")
        if e.last_offset >= 0:
            line += (f"firstSequence: {_sequence_back(e.last_sequence, e.offset_delta)} "
                     f"lastSequence: {e.last_sequence} lastOffset: {e.last_offset} offsetDelta: {e.offset_delta} "
                     f"timestamp: {e.timestamp}")
        yield line


def _sequence_back(sequence: int, by: int) -> int:
    """``sequence`` less ``by`` in the producer's sequence space (0 .. 2^31-1, wrapping)."""
    return (sequence - by) % (1 << 31)


def _dump_index(path: str, as_json: bool, *, time_index: bool) -> Iterator[str]:
    name = os.path.basename(path)
    stem = name.rsplit(".", 1)[0]
    base = int(stem) if stem.isdigit() else 0
    with open(path, "rb") as f:
        data = f.read()
    entry = _TIME_INDEX_ENTRY if time_index else _INDEX_ENTRY
    whole = len(data) - len(data) % entry.size
    if not as_json:
        yield f"Dumping {path}"
    for a, b in entry.iter_unpack(data[:whole]):
        if time_index:
            yield json.dumps({"timestamp": a, "offset": base + b}) if as_json else f"timestamp: {a} offset: {base + b}"
        else:
            yield json.dumps({"offset": base + a, "position": b}) if as_json else f"offset: {base + a} position: {b}"
    if whole != len(data):
        msg = f"{len(data) - whole} trailing bytes do not form a whole index entry"
        yield "\0error" + (json.dumps({"error": msg, "position": whole}) if as_json else msg)
