"""A broker the controllers refuse retries its registration with Kafka's backoff (BrokerLifecycleManager's
exponential resend backoff, 100 ms doubling up to broker.session.timeout.ms), naming the error; neither side's log
fills with the refusals."""

from __future__ import annotations

import re
import shutil
from datetime import datetime

from harness import processes, roles


def test_a_broker_of_another_cluster_backs_off_and_names_the_error(make_roles_cluster):
    """A broker formatted with another cluster id is refused INCONSISTENT_CLUSTER_ID: it logs the error by name
    and retries a handful of times in a few seconds (100, 200, 400, 800, 1600 ms apart), not dozens a second."""
    cluster = make_roles_cluster(controllers=1, brokers=1, kraft=True)
    broker = cluster.brokers[0]
    shutil.rmtree(broker.cluster.base + "/kraft-logs-2")
    other = processes.kw("storage", "random-uuid").stdout.strip()
    processes.kw("storage", "format", "-t", other, "-c", broker.config)
    cluster.controllers[0].start()
    cluster.wait_for_leader()
    broker.start()

    def refusals() -> list[str]:
        return [line for line in broker.stderr().splitlines() if "BrokerRegistration refused" in line]

    roles.wait_until(lambda: len(refusals()) >= 4, "four refused registrations", cluster)
    lines = refusals()
    assert all("INCONSISTENT_CLUSTER_ID" in line for line in lines), lines[0]
    # the gaps between attempts grow as the backoff does (100, 200, 400 ms, +-2 %); a busy machine only lengthens
    # them, so these are lower bounds (the old loop retried every ~12 ms)
    at = [_logged_at(line) for line in lines[:4]]
    gaps = [b - a for a, b in zip(at, at[1:])]
    assert all(gap >= 0.09 * 2 ** i for i, gap in enumerate(gaps)), (gaps, lines[:4])
    # the Raft fetches of the metadata log, refused as often as they are sent (Kafka's 20 ms retry), are warned
    # about once on each side, not every time
    controller = cluster.controllers[0]
    assert broker.stderr().count("refused our FetchRequest") == 1, broker.stderr()[-2000:]
    assert controller.stderr().count("refused a FetchRequest") == 1, controller.stderr()[-2000:]


def _logged_at(line: str) -> float:
    """The time a log line was written, in seconds (kraftwire's ``[YYYY-MM-DD HH:MM:SS,mmm]`` prefix)."""
    stamp = re.search(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]", line)
    assert stamp is not None, line
    return datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S").timestamp() + int(stamp.group(2)) / 1000
