"""The pure rules of a log-dir move (``kraftwire.replica.log_dir_moves``), mirroring Kafka's
``ReplicaManager.alterReplicaLogDirs`` answers (checked against a Kafka 4.4 node with two log dirs: an unknown or
relative path LOG_DIR_NOT_FOUND, an unknown partition UNKNOWN_TOPIC_OR_PARTITION) and ``ReplicaAlterLogDirsThread``'s
promotion states (``ReplicaAlterLogDirsThreadTest``)."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.replica import log_dir_moves as r

ROOTS = ("/d1", "/d2")


def test_alter_error_in_kafkas_order():
    err = lambda path, **kw: r.alter_error(kw.get("topic", "t"), 0, path, ROOTS, kw.get("offline", ()),  # noqa: E731
                                           kw.get("hosted", True), kw.get("failed", False), kw.get("known", True))
    assert err("/d2") == ec.NONE
    assert err("/nope") == err("d2") == err("/d2/") == ec.LOG_DIR_NOT_FOUND
    assert err("/d2", offline=("/d2",)) == ec.KAFKA_STORAGE_ERROR
    assert err("/d2", failed=True) == ec.KAFKA_STORAGE_ERROR
    assert err("/d2", hosted=False, known=False) == ec.UNKNOWN_TOPIC_OR_PARTITION
    assert err("/d2", hosted=False) == ec.REPLICA_NOT_AVAILABLE
    assert err("/nope", topic="x" * 249) == ec.INVALID_TOPIC_EXCEPTION  # its future directory's name is too long
    assert err("/d2", topic="x" * 200) == ec.NONE


def test_move_action():
    assert r.move_action("/d1", "/d1", None) == r.NOTHING
    assert r.move_action("/d1", "/d1", "/d2") == r.CANCEL
    assert r.move_action("/d2", "/d1", "/d2") == r.NOTHING
    assert r.move_action("/d2", "/d1", None) == r.START
    assert r.move_action("/d3", "/d1", "/d2") == r.START
    assert r.remember_preferred("/d2", None, None) and not r.remember_preferred("/d2", "/d2", None)


def test_promotion_waits_for_the_controller_then_swaps_when_caught_up():
    assert r.next_promotion(r.NONE, False, True, False) == r.NOTHING
    assert r.next_promotion(r.NONE, True, True, False) == r.TELL
    assert r.next_promotion(r.QUEUED, True, True, False) == r.NOTHING
    assert r.next_promotion(r.ACCEPTED, False, True, False) == r.NOTHING
    assert r.next_promotion(r.ACCEPTED, True, True, False) == r.SWAP
    assert r.next_promotion(r.ACCEPTED, True, True, True) == r.NOTHING  # not under a running compaction
    assert r.next_promotion(r.NONE, True, False, False) == r.SWAP  # no directory assignment: at once


def test_truncation_lag_and_restart():
    assert r.future_truncation(10, 7) == 7 and r.future_truncation(5, 7) is None and r.future_truncation(3, None) == 0
    assert r.future_offset_lag(10, 4) == 6
    assert r.restart_action("dir-b", "dir-b") == r.PROMOTE
    assert r.restart_action("dir-b", "dir-a") == r.RESUME and r.restart_action(None, None) == r.RESUME
    assert r.future_dir_name("t", 3, "ab" * 16) == "t-3." + "ab" * 16 + "-future"
    assert r.copy_allowed(False) and not r.copy_allowed(True)
