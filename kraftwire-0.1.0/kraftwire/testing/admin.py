"""The simulation's admin client for KIP-853 voter changes (``kafka-metadata-quorum add-controller`` /
``remove-controller``): it sends ``AddRaftVoterRequest``/``RemoveRaftVoterRequest`` to the node it believes leads,
and records every answer.

Its requests and the answers travel through the simulated network like any other message: they are delayed,
reordered, dropped and duplicated by the cluster's ``NetworkFaults`` (partitions only cut node-to-node links, so the
admin can still reach a leader that the quorum has cut off, which then accepts a change it can never commit). A
request to a node that is down is refused after a network delay, as TCP answers a closed port.

Retry rules (what Kafka's admin client and the tools do, compressed): NOT_LEADER_OR_FOLLOWER -> ask the leader the
answer names (a random controller when it names none); REQUEST_TIMED_OUT (a change pending or uncommitted, the new
voter lagging, or the change not committed within the request's timeout) -> ask again after a backoff; no answer
within ``client_timeout_ms`` or refused -> ask a random controller. An answer that the change cannot be made because
it is already made (DUPLICATE_VOTER for an add, VOTER_NOT_FOUND for a remove) completes the operation when the
committed voter set shows it (an earlier attempt won, its answer lost); any other error fails the operation, which
the properties report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.error_codes import DUPLICATE_VOTER, VOTER_NOT_FOUND
from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.raft import messages as m

#: the admin client's address on the simulated network
ADMIN_ID = 1000


@dataclass
class AdminOp:
    kind: str  # "add" | "remove"
    key: ReplicaKey
    endpoints: tuple = ()
    submitted_ms: int = 0
    #: (time, node, error name, error message) of every answer, in arrival order
    answers: list = field(default_factory=list)
    attempts: int = 0
    done: bool = False
    failed: str | None = None

    def finished(self) -> bool:
        return self.done or self.failed is not None

    def describe(self) -> str:
        tail = ", ".join(f"{t}ms {src}:{err}" for t, src, err, _ in self.answers[-4:])
        state = "done" if self.done else f"FAILED ({self.failed})" if self.failed else "pending"
        return f"{self.kind} {self.key.id}:{str(self.key.directory_id)[:8]} {state} after {self.attempts} tries [{tail}]"


class SimAdmin:
    def __init__(self, cluster, *, add_timeout_ms: int = 600, client_timeout_ms: int = 800,
                 backoff_ms: int = 20) -> None:
        self.cluster = cluster
        self.add_timeout_ms = add_timeout_ms
        self.client_timeout_ms = client_timeout_ms
        self.backoff_ms = backoff_ms
        self.leader_guess: int | None = None
        self.inflight: dict[int, AdminOp] = {}
        self.next_correlation_id = 1
        self.ops: list[AdminOp] = []

    # --- operations --------------------------------------------------------------------------------------------------
    def add_voter(self, key: ReplicaKey, endpoints) -> AdminOp:
        return self._submit(AdminOp("add", key, tuple(endpoints), self.cluster.now))

    def remove_voter(self, key: ReplicaKey) -> AdminOp:
        return self._submit(AdminOp("remove", key, (), self.cluster.now))

    def _submit(self, op: AdminOp) -> AdminOp:
        self.ops.append(op)
        self.cluster.counters[f"admin_{op.kind}s"] += 1
        self._attempt(op)
        return op

    def _attempt(self, op: AdminOp) -> None:
        if op.finished():
            return
        cluster = self.cluster
        dest = self._target()
        cid = self.next_correlation_id
        self.next_correlation_id += 1
        if op.kind == "add":
            msg = m.AddRaftVoterRequest(ADMIN_ID, dest, cid, cluster.cluster_id, voter_key=op.key,
                                        endpoints=op.endpoints, timeout_ms=self.add_timeout_ms,
                                        kraft_version_min=0, kraft_version_max=1)
        else:
            msg = m.RemoveRaftVoterRequest(ADMIN_ID, dest, cid, cluster.cluster_id, voter_key=op.key)
        self.inflight[cid] = op
        op.attempts += 1
        cluster.counters["admin_requests"] += 1
        cluster.trace(f"admin -> {dest} {type(msg).__name__}({op.key.id}) cid={cid}")
        cluster._route(msg)
        cluster._at(cluster.now + self.client_timeout_ms, self._client_timeout, cid)

    def _retry(self, op: AdminOp) -> None:
        self.cluster._at(self.cluster.now + self.backoff_ms, self._attempt, op)

    def _target(self) -> int:
        ids = self.cluster.controller_ids()
        if self.leader_guess in ids:
            return self.leader_guess
        self.leader_guess = ids[self.cluster.rng.randrange(len(ids))]
        return self.leader_guess

    # --- answers -----------------------------------------------------------------------------------------------------
    def on_response(self, resp: m.Response) -> None:
        op = self.inflight.pop(resp.correlation_id, None)
        if op is None:
            self.cluster.counters["admin_late_answers"] += 1  # a duplicate, or one we stopped waiting for
            return
        cluster = self.cluster
        op.answers.append((cluster.now, resp.src, m.error_name(resp.error), getattr(resp, "error_message", None)))
        if op.finished():
            return
        error = resp.error
        if error == m.NONE:
            op.done = True
        elif error == m.NOT_LEADER_OR_FOLLOWER:
            cluster.counters["admin_not_leader"] += 1
            self.leader_guess = resp.leader_id if resp.leader_id not in (NO_ID, resp.src) else None
            self._retry(op)
        elif error == m.REQUEST_TIMED_OUT:
            cluster.counters["admin_timed_out"] += 1
            self._retry(op)
        elif error == (DUPLICATE_VOTER if op.kind == "add" else VOTER_NOT_FOUND) and self.applied(op):
            cluster.counters["admin_already_applied"] += 1
            op.done = True
        else:
            op.failed = f"{m.error_name(error)}: {getattr(resp, 'error_message', None)}"

    def on_refused(self, correlation_id: int) -> None:
        op = self.inflight.pop(correlation_id, None)
        if op is not None:
            self.leader_guess = None
            self._retry(op)

    def _client_timeout(self, correlation_id: int) -> None:
        op = self.inflight.pop(correlation_id, None)
        if op is not None:
            self.cluster.counters["admin_client_timeouts"] += 1
            self.leader_guess = None
            self._attempt(op)

    def applied(self, op: AdminOp) -> bool:
        """The committed voter set shows the change (DescribeQuorum would)."""
        voters = self.cluster.committed_voter_set()
        if op.kind == "add":
            return op.key in voters.keys
        return voters.node(op.key.id) is None or voters.node(op.key.id).key != op.key
