"""Seeds that once failed during development, kept as named regression tests (each names the bug it found)."""

from __future__ import annotations

import pytest

from kraftwire.testing.properties import PROPERTIES

pytestmark = pytest.mark.sim

REGRESSIONS = [
    # a candidate in backoff woke up at a past election deadline forever (zero-progress loop)
    ("candidate_backoff_busy_loop", "elect_initial_leader", 2),
    # a prospective learned "leader L in my epoch" from pre-vote answers and went back to following the dead L
    ("prospective_returned_to_dead_leader", "leader_failover", 7),
    # after truncation the next Fetch was built from the pre-truncation log end in the same step
    ("fetch_offset_before_truncation_applied", "leader_partitioned", 9),
    # a follower that truncated kept its old flushed offset, then led and replicated unflushed data
    ("flushed_offset_survived_truncation", "leader_partitioned", 0),
    # an observer kept fetching from a dead leader instead of asking the voters
    ("observer_never_rediscovered_leader", "chaos", 70),
    # the fault injector flipped a PartitionLeaderEpoch bit (outside the CRC, undetectable by design): fixed in the
    # fault model, which now flips only bytes a receiver can check
    ("undetectable_epoch_bit_flip", "chaos", 499),
    # without pre-vote, a voter with a stale log kept restarting everyone's election timer with its candidacies
    ("stale_candidate_livelock", "back_to_back_failures", 20),
    ("stale_candidate_livelock_2", "back_to_back_failures", 272),
    # KIP-853: an observer that once fetched from its leader refused pre-votes forever; the leader of {1} had just
    # added it, was cut off, and could never be re-elected without its vote
    ("observer_refused_prevotes_forever", "grow_and_shrink", 0),
    # a leader that removed itself (uncommitted) stopped being a voter: no check-quorum, so once cut off it led its
    # stale epoch forever; and from two voters to one, a removed leader with the longest log never ran again
    ("removed_leader_kept_its_stale_epoch", "grow_and_shrink", 57),
    ("removed_leader_never_ran_again", "grow_and_shrink", 103),
    # a leader whose self-removal committed after the RemoveRaftVoter request timed out never resigned
    ("self_removal_committed_after_timeout", "grow_and_shrink", 86),
    # an observer whose fetch to its leader went unanswered once asked, forever, the one voter that kept answering
    # NOT_LEADER naming that (now "quiet") leader
    ("observer_stuck_on_a_quiet_leader", "grow_and_shrink", 495),
    # a wiped voter observing under its old id picked itself to fetch (a snapshot) from
    ("wiped_voter_fetched_from_itself", "replace_wiped_voter", 3),
    # an observer downloading a snapshot ignored a non-leader voter's NOT_LEADER answers and kept asking it
    ("observer_snapshot_download_stuck_on_a_follower", "replace_wiped_voter", 36),
    # issue #35 item 13: a follower of two voters came back on another port after its leader resigned holding
    # records it never fetched: the leader could not dial it, and refused it every vote; and once it led, the other
    # voter could not dial it either (no leader, then no commits, ever)
    ("moved_voter_never_elected", "voter_moves_while_leaderless", 0),
]


@pytest.mark.parametrize("name, prop, seed", REGRESSIONS, ids=[r[0] for r in REGRESSIONS])
def test_regression_seed(name, prop, seed):
    PROPERTIES[prop](seed)
