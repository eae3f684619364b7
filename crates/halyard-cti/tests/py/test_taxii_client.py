"""The node's TAXII 2.1 server through the OASIS client library (taxii2client.v21): discovery,
API root, the collections an account may read, paging, filters, adding objects and the status
resource, single objects, versions, manifests, and authentication failures.

One node (DDS domain 213, sectors finance and energy) serves the whole module; each test reads
its own collection or objects, so the tests do not depend on each other's order.
"""

import time

import pytest
import requests
from taxii2client.exceptions import AccessError
from taxii2client.v21 import ApiRoot, Collection, Server, as_pages

import ctitest as c
from ctitest import PASSWORD, collection_id

DOMAIN = 213
MAX_BODY = 4 << 20
PAGE_SIZE = 50


class Bearer(requests.auth.AuthBase):
    def __init__(self, token):
        self.token = token

    def __call__(self, r):
        r.headers["Authorization"] = f"Bearer {self.token}"
        return r


@pytest.fixture(scope="module")
def node(start_module_node):
    n = start_module_node(
        "acme", DOMAIN, ["finance", "energy"],
        f"\n[limits]\nmax_body_bytes = {MAX_BODY}\npage_size = {PAGE_SIZE}\n",
        start=False,
    )
    n.reader = n.add_user("reader", "read-only", sectors=["finance"], max_tlp="green")
    n.start()
    return n


@pytest.fixture(scope="module")
def data(node):
    """What the module's tests read, posted through the REST API."""
    d = {}
    # finance/clear: 25 indicators, for paging.
    d["paging"] = [c.indicator(i, marking=c.TLP_CLEAR) for i in range(25)]
    _post(node, d["paging"], "finance", "clear")
    # energy/clear: more than a page (limits.page_size) of indicators.
    d["big"] = [c.indicator(i, marking=c.TLP_CLEAR) for i in range(PAGE_SIZE + 10)]
    _post(node, d["big"], "energy", "clear")
    # finance/green: a small graph and an indicator with three versions.
    inds = [c.indicator(100 + i) for i in range(3)]
    mw = c.malware()
    rels = [c.relationship(inds[0], "indicates", mw), c.relationship(inds[1], "indicates", mw)]
    v1 = c.indicator(200, name="Phishing kit v1")
    v2 = c.new_version(v1, 300, name="Phishing kit v2")
    v3 = c.new_version(v1, 400, name="Phishing kit v3")
    d.update(indicators=inds, malware=mw, relationships=rels, versions=[v1, v2, v3])
    _post(node, inds + [mw] + rels + [v1], "finance", "green")
    _post(node, [v2], "finance", "green")
    _post(node, [v3], "finance", "green")
    # energy/green: what a finance-only reader must not see.
    d["energy"] = [c.indicator(300)]
    _post(node, d["energy"], "energy", "green")
    return d


def _post(node, objs, sector, tlp):
    report = node.post_bundle(objs, sector=sector, tlp=tlp)
    got = [(r["id"], r["disposition"]) for r in report["results"]]
    assert got == [(o["id"], "shared") for o in objs], report


def _collection(node, sector, tlp, auth=None):
    user, password = auth or node.admin
    return Collection(node.collection_url(sector, tlp), user=user, password=password)


def ids_of(envelope):
    return [o["id"] for o in envelope.get("objects", [])]


def test_server_discovery_names_the_api_root(node):
    s = Server(node.taxii, user="admin", password=PASSWORD)
    assert isinstance(s.title, str) and s.title
    assert [r.url for r in s.api_roots] == [node.api_root]
    assert s.default is not None and s.default.url == node.api_root


def test_api_root_information(node):
    root = ApiRoot(node.api_root, user="admin", password=PASSWORD)
    assert isinstance(root.title, str) and root.title
    assert c.TAXII in root.versions
    assert root.max_content_length == MAX_BODY


def test_an_admin_sees_every_collection_of_the_node(node):
    root = ApiRoot(node.api_root, user="admin", password=PASSWORD)
    got = {col.id: col for col in root.collections}
    expected = {
        collection_id(s, t)
        for s in ["finance", "energy"]
        for t in ["clear", "green", "amber", "red"]
    } | {collection_id(None, t) for t in ["clear", "green", "amber", "amber+strict", "red"]}
    assert set(got) == expected
    for col in got.values():
        assert col.can_read and col.can_write, col._raw
        assert c.STIX in col.media_types, col._raw
        assert col.title


