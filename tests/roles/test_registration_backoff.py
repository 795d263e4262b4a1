"""A broker the controllers refuse retries its registration with Kafka's backoff (BrokerLifecycleManager's
exponential resend backoff, 100 ms doubling up to broker.session.timeout.ms), naming the error; neither side's log
fills with the refusals."""

from __future__ import annotations

import shutil
import time

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
    roles.wait_until(lambda: "BrokerRegistration refused" in broker.stderr(), "a refused registration", cluster)
    time.sleep(3.0)  # attempts 0.1, 0.3, 0.7, 1.5 and 3.1 s after the first
    refusals = [line for line in broker.stderr().splitlines() if "BrokerRegistration refused" in line]
    assert 2 <= len(refusals) <= 8, f"{len(refusals)} refusals in about 3 s:\n" + "\n".join(refusals[:10])
    assert all("INCONSISTENT_CLUSTER_ID" in line for line in refusals), refusals[0]
    # the Raft fetches of the metadata log, refused as often as they are sent (Kafka's 20 ms retry), are warned
    # about once on each side, not every time
    controller = cluster.controllers[0]
    assert broker.stderr().count("refused our FetchRequest") == 1, broker.stderr()[-2000:]
    assert controller.stderr().count("refused a FetchRequest") == 1, controller.stderr()[-2000:]
