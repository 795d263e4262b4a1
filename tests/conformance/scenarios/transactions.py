"""The transaction APIs at every version both serve — AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit —
and DescribeTransactions, ListTransactions: a transaction through commit and through abort (the records read back
read_committed), a stale or fenced producer epoch, an unknown transactional id or producer id, EndTxn with no
transaction, adding unknown partitions, offsets committed in a transaction, the transactions listed by state and
producer. The cases whose answer does not change with the version run at the key versions only
(every_and_key_versions)."""

from __future__ import annotations

from conformance.data_steps import (A, FETCH_VERSION, GENERATION, INIT_VERSION, PID, PRODUCE_VERSION, add_offsets,
                                    add_partitions, committed, coordinated, end_txn, every_and_key_versions, fetch,
                                    fetch_topic, idempotent, init_producer_id, member, offset_fetch, produce, settled,
                                    transactional, txn_offset_commit)
from conformance.runner import Learned, Step, each_version, no_error
from conformance.steps import created

from kraftwire.protocol import messages as w

T = "{ns}.t"


#: the first versions of a transaction.version 2 client (KIP-890 part 2): its EndTxn bumps the epoch, and its
#: Produce and TxnOffsetCommit add the partition or group to the transaction themselves (no AddPartitionsToTxn or
#: AddOffsetsToTxn); every pair but "no-auto-create" finalizes transaction.version 2
TV2_END, TV2_PRODUCE, TV2_TXN_OFFSET_COMMIT = 5, 12, 5


def _in_transaction(end_version: int = 0, add_version: int = 3):
    """Topic A, a transactional producer, partition A-0 added to its transaction and two records written: as a
    transaction.version 2 client does it when the transaction is ended at ``end_version`` 5 (the Produce adds the
    partition), else with AddPartitionsToTxn at ``add_version``."""
    if end_version >= TV2_END:
        return [*created(A), *transactional(),
                produce(TV2_PRODUCE, (A, 0, idempotent(2, 0, transactional=True)), transactional_id=T,
                        until=no_error)]
    return [*created(A), *transactional(), add_partitions(add_version, (A, [0])),
            produce(PRODUCE_VERSION, (A, 0, idempotent(2, 0, transactional=True)), transactional_id=T,
                    until=no_error)]


def _offsets_in_transaction(version: int, *parts) -> list[Step]:
    """Offsets committed in the transaction ended at ``version``: a transaction.version 2 client's TxnOffsetCommit
    v5 adds the group itself; before, AddOffsetsToTxn then TxnOffsetCommit v3."""
    if version >= TV2_END:
        return [txn_offset_commit(TV2_TXN_OFFSET_COMMIT, *parts)]
    return [add_offsets(3), txn_offset_commit(3, *parts)]


def _read_committed():
    return fetch(FETCH_VERSION, fetch_topic(FETCH_VERSION, A, (0, 0)), isolation=1, until=settled)


def _describe(*ids, until=None):
    return Step(w.DescribeTransactionsRequest(transactional_ids=list(ids or (T,))), 0, until=until)


def _completed(answer) -> bool:
    """``until`` for DescribeTransactions: the transaction's markers are written (no longer Prepare*)."""
    return all(not t.transaction_state.startswith("Prepare") for t in answer.transaction_states)


def _list(v, states=(), producers=(), duration=-1):
    return Step(w.ListTransactionsRequest(state_filters=list(states), producer_id_filters=list(producers),
                                          duration_filter=duration), v, scope=True)


ADD_PARTITIONS = {
    "add": lambda v: [*created(A, partitions=2), *transactional(), add_partitions(v, (A, [0, 1])), _describe()],
    "add-twice": lambda v: [*created(A), *transactional(), add_partitions(v, (A, [0])), add_partitions(v, (A, [0]))],
    "unknown-partition": lambda v: [*created(A), *transactional(),
                                    add_partitions(v, (A, [0, 5]), ("{ns}.missing", [0])), _describe()],
    "stale-epoch": lambda v: [*created(A), *transactional(), add_partitions(v, (A, [0]), epoch=7)],
    "fenced-epoch": lambda v: [*created(A), *transactional(), init_producer_id(INIT_VERSION, T),
                               add_partitions(v, (A, [0]), epoch=0)],
    "unknown-producer-id": lambda v: [*created(A), *transactional(),
                                      add_partitions(v, (A, [0]), producer_id=424242)],
    "unknown-transactional-id": lambda v: [*created(A), add_partitions(v, (A, [0]), producer_id=0, epoch=0)],
    "verify-only": lambda v: [*created(A, partitions=2), *transactional(), add_partitions(3, (A, [0])),
                              add_partitions(v, (A, [0, 1]), verify_only=True)] if v >= 4 else None,
}

ADD_OFFSETS = {
    "add": lambda v: [*created(A), *transactional(), add_offsets(v), _describe()],
    "stale-epoch": lambda v: [*created(A), *transactional(), add_offsets(v, epoch=3)],
    "unknown-transactional-id": lambda v: [add_offsets(v, producer_id=0, epoch=0)],
    "empty-group-id": lambda v: [*transactional(), add_offsets(v, "")],
}

