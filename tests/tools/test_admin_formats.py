"""What the admin tools print in Kafka's shapes: Java's hash orders (``kraftwire.java_order``), the
delete-records JSON file, and the log-dirs JSON."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from kraftwire import error_codes as ec
from kraftwire.tools.delete_records import DeleteRecordsError, parse_offsets
from kraftwire.java_order import hashmap_order, string_hash, topic_partition_hash
from kraftwire.tools.log_dirs import format_json


def test_java_hashes():
    assert string_hash("hello") == 99162322 and string_hash("") == 0
    assert string_hash("polygenelubricants") == -2**31  # Java's String.hashCode overflows to Integer.MIN_VALUE
    assert string_hash("é") == 233 and string_hash("😀") == 31 * 0xD83D + 0xDE00  # UTF-16 code units
    assert topic_partition_hash("t", 0) == 31 * 31 + ord("t")


def test_hashmap_order_is_bucket_order_then_insertion_order():
    assert hashmap_order(["version", "brokers"], string_hash) == ["brokers", "version"]
    assert hashmap_order(["logDir", "error", "partitions"], string_hash) == ["partitions", "error", "logDir"]
    assert hashmap_order([3, 1, 2, 17], lambda i: i) == [1, 17, 2, 3]  # 17 shares bucket 1 and came later
    assert hashmap_order(list(range(30)), lambda i: i) == list(range(30))  # 64 buckets once over 12, 24 entries


def test_offset_json_file():
    assert parse_offsets('{"partitions": [{"topic": "a", "partition": 1, "offset": 5}], "version": 1}') == {
        ("a", 1): 5}
    assert parse_offsets('{"partitions": [{"topic": "a", "partition": 0, "offset": -1}]}') == {("a", 0): -1}
    for text, why in (("nope", "not a valid JSON"), ('{"version": 2, "partitions": []}', "Not supported version"),
                      ("{}", "Missing partitions field"),
                      ('{"partitions": [{"topic": "a", "partition": 0}]}', "Invalid partitions field"),
                      ('{"partitions": [{"topic": "a", "partition": 0, "offset": 1}, '
                       '{"topic": "a", "partition": 0, "offset": 2}]}', "duplicate topic partitions: a-0")):
        with pytest.raises(DeleteRecordsError, match=why):
            parse_offsets(text)


def test_log_dirs_json_names_an_offline_directory_by_its_java_exception():
    part = NS(partition_index=0, partition_size=7, offset_lag=0, is_future_key=False)
    results = {2: [NS(log_dir="/a", error_code=ec.NONE, topics=[NS(name="t", partitions=[part]),
                                                              NS(name="u", partitions=[part])]),
                   NS(log_dir="/b", error_code=ec.KAFKA_STORAGE_ERROR, topics=[])]}
    text = format_json(results, {"t"})
    assert ('{"partitions":[{"partition":"t-0","size":7,"offsetLag":0,"isFuture":false}],"error":null,'
            '"logDir":"/a"}') in text
    assert '{"partitions":[],"error":"org.apache.kafka.common.errors.KafkaStorageException","logDir":"/b"}' in text
    assert text.startswith('{"brokers":[{"broker":2,"logDirs":[') and text.endswith('],"version":1}')
