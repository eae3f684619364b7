"""A node polling a medallion collection (`[[poll]]`) shares what it finds over DDS: a second
node of the same sector (same DDS domain, both without DDS Security) serves those objects
through its own TAXII server within a deadline. Restarted, the polling node keeps its
bookmark: it ingests only what medallion added since, not the objects it had already taken in.
"""

import time
import uuid

from taxii2client.v21 import Collection

import ctitest as c
from ctitest import PASSWORD

DOMAIN = 215
DEADLINE = 30


def versions(node, sector="finance", tlp="green"):
    """(id, version) of every version the node serves in a collection."""
    return sorted(
        (o["id"], o.get("modified", ""))
        for o in node.collection_objects(sector, tlp, **{"match[version]": "all"})
    )


def test_polled_objects_reach_the_sector_and_a_restart_does_not_ingest_them_again(
        start_node, start_medallion):
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
    receiver = start_node("beta", DOMAIN, ["finance"])
    poller = start_node("acme", DOMAIN, ["finance"], poll)
    procs = (poller, receiver, med)
    expected = sorted((o["id"], o["modified"]) for o in first)

    c.wait_until("the receiving node serves the polled objects",
                 lambda: versions(receiver) == expected, DEADLINE, procs=procs)
    assert versions(poller) == expected
    before = poller.status()
    assert before["counters"]["ingested"] == len(first), before

    # Restart the poller; medallion then gets one new object. Only that one is ingested.
    poller.stop()
    poller.start()
    later = c.indicator(10, name="Added after the poller restarted")
    feed.add_objects(c.bundle([later]))
    expected_after = sorted(expected + [(later["id"], later["modified"])])
    c.wait_until("the receiving node serves the object added after the restart",
                 lambda: (later["id"], later["modified"]) in versions(receiver), DEADLINE,
                 procs=procs)
    # Stopping and starting the poller takes nothing away from the sector.
    missing = sorted(set(expected_after) - set(versions(receiver)))
    assert not missing, (
        f"after the poller's restart the receiving node no longer serves {missing}; its audit "
        f"log: {receiver.get('/api/v1/audit').text[:2000]}")
    assert versions(receiver) == expected_after
    assert versions(poller) == expected_after
    after = poller.status()
    # Counters count since start: the one new object ingested, the seven earlier ones not
    # again (fetched again, they would be counted as duplicates, never as ingested).
    assert after["counters"]["ingested"] == 1, after
    # A few more polls: nothing new, nothing ingested, nothing new reaches the sector.
    time.sleep(3.5)
    assert poller.status()["counters"]["ingested"] == 1
    assert versions(receiver) == expected_after
