"""OffsetFetch answers with committed group offsets only. The leader's scan folds the log up to its end (producer
state needs the uncommitted batches), so for group offsets it reads through every write the high watermark has not
passed to the value that write replaced. The reference is a replay of the committed log alone."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from kraftwire.log.api import Isolation
from kraftwire.log.memory import MemoryLog
from kraftwire.protocol import messages as w
from kraftwire.records.control import KRAFTWIRE_GROUP_OFFSET, control_batch
from kraftwire.server.test_server.scan import LogScan, replay
from kraftwire.server.test_server.state import LogState


def _commit_batch(*commits: tuple[str, int, int]) -> bytes:
    """One control batch of offset commits (group, partition, offset); offset -1 deletes."""
    msgs = [(KRAFTWIRE_GROUP_OFFSET, w.KraftwireGroupOffsetRecord(
        group_id=g, topic="t", partition=p, offset=o, leader_epoch=1, metadata=f"m{o}", commit_timestamp=0))
        for g, p, o in commits]
    return control_batch(msgs, epoch=1)


def _append(lg, *commits, epoch: int = 1) -> int:
    lg.append_as_leader(_commit_batch(*commits), epoch)
    lg.flush()
    return lg.end_offset()


def _scan(lg) -> LogScan:
    scan = LogScan(SimpleNamespace(log=lg, watchers=[]))
    scan.catch_up()
    return scan


def _reference(lg, group: str) -> dict:
    state = LogState()
    replay(lg, state, lg.start_offset(), lg.high_watermark(), Isolation.COMMITTED)
    return {(t, p): v for (g, t, p), v in state.offsets.items() if g == group}


def test_a_write_above_the_high_watermark_reads_as_the_value_it_replaced():
    lg = MemoryLog()
    committed_end = _append(lg, ("g", 0, 10), ("g", 1, 20))
    lg.update_high_watermark(committed_end)
    _append(lg, ("g", 0, 11))
    _append(lg, ("g", 0, 12), ("g", 2, 30))  # partition 2 has no committed offset at all
    _append(lg, ("h", 0, 99))
    scan = _scan(lg)

    assert scan.state.offsets[("g", "t", 0)][0] == 12  # the scan itself has seen everything
    assert scan.committed_offsets("g") == {("t", 0): (10, 1, "m10"), ("t", 1): (20, 1, "m20")}
    assert scan.committed_offsets("h") == {}

    lg.update_high_watermark(lg.end_offset())
    assert scan.committed_offsets("g") == {("t", 0): (12, 1, "m12"), ("t", 1): (20, 1, "m20"),
                                           ("t", 2): (30, 1, "m30")}
    assert scan.committed_offsets("h") == {("t", 0): (99, 1, "m99")}
    assert not scan.state.groups._pending  # nothing is remembered once committed


def test_an_uncommitted_delete_still_reads_as_the_committed_offset():
    lg = MemoryLog()
    lg.update_high_watermark(_append(lg, ("g", 0, 10)))
    _append(lg, ("g", 0, -1))
    scan = _scan(lg)
    assert ("g", "t", 0) not in scan.state.offsets
    assert scan.committed_offsets("g") == {("t", 0): (10, 1, "m10")}


def test_truncated_writes_are_gone_and_never_served():
    lg = MemoryLog()
    hw = _append(lg, ("g", 0, 10))
    lg.update_high_watermark(hw)
    _append(lg, ("g", 0, 11))
    scan = _scan(lg)
    # The leader lost its epoch; as a follower it truncates and appends the new leader's batch of the same length
    # in one step, so the log end is back where the scan stopped.
    lg.truncate_to(hw)
    _append(lg, ("g", 1, 5), epoch=2)
    assert lg.end_offset() == scan.scanned_to
    scan.catch_up()
    assert scan.committed_offsets("g") == {("t", 0): (10, 1, "m10")}
    lg.update_high_watermark(lg.end_offset())
    assert scan.committed_offsets("g") == {("t", 0): (10, 1, "m10"), ("t", 1): (5, 1, "m5")}


def test_the_committed_image_state_does_not_remember_writes():
    state = LogState()
    lg = MemoryLog()
    _append(lg, ("g", 0, 1), ("g", 0, 2))
    replay(lg, state, 0, lg.end_offset(), Isolation.UNCOMMITTED)
    assert state.offsets[("g", "t", 0)][0] == 2 and not state.groups._pending


commits = st.lists(st.tuples(st.sampled_from("gh"), st.integers(0, 2), st.integers(-1, 50)), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(commits, st.integers(0, 3), st.booleans()), min_size=1, max_size=25))
def test_the_view_equals_a_replay_of_the_committed_log(steps):
    """Appends, high-watermark moves (to a batch boundary up to three batches back) and catch-ups in any order; the
    view always equals the committed replay."""
    lg = MemoryLog()
    scan = _scan(lg)
    ends = [0]
    for batch, back, catch_up in steps:
        ends.append(_append(lg, *batch))
        if back < 3:
            lg.update_high_watermark(max(lg.high_watermark(), ends[max(0, len(ends) - 1 - back)]))
        if catch_up:
            scan.catch_up()
        for group in "gh":
            assert scan.committed_offsets(group) == _reference(lg, group)


def test_offset_fetch_answers_committed_offsets_and_waits_for_a_new_leaders_first_commit():
    """Through the coordinator: a new leader answers COORDINATOR_LOAD_IN_PROGRESS (retriable) until it commits in
    its epoch; then only committed offsets, whichever way the request asks (v1: per partition, v2+: top level)."""
    from kraftwire.error_codes import COORDINATOR_LOAD_IN_PROGRESS
    from kraftwire.server.test_server.groups import Coordinator

    lg = MemoryLog()
    lg.update_high_watermark(_append(lg, ("g", 0, 10)))
    _append(lg, ("g", 0, 11))  # the old leader's last commit, not known committed here yet
    epoch_start = lg.end_offset()
    answers = []
    from kraftwire.config import Config

    ctx = SimpleNamespace(log=lg, watchers=[], topic_name="t", is_leader=lambda: True, epoch=lambda: 2,
                          epoch_start_offset=lambda: epoch_start,
                          loop=lambda: SimpleNamespace(call_later=lambda *args: None),
                          node=SimpleNamespace(settings=SimpleNamespace(config=Config())))
    conn = SimpleNamespace(send_response=lambda body, version, cid: answers.append(body))
    coordinator = Coordinator(ctx, LogScan(ctx))
    R = w.OffsetFetchRequest

    def ask(version, topics=True):
        req = R(group_id="g", topics=[R.OffsetFetchRequestTopic(name="t", partition_indexes=[0])] if topics else None)
        coordinator.offset_fetch(SimpleNamespace(body=req, version=version,
                                                 header=SimpleNamespace(correlation_id=1, client_id="c")), conn)
        return answers[-1]

    assert ask(5).error_code == COORDINATOR_LOAD_IN_PROGRESS and ask(5).topics == []
    part = ask(1).topics[0].partitions[0]
    assert part.error_code == COORDINATOR_LOAD_IN_PROGRESS and part.committed_offset == -1

    lg.update_high_watermark(lg.end_offset())  # the epoch's first commit: the old leader's offset 11 with it
    _append(lg, ("g", 0, 12))  # this leader's own commit, appended and not yet committed
    for answer in (ask(5), ask(5, topics=False)):
        assert answer.error_code == 0
        assert [(p.partition_index, p.committed_offset) for p in answer.topics[0].partitions] == [(0, 11)]
    lg.update_high_watermark(lg.end_offset())
    assert ask(1).topics[0].partitions[0].committed_offset == 12
