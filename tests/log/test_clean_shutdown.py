"""Kafka's clean shutdown marker (``log.clean_shutdown``, CleanShutdownFileHandlerTest): its format, and the epoch a
restart reports as BrokerRegistration's PreviousBrokerEpoch (LogManager.readBrokerEpochFromCleanShutdownFiles)."""

from __future__ import annotations

import json
import os

from kraftwire.log import clean_shutdown


def test_the_marker_is_kafkas_json_and_names_the_epoch(tmp_path):
    clean_shutdown.write(str(tmp_path), 12345)
    text = (tmp_path / ".kafka_cleanshutdown").read_text()
    assert json.loads(text) == {"version": 0, "brokerEpoch": 12345}
    assert clean_shutdown.previous_epoch([str(tmp_path)]) == 12345
    clean_shutdown.clear(str(tmp_path))
    assert not (tmp_path / ".kafka_cleanshutdown").exists()
    assert clean_shutdown.previous_epoch([str(tmp_path)]) == -1
    clean_shutdown.clear(str(tmp_path))  # clearing twice is fine


def test_every_directory_must_agree(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    clean_shutdown.write(str(a), 7)
    assert clean_shutdown.previous_epoch([str(a), str(b)]) == -1  # b has none: not a clean shutdown
    clean_shutdown.write(str(b), 8)
    assert clean_shutdown.previous_epoch([str(a), str(b)]) == -1  # they disagree
    clean_shutdown.write(str(b), 7)
    assert clean_shutdown.previous_epoch([str(a), str(b)]) == 7
    assert clean_shutdown.previous_epoch([]) == -1


def test_an_unreadable_marker_means_no_clean_shutdown(tmp_path):
    path = tmp_path / ".kafka_cleanshutdown"
    for content in (b"not json", b"[1, 2]", b'{"version": 0}', b'{"brokerEpoch": "x"}', b"\xff\xfe"):
        path.write_bytes(content)
        assert clean_shutdown.previous_epoch([str(tmp_path)]) == -1, content
    path.write_bytes(b'{"version":0,"brokerEpoch":3,"extra":1}')  # unknown fields are ignored, as Kafka's
    assert clean_shutdown.previous_epoch([str(tmp_path)]) == 3
    assert os.path.exists(path)
