"""Controlled shutdown stops the roles' background loops even when one swallows a cancel (as Python 3.11's wait_for
can when the cancel arrives while its inner future completes): the cancel is repeated and the loops check a stop
flag, so shutdown never waits for ever."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from kraftwire.server.node.roles import Roles


def test_a_loop_that_swallows_a_cancel_still_stops():
    roles = Roles.__new__(Roles)
    roles.settings = SimpleNamespace(is_broker=False, node_id=7)
    roles.broker_epoch = -1
    roles._stopping = False
    roles._conn = None
    roles._conn_target = None
    swallowed = []

    async def stubborn():
        while not roles._stopping:
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                swallowed.append(1)  # lost, as wait_for loses it; the loop goes on

    async def main():
        task = asyncio.get_running_loop().create_task(stubborn())
        roles._tasks = [task]
        await asyncio.sleep(0.02)
        await asyncio.wait_for(roles.controlled_shutdown(), 5)  # before the fix: waited for ever
        assert task.done() and roles._tasks == []

    asyncio.run(main())
    assert swallowed, "the cancel never reached the loop"
