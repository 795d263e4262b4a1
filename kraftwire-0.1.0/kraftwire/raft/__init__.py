"""The pure KRaft core: a deterministic Raft state machine (KIP-595, KIP-996 pre-vote, KIP-630 snapshots).

No I/O, no clock, no randomness of its own: time comes in as ``now_ms``, deadlines go out as
``Ready.next_wakeup_ms``, randomness comes from an injected ``Rng`` (``random.Random`` fits).

Public surface (import from the modules):

* ``node.RaftNode(config, log_view, stored_election_state, rng, now_ms, serde=None)``
  ``.handle(event, now_ms) -> Ready`` and ``.poll(now_ms) -> Ready`` (execute every Ready in full, in field order,
  before calling again); client calls ``.schedule_append(records, now_ms) -> last offset``,
  ``.append_batch(raw_batch, now_ms) -> (first, last)``, ``.resign(now_ms)``, ``.register(listener)``;
  reads ``.leader_and_epoch()``, ``.is_leader()``, ``.epoch``, ``.state_name``, ``.high_watermark``, ``.counters``.
* ``config.RaftConfig`` (Kafka's ``controller.quorum.*`` settings) and ``config.Mutations`` (test-only bugs).
* ``events``: ``Received(message)``, ``LogFlushed(offset)``, ``RequestFailed(destination, correlation_id)``,
  ``SnapshotStored(end_offset, epoch)``.
* ``ready``: ``Ready`` and its log / snapshot operations (the persist-before-send contract is written there).
* ``messages``: the typed RPCs (Vote with PreVote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot,
  DescribeQuorum) with Kafka error codes; the network edge translates them to and from the wire.
* ``listener``: ``RecordSerde``, ``Listener`` (``handle_commit``, ``handle_load_snapshot``,
  ``handle_leader_change``), ``SnapshotSource`` (``snapshot_records``), ``Batch``, ``LeaderAndEpoch``.
* ``election.ElectionState``: what the driver persists in ``quorum-state``.
"""
