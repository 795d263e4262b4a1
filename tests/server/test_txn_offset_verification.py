"""KIP-890 part 1 for TxnOffsetCommit (in-process node, real sockets and files): before the group coordinator appends
a producer's transactional offsets to the group's ``__consumer_offsets`` partition, it asks the producer's
transaction coordinator (AddPartitionsToTxn VerifyOnly, over the inter-broker listener) whether that partition is in
the ongoing transaction (added by AddOffsetsToTxn). A TxnOffsetCommit for a transaction that never added the group,
or arriving after the transaction was aborted, is refused with Kafka's error (INVALID_TXN_STATE before v4,
TRANSACTION_ABORTABLE from v4) and leaves nothing pending; a marker landing between the coordinator's answer and the
append voids the verification; an unreachable coordinator is answered retriably; the normal path still commits;
with ``transaction.partition.verification.enable=false`` the unverified commit is appended as before and hangs the
group's offsets."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.coordinator.partitioning import GROUP_TOPIC, TRANSACTION_TOPIC, partition_for
from kraftwire.protocol import messages as w
from server.test_kraft_node import Combined, _create, _online
from server.test_replication import _until
from server.test_txn_coordinator import PROPS, _coordinator, _init, _states

T = w.TxnOffsetCommitRequest
GROUP, TID, TOPIC = "g", "tg", "in"
ALL_PROPS = PROPS + "group.initial.rebalance.delay.ms=0\n"


def _txn_commit(pid: int, epoch: int, offset: int):
    return T(transactional_id=TID, group_id=GROUP, producer_id=pid, producer_epoch=epoch,
             generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
             topics=[T.TxnOffsetCommitRequestTopic(name=TOPIC, partitions=[
                 T.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
                                                   committed_leader_epoch=-1, committed_metadata="")])])


async def _commit_code(conn, pid: int, epoch: int, offset: int, version: int) -> int:
    r = await conn.request(_txn_commit(pid, epoch, offset), version)
    return r.topics[0].partitions[0].error_code


async def _fetched(conn) -> tuple[int, int]:
    """(committed offset, error) of ``in``-0 for the group, by OffsetFetch v7 with require_stable."""
    r = await conn.request(w.OffsetFetchRequest(group_id=GROUP, topics=[w.OffsetFetchRequest.OffsetFetchRequestTopic(
        name=TOPIC, partition_indexes=[0])], require_stable=True), 7)
    assert r.error_code == ec.NONE
    part = r.topics[0].partitions[0]
    return part.committed_offset, part.error_code


async def _setup(node, conn) -> tuple[int, int, object]:
    """The topic, a committed offset 5 for ``in``-0, the group coordinator loaded and a transactional producer:
    (producer id, epoch, the group's ``__consumer_offsets`` partition)."""
    await _online(node)
    assert (await conn.request(_create(TOPIC, partitions=1), 7)).topics[0].error_code == ec.NONE
    for _ in range(300):
        found = (await conn.request(w.FindCoordinatorRequest(key_type=0, coordinator_keys=[GROUP]), 4)).coordinators[0]
        if found.error_code == ec.NONE:
            break
        await asyncio.sleep(0.05)
    await _until("group coordinator loaded", lambda: node.group_apis._route(GROUP)[1] is not None)
    C = w.OffsetCommitRequest
    committed = await conn.request(C(group_id=GROUP, generation_id_or_member_epoch=-1, member_id="",
                                     group_instance_id=None, topics=[C.OffsetCommitRequestTopic(name=TOPIC, partitions=[
                                         C.OffsetCommitRequestPartition(partition_index=0, committed_offset=5,
                                                                        committed_leader_epoch=-1,
                                                                        committed_metadata="")])]), 8)
    assert committed.topics[0].partitions[0].error_code == ec.NONE
    assert await _fetched(conn) == (5, ec.NONE)
    await _coordinator(conn, TID)
    init = await _init(conn, TID)
    assert init.error_code == ec.NONE
    hp = node.replicas.get(GROUP_TOPIC, partition_for(GROUP, 5))
    return init.producer_id, init.producer_epoch, hp


def _nothing_left(node, hp, pid: int, end: int) -> None:
    """The refused commit wrote nothing and left no pending offset nor an open transaction."""
    assert hp.log.end_offset() == end
    assert pid not in hp.txn_state().ongoing
    assert not node.group_apis.shards[hp.index].shard.txn_offsets


async def _end(conn, node, pid: int, epoch: int, commit: bool) -> None:
    ended = await conn.request(w.EndTxnRequest(transactional_id=TID, producer_id=pid, producer_epoch=epoch,
                                               committed=commit), 3)
    assert ended.error_code == ec.NONE
    await _until("the transaction completed", lambda: _states(node, TID)[-1][0] == (4 if commit else 5))


async def _add_offsets(conn, pid: int, epoch: int) -> None:
    added = await conn.request(w.AddOffsetsToTxnRequest(transactional_id=TID, producer_id=pid, producer_epoch=epoch,
                                                        group_id=GROUP), 3)
    assert added.error_code == ec.NONE


async def _stable(conn, want: int) -> None:
    for _ in range(250):
        if await _fetched(conn) == (want, ec.NONE):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"offset {want} not committed: {await _fetched(conn)}")


