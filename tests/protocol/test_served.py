"""The served-API table is the one source of api keys and served versions, and it never claims more than the
declared schemas can encode."""

from __future__ import annotations

import pytest

from kraftwire.protocol import messages as w
from kraftwire.protocol import served
from kraftwire.server.edge.dispatcher import Dispatcher


@pytest.mark.parametrize("name", sorted(served.SERVED))
def test_every_served_range_lies_inside_the_declared_one(name):
    lo, hi = served.versions(name)
    declared_lo, declared_hi = w.api(name).valid_versions
    assert 0 <= lo <= hi, (name, lo, hi)
    assert declared_lo <= lo and hi <= declared_hi, (name, (lo, hi), (declared_lo, declared_hi))


def test_keys_come_from_the_declared_messages():
    assert served.key("Produce") == w.ProduceRequest.API_KEY == 0
    assert served.key("BrokerHeartbeat") == 63
    assert served.keys("Vote", "Fetch") == frozenset({52, 1})


def test_an_api_kraftwire_does_not_serve_is_named():
    with pytest.raises(KeyError, match="does not serve DescribeDelegationToken"):
        served.versions("DescribeDelegationToken")


def test_the_dispatcher_registers_the_served_range():
    d = Dispatcher()
    d.serve("OffsetCommit", lambda request, conn: None)
    d.serve("Fetch", lambda request, conn: None, min_version=served.RAFT_FETCH_MIN_VERSION)
    assert d.registered()[8] == served.versions("OffsetCommit") == (2, 10)
    assert d.registered()[1] == (13, 18)
    d.serve("OffsetFetch", lambda request, conn: None, max_version=9)  # a caller serving less (the test server)
    assert d.registered()[9] == (1, 9)
    assert d.registered()[18] == served.versions("ApiVersions")
    assert d.serves("OffsetCommit") and not d.serves("Produce")