def test_a_reader_sees_only_its_sector_and_clearance(node, data):
    user, password = node.reader
    root = ApiRoot(node.api_root, user=user, password=password)
    got = {col.id: col for col in root.collections}
    # The node's rule: its sectors within the account's (finance), the local collection,
    # markings up to the account's clearance (GREEN).
    assert set(got) == {
        collection_id("finance", "clear"), collection_id("finance", "green"),
        collection_id(None, "clear"), collection_id(None, "green"),
    }
    for col in got.values():
        assert col.can_read and not col.can_write, col._raw
    green = got[collection_id("finance", "green")]
    assert set(ids_of(green.get_objects())) >= {o["id"] for o in data["indicators"]}
    # Another sector's collection, and a marking above the clearance, cannot be read.
    for sector, tlp in [("energy", "green"), ("finance", "amber")]:
        r = node.get(f"/taxii2/api/collections/{collection_id(sector, tlp)}/objects/",
                     auth=node.reader)
        assert r.status_code in (403, 404), (sector, tlp, r.status_code, r.text)
    with pytest.raises(requests.HTTPError) as e:
        Collection(node.collection_url("energy", "green"), user=user,
                   password=password).get_objects()
    assert e.value.response.status_code in (403, 404)
    # It may not write: the client refuses from can_write, the server answers 403.
    with pytest.raises(AccessError):
        green.add_objects(c.bundle([c.indicator(999)]))
    r = requests.post(green.objects_url, auth=node.reader, data="{}", timeout=30,
                      headers={"Accept": c.TAXII, "Content-Type": c.TAXII})
    assert r.status_code == 403, (r.status_code, r.text)


def test_paging_over_three_pages(node, data):
    col = _collection(node, "finance", "clear")
    posted = [o["id"] for o in data["paging"]]
    pages = list(as_pages(col.get_objects, per_request=10))
    assert [len(p.get("objects", [])) for p in pages] == [10, 10, 5]
    assert [p.get("more", False) for p in pages] == [True, True, False]
    assert all(p.get("next") for p in pages[:-1])
    got = [i for p in pages for i in ids_of(p)]
    # Each object once.
    assert len(got) == len(posted) and set(got) == set(posted)
    man_pages = list(as_pages(col.get_manifest, per_request=10))
    assert [len(p.get("objects", [])) for p in man_pages] == [10, 10, 5]
    man_ids = [m["id"] for p in man_pages for m in p["objects"]]
    assert len(man_ids) == len(posted) and set(man_ids) == set(posted)
    # Sorted by date_added, ascending (TAXII 2.1 section 3.4).
    added = [m["date_added"] for p in man_pages for m in p["objects"]]
    assert added == sorted(added)


def test_a_page_is_capped_by_the_node_s_page_size(node, data):
    col = _collection(node, "energy", "clear")
    env = col.get_objects(limit=1000)
    assert len(env["objects"]) == PAGE_SIZE
    assert env.get("more") is True and env.get("next")
    got = [i for p in as_pages(col.get_objects, per_request=1000) for i in ids_of(p)]
    assert sorted(got) == sorted(o["id"] for o in data["big"])


def test_added_after_returns_only_later_additions(node):
    col = _collection(node, "finance", "amber")
    first = [c.indicator(500 + i, marking=c.TLP_AMBER) for i in range(3)]
    _post(node, first, "finance", "amber")
    mark = max(m["date_added"] for m in col.get_manifest()["objects"])
    time.sleep(0.01)
    later = [c.indicator(600 + i, marking=c.TLP_AMBER) for i in range(2)]
    _post(node, later, "finance", "amber")
    assert ids_of(col.get_objects(added_after=mark)) == [o["id"] for o in later]
    man = col.get_manifest(added_after=mark)["objects"]
    assert [m["id"] for m in man] == [o["id"] for o in later]
    assert all(m["date_added"] > mark for m in man)
    assert set(ids_of(col.get_objects(added_after="2000-01-01T00:00:00.000Z"))) == {
        o["id"] for o in first + later
    }
    # Nothing is added after the last one.
    last = max(m["date_added"] for m in col.get_manifest()["objects"])
    assert col.get_objects(added_after=last).get("objects", []) == []


def test_match_type_and_id(node, data):
    col = _collection(node, "finance", "green")
    assert ids_of(col.get_objects(type="malware")) == [data["malware"]["id"]]
    assert set(ids_of(col.get_objects(type=["malware", "relationship"]))) == {
        data["malware"]["id"], *(r["id"] for r in data["relationships"])
    }
    wanted = [data["indicators"][0]["id"], data["relationships"][1]["id"]]
    assert set(ids_of(col.get_objects(id=wanted))) == set(wanted)
    assert ids_of(col.get_objects(type="indicator", id=[data["malware"]["id"]])) == []
    assert col.get_objects(type="campaign").get("objects", []) == []


def test_match_version(node, data):
    col = _collection(node, "finance", "green")
    v1, v2, v3 = data["versions"]
    vid = v1["id"]

    def versions(**kw):
        return sorted(o["modified"] for o in col.get_objects(id=vid, **kw).get("objects", []))

    assert versions() == [v3["modified"]]  # the latest by default
    assert versions(version="last") == [v3["modified"]]
    assert versions(version="first") == [v1["modified"]]
    assert versions(version="all") == sorted(v["modified"] for v in (v1, v2, v3))
    assert versions(version=v2["modified"]) == [v2["modified"]]
    assert versions(version=[v1["modified"], v3["modified"]]) == sorted(
        [v1["modified"], v3["modified"]])
    # Without match[id]: every object's latest version, and all of them with "all".
    all_latest = col.get_objects()["objects"]
    assert len(all_latest) == len({o["id"] for o in all_latest})
    assert len(col.get_objects(version="all")["objects"]) == len(all_latest) + 2