def _run(tmp_path, scenario, extra: str = "") -> None:
    """``scenario(node, conn, pid, epoch, hp)`` against a fresh node set up by ``_setup``."""
    async def set_up(node, conn):
        await scenario(node, conn, *await _setup(node, conn))

    Combined(tmp_path, extra=ALL_PROPS + extra).run(set_up)


def test_a_commit_for_a_transaction_that_never_added_the_group_is_refused(tmp_path):
    async def scenario(node, conn, pid, epoch, hp):
        end = hp.log.end_offset()
        # no AddOffsetsToTxn: refused, nothing appended or pending; TRANSACTION_ABORTABLE only for v4, which knows it
        assert await _commit_code(conn, pid, epoch, 7, 3) == ec.INVALID_TXN_STATE
        assert await _commit_code(conn, pid, epoch, 7, 4) == ec.TRANSACTION_ABORTABLE
        assert node.replicas.verifier.failures == 2
        _nothing_left(node, hp, pid, end)
        assert await _fetched(conn) == (5, ec.NONE)

    _run(tmp_path, scenario)


def test_b_a_commit_after_the_abort_is_refused(tmp_path):
    async def scenario(node, conn, pid, epoch, hp):
        # the transaction commits an offset, is aborted (its offset dropped); then a commit of it arrives (a zombie,
        # a late retry): refused, nothing left pending, the last stable offset free
        await _add_offsets(conn, pid, epoch)
        assert await _commit_code(conn, pid, epoch, 9, 4) == ec.NONE
        await _end(conn, node, pid, epoch, False)
        await _stable(conn, 5)
        end = hp.log.end_offset()
        assert await _commit_code(conn, pid, epoch, 10, 3) == ec.INVALID_TXN_STATE
        assert await _commit_code(conn, pid, epoch, 10, 4) == ec.TRANSACTION_ABORTABLE
        _nothing_left(node, hp, pid, end)
        assert await _fetched(conn) == (5, ec.NONE)
        assert hp.last_stable_offset() == hp.log.high_watermark() == end

    _run(tmp_path, scenario)


def test_c_the_normal_path_commits(tmp_path):
    async def scenario(node, conn, pid, epoch, hp):
        # AddOffsetsToTxn, then the commit is verified once and pending until the COMMIT marker makes it the group's
        verifier = node.replicas.verifier
        await _add_offsets(conn, pid, epoch)
        assert await _commit_code(conn, pid, epoch, 7, 3) == ec.NONE
        assert (verifier.verified, verifier.failures) == (1, 0)
        assert await _fetched(conn) == (-1, ec.UNSTABLE_OFFSET_COMMIT)
        assert await _commit_code(conn, pid, epoch, 8, 4) == ec.NONE  # the transaction is open there: not asked
        assert verifier.verified == 1
        await _end(conn, node, pid, epoch, True)
        await _stable(conn, 8)

    _run(tmp_path, scenario)


