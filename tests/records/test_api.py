"""The public surface: layout constants match the spec, the facade picks the extension, both implementations satisfy the Protocol."""

from __future__ import annotations

import os

import pytest

import kraftwire.records as records
from kraftwire.records import api, pyimpl

from harness.codec import NO_EXT, load_ext


def test_the_extension_really_loaded_unless_disabled():
    if os.environ.get("KRAFTWIRE_NO_EXT", "") not in ("", "0"):
        assert records.IMPLEMENTATION == "python"
    else:
        assert records.IMPLEMENTATION == "ext", f"extension did not load: {records.EXT_IMPORT_ERROR}"
        import kraftwire_ext._records as ext

        assert records.RecordBatchBuilder is ext.RecordBatchBuilder


def test_field_positions_match_the_spec_table():
    # kraft-facts §6, DefaultRecordBatch.java
    expected = {
        "base_offset": 0, "length": 8, "partition_leader_epoch": 12, "magic": 16, "crc": 17, "attributes": 21,
        "last_offset_delta": 23, "base_timestamp": 27, "max_timestamp": 35, "producer_id": 43,
        "producer_epoch": 51, "base_sequence": 53, "record_count": 57, "records": 61,
    }  # fmt: skip
    assert api.FIELD_POSITIONS == expected
    assert api.HEADER_STRUCT.size == api.RECORD_BATCH_OVERHEAD == 61
    assert api.LOG_OVERHEAD == 12
    assert api.MIN_BATCH_LENGTH == 49
    assert api.CRC_START == 21
    assert api.MAX_BATCH_SIZE == 8 * 1024 * 1024
    assert api.MAX_RECORD_OVERHEAD == 21


def test_attribute_masks_and_compression_ids():
    assert (api.COMPRESSION_MASK, api.TIMESTAMP_TYPE_MASK, api.TRANSACTIONAL_MASK, api.CONTROL_MASK) == (7, 8, 16, 32)
    assert api.COMPRESSION_IDS == {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def test_control_types_and_keys():
    assert [api.CONTROL_ABORT, api.CONTROL_COMMIT, api.CONTROL_LEADER_CHANGE, api.CONTROL_SNAPSHOT_HEADER,
            api.CONTROL_SNAPSHOT_FOOTER, api.CONTROL_KRAFT_VERSION, api.CONTROL_KRAFT_VOTERS] == list(range(7))
    assert records.control_key(api.CONTROL_LEADER_CHANGE) == bytes.fromhex("00000002")
    assert records.parse_control_key(bytes.fromhex("00000003")) == (0, 3)
    assert records.parse_control_key(bytes.fromhex("0001000600ff")) == (1, 6)  # longer keys: first 4 bytes
    assert records.parse_control_key(b"\x00") == (-1, api.CONTROL_UNKNOWN)
    assert records.parse_control_key(None) == (-1, api.CONTROL_UNKNOWN)


def test_reasons_are_distinct():
    assert len(set(api.ALL_REASONS)) == len(api.ALL_REASONS) >= 20


def test_both_implementations_satisfy_the_protocol(codec):
    assert isinstance(codec, api.RecordCodec)
    for name in ("Record", "RecordBatch", "BatchReader", "RecordBatchBuilder", "decode_columns"):
        assert hasattr(codec, name)


@pytest.mark.parametrize("name", records.__all__)
def test_facade_exports_resolve(name):
    assert getattr(records, name) is not None


def test_max_batch_size_is_checked(codec):
    for bad in (10, 2**31, -1):
        with pytest.raises(ValueError):
            codec.validate_batches(b"", bad)
        with pytest.raises(ValueError):
            list(codec.read_batches(b"", True, bad))
    assert codec.whole_batches_size(b"", 61) == 0


def test_record_compares_like_a_tuple(codec):
    b = codec.RecordBatchBuilder()
    b.append(b"k", b"v", [("h", None)], timestamp=7)
    (rec,) = list(codec.read_batches(b.build()))[0]
    assert rec == (0, 7, b"k", b"v", [("h", None)])
    assert rec == pyimpl.Record(0, 7, b"k", b"v", [("h", None)])
    offset, ts, key, value, headers = rec
    assert (rec.offset, rec.timestamp, rec.key, rec.value, rec.headers) == (offset, ts, key, value, headers)
    assert "offset=0" in repr(rec)
    import pickle

    assert pickle.loads(pickle.dumps(rec)) == rec


def test_importing_the_extension_first_works(tmp_path):
    """kraftwire_ext._records imports kraftwire.records.api, whose package imports the extension back."""
    if NO_EXT:
        pytest.skip("KRAFTWIRE_NO_EXT=1")
    import subprocess
    import sys

    code = "import kraftwire_ext._records; import kraftwire.records as r; assert r.IMPLEMENTATION == 'ext', r.EXT_IMPORT_ERROR"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(os.path.abspath(p) for p in sys.path if p))
    # Not from the repo root: ``-c`` puts the working directory first on sys.path, which would shadow an
    # installed package with the source tree (which has no compiled extension).
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60, cwd=tmp_path)


def test_the_type_stub_matches_the_extension():
    if NO_EXT:
        pytest.skip("KRAFTWIRE_NO_EXT=1")
    import ast

    ext = load_ext()
    stub = os.path.join(os.path.dirname(ext.__file__), "_records.pyi")
    tree = ast.parse(open(stub).read())
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    public = {n for n in dir(ext) if not n.startswith("_")}
    assert declared == public
    assert declared == {n for n in dir(pyimpl) if n in declared}  # the twin has every name too
