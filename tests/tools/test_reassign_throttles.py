"""The throttles ``reassign-partitions --execute --throttle`` sets (``tools.reassign_throttles``), mirrored from
Kafka's ReassignPartitionsUnitTest.testMoveMap."""

from __future__ import annotations

from types import SimpleNamespace

from kraftwire.tools import reassign_throttles as rt


def _moving(replicas, adding, removing):
    return SimpleNamespace(replicas=replicas, adding_replicas=adding, removing_replicas=removing)


def test_move_map():
    """ReassignPartitionsUnitTest.testMoveMap: foo-0 overwritten with another target, foo-1 kept, foo-2 the same
    again, foo-3 without overlap, foo-4 a subset, foo-5 a superset, bar-0 new."""
    ongoing = {("foo", 0): _moving([1, 2, 3, 4], [4], [3]), ("foo", 1): _moving([4, 5, 6, 7, 8], [7, 8], [4, 5]),
               ("foo", 2): _moving([1, 2, 3, 4], [3, 4], [1, 2]), ("foo", 3): _moving([1, 2, 3, 4], [3, 4], [1, 2]),
               ("foo", 4): _moving([1, 2, 3, 4], [3, 4], [1, 2]), ("foo", 5): _moving([1, 2, 3, 4], [3, 4], [1, 2])}
    proposed = {("foo", 0): [1, 2, 5], ("foo", 2): [3, 4], ("foo", 3): [5, 6], ("foo", 4): [3],
                ("foo", 5): [3, 4, 5, 6], ("bar", 0): [1, 2, 3]}
    current = {("foo", 0): [1, 2, 3, 4], ("foo", 1): [4, 5, 6, 7, 8], ("foo", 2): [1, 2, 3, 4],
               ("foo", 3): [1, 2, 3, 4], ("foo", 4): [1, 2, 3, 4], ("foo", 5): [1, 2, 3, 4], ("bar", 0): [2, 3, 4],
               ("baz", 0): [1, 2, 3]}
    moves = rt.move_map(ongoing, proposed, current)
    assert moves["foo"] == {0: ({1, 2, 3}, {5}), 1: ({4, 5, 6}, {7, 8}), 2: ({1, 2}, {3, 4}), 3: ({1, 2}, {5, 6}),
                            4: ({1, 2}, {3}), 5: ({1, 2}, {3, 4, 5, 6})}
    assert moves["bar"] == {0: ({2, 3, 4}, {1})}
    assert rt.leader_throttles(moves) == {"foo": "0:1,0:2,0:3,1:4,1:5,1:6,2:1,2:2,3:1,3:2,4:1,4:2,5:1,5:2",
                                          "bar": "0:2,0:3,0:4"}
    assert rt.follower_throttles(moves) == {"foo": "0:5,1:7,1:8,2:3,2:4,3:5,3:6,4:3,5:3,5:4,5:5,5:6", "bar": "0:1"}
    assert rt.reassigning_brokers(moves) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_lists_sort_as_strings_as_kafkas_tree_set():
    moves = rt.move_map({}, {("t", 10): [1], ("t", 2): [1]}, {("t", 10): [3], ("t", 2): [3]})
    assert rt.leader_throttles(moves) == {"t": "10:3,2:3"} and rt.follower_throttles(moves) == {"t": "10:1,2:1"}