def test_a_marker_between_the_answer_and_the_append_voids_the_verification(tmp_path):
    async def scenario(node, conn, pid, epoch, hp):
        # the coordinator confirms the partition, then an abort marker of the producer lands before the append
        # (its transaction ended meanwhile): the append is refused with the guard's INVALID_TXN_STATE
        verifier = node.replicas.verifier
        await _add_offsets(conn, pid, epoch)
        real = verifier.links.call

        async def marker_after_answer(broker, body):
            answer = await real(broker, body)
            coordinator_epoch = node.replicas.get(TRANSACTION_TOPIC, partition_for(TID, 3)).state.leader_epoch
            assert node.replicas.append_marker(hp, pid, epoch, coordinator_epoch, False).error == ec.NONE
            return answer

        verifier.links.call = marker_after_answer
        try:
            assert await _commit_code(conn, pid, epoch, 11, 4) == ec.INVALID_TXN_STATE
            assert (verifier.verified, verifier.failures) == (1, 0)  # the coordinator said yes; the guard said no
        finally:
            verifier.links.call = real
        _nothing_left(node, hp, pid, hp.log.end_offset())
        assert await _fetched(conn) == (5, ec.NONE)

    _run(tmp_path, scenario)


def test_d_without_verification_an_unverified_commit_is_appended_and_hangs(tmp_path):
    async def scenario(node, conn, pid, epoch, hp):
        end = hp.log.end_offset()
        # never added to the transaction, yet appended, as before verification: the offset is pending for a
        # transaction its coordinator knows nothing of, so nothing will complete or abort it
        assert await _commit_code(conn, pid, epoch, 7, 4) == ec.NONE
        assert hp.log.end_offset() > end and pid in hp.txn_state().ongoing
        assert await _fetched(conn) == (-1, ec.UNSTABLE_OFFSET_COMMIT)
        assert _states(node, TID)[-1][3] == []
        assert node.replicas.verifier.verified == node.replicas.verifier.failures == 0

    _run(tmp_path, scenario, "transaction.partition.verification.enable=false\n")


def test_a_verification_lost_on_the_way_is_answered_retriably(tmp_path):
    async def scenario(node, conn, pid, epoch, hp):
        # the coordinator cannot be reached (NETWORK_EXCEPTION): COORDINATOR_LOAD_IN_PROGRESS, which clients retry
        # without looking the coordinator up again; COORDINATOR_NOT_AVAILABLE for v0-1, which predate it
        verifier = node.replicas.verifier
        await _add_offsets(conn, pid, epoch)
        real = verifier.links.call

        async def unreachable(broker, body):
            raise ConnectionError("the coordinator went away")

        end = hp.log.end_offset()
        verifier.links.call = unreachable
        try:
            assert await _commit_code(conn, pid, epoch, 7, 4) == ec.COORDINATOR_LOAD_IN_PROGRESS
            assert await _commit_code(conn, pid, epoch, 7, 1) == ec.COORDINATOR_NOT_AVAILABLE
        finally:
            verifier.links.call = real
        _nothing_left(node, hp, pid, end)
        assert await _commit_code(conn, pid, epoch, 7, 4) == ec.NONE  # the retry goes through
        assert verifier.verified == 1

    _run(tmp_path, scenario)


def test_e_a_fenced_producers_commit_is_refused_without_reloading_the_group_partition(tmp_path):
    async def scenario(node, conn, pid, epoch, hp):
        # unverified, a later epoch of the producer reaches the partition first; the older epoch's commit is then
        # refused by the partition's producer state: Kafka passes INVALID_PRODUCER_EPOCH on, and the coordinator's
        # partition is fine, so its groups stay loaded (no UNKNOWN_SERVER_ERROR, no reload)
        loaded = node.group_apis.shards[hp.index]
        assert await _commit_code(conn, pid, epoch + 1, 7, 3) == ec.NONE
        end = hp.log.end_offset()
        assert await _commit_code(conn, pid, epoch, 8, 3) == ec.INVALID_PRODUCER_EPOCH
        assert hp.log.end_offset() == end
        assert node.group_apis.shards[hp.index] is loaded and not loaded.loading

    _run(tmp_path, scenario, "transaction.partition.verification.enable=false\n")