END_TXN = {
    "commit": lambda v: [*_in_transaction(v), end_txn(v, True), _read_committed(), _describe(until=_completed)],
    "abort": lambda v: [*_in_transaction(v), end_txn(v, False), _read_committed(), _describe(until=_completed)],
    "commit-with-offsets": lambda v: [*_in_transaction(v), *_offsets_in_transaction(v, (A, 0, 2)),
                                      end_txn(v, True), _read_committed(), offset_fetch(7, (A, [0]), until=committed)],
    "nothing-to-commit": lambda v: [*transactional(), end_txn(v, True), _describe()],
    "nothing-to-abort": lambda v: [*transactional(), end_txn(v, False)],
    "commit-after-abort": lambda v: [*_in_transaction(v), end_txn(v, False), _describe(until=_completed),
                                     end_txn(v, True)],
    "stale-epoch": lambda v: [*_in_transaction(v), end_txn(v, True, epoch=9)],
    # (v5: the end waits for the fence's abort to complete: Kafka's transaction.version 2 end answers
    # CONCURRENT_TRANSACTIONS while a transition of the transaction is pending, a moment no request can hold)
    "fenced-epoch": lambda v: [*_in_transaction(v), init_producer_id(INIT_VERSION, T),
                               *([_describe(until=_completed)] if v >= TV2_END else []), end_txn(v, True, epoch=0),
                               _describe(until=_completed)],
    "unknown-transactional-id": lambda v: [end_txn(v, True, producer_id=0, epoch=0)],
}

TXN_OFFSET_COMMIT = {
    "commit": lambda v: [*created(A), *transactional(), *([] if v >= TV2_TXN_OFFSET_COMMIT else [add_offsets(3)]),
                         txn_offset_commit(v, (A, 0, 4)), end_txn(TV2_END if v >= TV2_TXN_OFFSET_COMMIT else 3, True),
                         offset_fetch(7, (A, [0]), until=committed)],
    "without-add-offsets": lambda v: [*created(A), *transactional(), txn_offset_commit(v, (A, 0, 4))],
    "stale-epoch": lambda v: [*created(A), *transactional(), add_offsets(3),
                              txn_offset_commit(v, (A, 0, 4), epoch=6)],
    "unknown-topic": lambda v: [*created(A), *transactional(), add_offsets(3),
                                txn_offset_commit(v, ("{ns}.missing", 0, 4), (A, 0, 1))],
    "member-generation": lambda v: [*member(), *transactional(), add_offsets(3),
                                    txn_offset_commit(v, (A, 0, 4), generation=GENERATION,
                                                      member_id=Learned("member_id", at="JoinGroup#2"))]
    if v >= 3 else None,
    "unknown-member": lambda v: [*member(), *transactional(), add_offsets(3),
                                 txn_offset_commit(v, (A, 0, 4), generation=1, member_id="{ns}-nobody")]
    if v >= 3 else None,
    "stale-generation": lambda v: [*member(), *transactional(), add_offsets(3),
                                   txn_offset_commit(v, (A, 0, 4), generation=9,
                                                     member_id=Learned("member_id", at="JoinGroup#2"))]
    if v >= 3 else None,
}

DESCRIBE = {
    "ongoing-and-unknown": lambda v: [*_in_transaction(), _describe(T, "{ns}.unknown", "")],
    "empty": lambda v: [*transactional(), _describe()],
}

LIST = {
    "by-producer": lambda v: [*_in_transaction(), _list(v, producers=[PID])],
    "by-state": lambda v: [*_in_transaction(), _list(v, states=["Ongoing"], producers=[PID]),
                           _list(v, states=["CompleteCommit"], producers=[PID])],
    "unknown-state": lambda v: [*_in_transaction(), _list(v, states=["Sleeping"], producers=[PID])],
    "by-duration": lambda v: [*_in_transaction(), _list(v, producers=[PID], duration=0),
                              _list(v, producers=[PID], duration=3_600_000)] if v >= 1 else None,
}

def _split(cases: dict, every: set) -> tuple[dict, dict]:
    return ({n: c for n, c in cases.items() if n in every}, {n: c for n, c in cases.items() if n not in every})


SCENARIOS = [
    *every_and_key_versions("AddPartitionsToTxn", *_split(ADD_PARTITIONS, {"add", "unknown-partition", "stale-epoch"}),
                            3, 4, config="coordinators"),
    *each_version("AddOffsetsToTxn", ADD_OFFSETS, config="coordinators"),
    *every_and_key_versions("EndTxn", *_split(END_TXN, {"commit", "abort", "nothing-to-commit"}),
                            config="coordinators"),
    *every_and_key_versions("TxnOffsetCommit", *_split(coordinated(TXN_OFFSET_COMMIT), {"commit", "stale-epoch"}), 3,
                            config="coordinators"),
    *each_version("DescribeTransactions", DESCRIBE, config="coordinators"),
    *each_version("ListTransactions", LIST, config="coordinators"),
]
