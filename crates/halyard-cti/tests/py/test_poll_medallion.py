"""A node polling a medallion collection (`[[poll]]`) shares what it finds over DDS: a second
node of the same sector (same DDS domain, both without DDS Security) serves those objects
through its own TAXII server within a deadline. Restarted, the polling node keeps its
bookmark: it ingests only what medallion added since, not the objects it had already taken in
(fetched again, they would count as duplicates in `GET /api/v1/status`, never as ingested);
and restarting it, killed or stopped cleanly, takes nothing away from the sector.
"""

import time
import uuid

from taxii2client.v21 import Collection

import ctitest as c
from ctitest import PASSWORD

DEADLINE = 30


def versions(node, sector="finance", tlp="green"):
    """(id, version) of every version the node serves in a collection."""
    return sorted(
        (o["id"], o.get("modified", ""))
        for o in node.collection_objects(sector, tlp, **{"match[version]": "all"})
    )


def polling_pair(start_node, start_medallion, domain):
    """medallion with seven objects; a receiving node, then a node polling medallion every
    second, both in the sector finance; returns once the receiver serves the seven."""
    cid = str(uuid.uuid4())
    med = start_medallion([{"id": cid, "title": "feed", "can_read": True, "can_write": True}])
    feed = Collection(med.collection_url(cid), user="admin", password=PASSWORD)
    inds = [c.indicator(i) for i in range(5)]
    mw = c.malware()
    first = inds + [mw, c.relationship(inds[0], "indicates", mw)]
    status = feed.add_objects(c.bundle(first))
    assert status.success_count == len(first)
    poll = (
        "\n[[poll]]\n"
        'name = "medallion-feed"\n'
        f'collection_url = "{med.collection_url(cid)}"\n'
        'username = "admin"\n'
        f'password = "{PASSWORD}"\n'
        "interval_secs = 1\n"
        'sector = "finance"\n'
    )
    receiver = start_node("beta", domain, ["finance"])
    poller = start_node("acme", domain, ["finance"], poll)
    procs = (poller, receiver, med)
    expected = sorted((o["id"], o["modified"]) for o in first)
    c.wait_until("the receiving node serves the polled objects",
                 lambda: versions(receiver) == expected, DEADLINE, procs=procs)
    assert versions(poller) == expected
    status = poller.status()
    assert status["counters"]["ingested"] == len(first), status
    return feed, poller, receiver, procs, expected


def add_one_and_wait(feed, receiver, expected, procs):
    """Adds an object to medallion; waits until the receiver serves it; returns the versions
    the sector should now have."""
    later = c.indicator(10, name="Added after the poller restarted")
    feed.add_objects(c.bundle([later]))
    c.wait_until("the receiving node serves the object added after the restart",
                 lambda: (later["id"], later["modified"]) in versions(receiver), DEADLINE,
                 procs=procs)
    return sorted(expected + [(later["id"], later["modified"])])


def assert_receiver_has(receiver, expected):
    missing = sorted(set(expected) - set(versions(receiver)))
    assert not missing, (
        f"after the poller's restart the receiving node no longer serves {missing}; its audit "
        f"log: {receiver.get('/api/v1/audit').text[:2000]}")
    assert versions(receiver) == expected


def test_polled_objects_reach_the_sector_and_a_restart_does_not_ingest_them_again(
        start_node, start_medallion):
    feed, poller, receiver, procs, expected = polling_pair(start_node, start_medallion, 215)
    # Killed (no chance to clean up) and started again: the bookmark is in the store.
    poller.kill()
    poller.start()
    expected_after = add_one_and_wait(feed, receiver, expected, procs)
    assert_receiver_has(receiver, expected_after)
    assert versions(poller) == expected_after
    status = poller.status()
    # Counters count since start: the one new object ingested, the seven earlier ones not
    # again.
    assert status["counters"]["ingested"] == 1, status
    # A few more polls: nothing new, nothing ingested, nothing new reaches the sector.
    time.sleep(3.5)
    assert poller.status()["counters"]["ingested"] == 1
    assert versions(receiver) == expected_after


def test_a_clean_restart_of_the_poller_takes_nothing_from_the_sector(
        start_node, start_medallion):
    feed, poller, receiver, procs, expected = polling_pair(start_node, start_medallion, 216)
    # SIGTERM: the node stops cleanly (its DDS writers deleted), then starts again. Stopping
    # a node is not deleting what it shared: the other nodes keep serving it.
    poller.stop()
    poller.start()
    expected_after = add_one_and_wait(feed, receiver, expected, procs)
    assert_receiver_has(receiver, expected_after)
    assert versions(poller) == expected_after
    assert poller.status()["counters"]["ingested"] == 1