def test_match_version_first_and_last_together(node, data):
    # TAXII 2.1 section 3.4: the comma-separated values of a match field are ORed, so
    # match[version]=first,last is each object's first and last versions (as medallion says).
    col = _collection(node, "finance", "green")
    v1, _v2, v3 = data["versions"]
    got = col.get_objects(id=v1["id"], version=["first", "last"]).get("objects", [])
    assert sorted(o["modified"] for o in got) == sorted([v1["modified"], v3["modified"]])


def test_add_objects_then_status_and_get(node):
    col = _collection(node, "finance", "green")
    new = [c.indicator(700), c.indicator(701, pattern="[domain-name:value = 'evil.example']")]
    status = col.add_objects(c.bundle(new))
    assert status.status == "complete"
    assert (status.total_count, status.success_count, status.failure_count,
            status.pending_count) == (2, 2, 0, 0)
    assert sorted(s["id"] for s in status.successes) == sorted(o["id"] for o in new)
    assert {s["version"] for s in status.successes} == {o["modified"] for o in new}
    root = ApiRoot(node.api_root, user="admin", password=PASSWORD)
    again = root.get_status(status.id)
    assert again.id == status.id
    assert (again.status, again.total_count, again.success_count, again.failure_count,
            again.pending_count) == ("complete", 2, 2, 0, 0)
    assert again.request_timestamp
    for o in new:
        got = col.get_object(o["id"])["objects"]
        assert len(got) == 1
        assert {k: got[0][k] for k in ("id", "type", "modified", "pattern")} == {
            k: o[k] for k in ("id", "type", "modified", "pattern")
        }
        assert col.object_versions(o["id"])["versions"] == [o["modified"]]
    # Posting the same versions again stores nothing new; the status still adds up.
    again = col.add_objects(c.bundle(new))
    assert again.total_count == 2
    assert again.success_count + again.failure_count + again.pending_count == 2
    assert len(col.get_objects(id=[o["id"] for o in new], version="all")["objects"]) == 2


def test_get_object_and_its_versions(node, data):
    col = _collection(node, "finance", "green")
    v1, v2, v3 = data["versions"]
    got = col.get_object(v1["id"])["objects"]
    assert [(o["id"], o["modified"], o["name"]) for o in got] == [
        (v3["id"], v3["modified"], v3["name"])]
    assert sorted(o["modified"] for o in col.get_object(v1["id"], version="all")["objects"]) \
        == sorted(v["modified"] for v in (v1, v2, v3))
    assert [o["modified"] for o in col.get_object(v1["id"], version="first")["objects"]] == [
        v1["modified"]]
    versions = col.object_versions(v1["id"])
    assert sorted(versions["versions"]) == sorted(v["modified"] for v in (v1, v2, v3))
    assert versions.get("more", False) is False
    with pytest.raises(requests.HTTPError) as e:
        col.get_object(f"indicator--{c.stix_id('x').split('--')[1]}")
    assert e.value.response.status_code == 404


def test_manifest(node, data):
    col = _collection(node, "finance", "green")
    man = col.get_manifest(id=[o["id"] for o in data["indicators"]] + [data["versions"][0]["id"]])
    recs = {m["id"]: m for m in man["objects"]}
    assert set(recs) == {o["id"] for o in data["indicators"]} | {data["versions"][0]["id"]}
    for m in recs.values():
        assert m["media_type"] == c.STIX
        assert m["date_added"]
    assert recs[data["versions"][0]["id"]]["version"] == data["versions"][2]["modified"]
    every = col.get_manifest(id=data["versions"][0]["id"], version="all")["objects"]
    assert sorted(m["version"] for m in every) == sorted(v["modified"] for v in data["versions"])
    assert [m["id"] for m in col.get_manifest(type="malware")["objects"]] == [
        data["malware"]["id"]]


def test_authentication_failures(node):
    for user, password in [("admin", "wrong password!"), ("nobody", PASSWORD)]:
        s = Server(node.taxii, user=user, password=password)
        with pytest.raises(requests.HTTPError) as e:
            s.title
        assert e.value.response.status_code == 401, (user, e.value.response.text)
    r = requests.get(node.taxii, headers={"Accept": c.TAXII}, timeout=30)
    assert r.status_code == 401, r.text
    with pytest.raises(requests.HTTPError) as e:
        _collection(node, "finance", "green", auth=("admin", "wrong password!")).get_objects()
    assert e.value.response.status_code == 401
    # An API token works as a bearer credential; an unknown one does not.
    token = node.token("admin")
    assert Server(node.taxii, auth=Bearer(token)).title
    with pytest.raises(requests.HTTPError) as e:
        Server(node.taxii, auth=Bearer(token[:-2] + "xx")).title
    assert e.value.response.status_code == 401
