"""The node's TAXII 2.1 answers are those of medallion, the OASIS reference server: the same
objects are added to a medallion collection and to the node's finance/green collection, in
the same three requests, through taxii2client; then the same sequence of client calls is made
against both and the normalised answers must be equal. Both must also refuse the same bad
requests with the same HTTP status.

Normalisations (what legitimately differs between two servers), each applied in `norm_*`:
- collection ids, titles and URLs: each server names its collections its own way, so each
  call is made on each server's own collection object;
- `date_added`: the time each server stored a version; dropped from manifest records, and the
  `added_after` query uses each server's own date_added of the first request's objects;
- status resource ids and request timestamps: made by each server; only the counts and the
  listed (id, version) pairs are compared;
- `next`: an opaque token of each server; only its presence is compared (with `more`);
- the order of an envelope's objects, a manifest's records and a versions list: medallion
  sorts versions newest first while TAXII 2.1 leaves the versions list's order to the server,
  and versions added by one request share one date_added in medallion (their relative order is
  then unspecified), so these are compared as sorted lists (pages: only their sizes and `more`
  flags, and the union of their contents).
"""

import time
import uuid

import pytest
import requests
from taxii2client.v21 import ApiRoot, Collection, as_pages

import ctitest as c
from ctitest import PASSWORD

DOMAIN = 214


@pytest.fixture(scope="module")
def objects():
    inds = [c.indicator(i) for i in range(6)]
    mw = c.malware()
    rels = [c.relationship(inds[0], "indicates", mw), c.relationship(inds[1], "indicates", mw)]
    v1 = c.indicator(50, name="Loader v1")
    v2 = c.new_version(v1, 60, name="Loader v2")
    v3 = c.new_version(v1, 70, name="Loader v3")
    late = [c.indicator(80), c.indicator(81)]
    return {
        "indicators": inds, "malware": mw, "relationships": rels, "versions": [v1, v2, v3],
        "late": late,
        # The three add requests, in order.
        "requests": [inds + [mw] + rels + [v1], [v2], [v3] + late],
    }


class Server:
    """One side of the comparison: a collection, its API root, and the date_added mark (the
    latest date_added after the first add request)."""

    def __init__(self, name, collection, api_root, auth):
        self.name = name
        self.col = collection
        self.root = api_root
        self.auth = auth
        self.statuses = []
        self.mark = None


def _load(server, objects):
    for i, objs in enumerate(objects["requests"]):
        server.statuses.append(server.col.add_objects(c.bundle(objs)))
        if i == 0:
            server.mark = max(m["date_added"] for m in server.col.get_manifest()["objects"])
            time.sleep(0.01)


@pytest.fixture(scope="module")
def servers(start_module_node, start_module_medallion, objects):
    cid = str(uuid.uuid4())
    med = start_module_medallion(
        [{"id": cid, "title": "finance green", "can_read": True, "can_write": True}])
    node = start_module_node("acme", DOMAIN, ["finance"])
    a = Server("medallion", Collection(med.collection_url(cid), user="admin", password=PASSWORD),
               med.api_root, med.admin)
    b = Server("node", Collection(node.collection_url("finance", "green"), user="admin",
                                  password=PASSWORD), node.api_root, node.admin)
    for s in (a, b):
        _load(s, objects)
    return a, b


def norm_envelope(env):
    """(id, version) of each object, sorted; `more`; whether `next` is there."""
    objs = env.get("objects", [])
    return (sorted((o["id"], o.get("modified", o.get("created", ""))) for o in objs),
            env.get("more", False), bool(env.get("next")))


def norm_manifest(env):
    """(id, version, media_type) of each record, sorted (date_added dropped); `more`."""
    recs = env.get("objects", [])
    return (sorted((m["id"], m["version"], m.get("media_type")) for m in recs),
            env.get("more", False), bool(env.get("next")))


def norm_versions(env):
    return sorted(env.get("versions", [])), env.get("more", False)


def norm_pages(pages, key):
    """Each page's size and `more`; the union of the pages' items, sorted."""
    shape = [(len(p.get(key, [])), p.get("more", False)) for p in pages]
    items = sorted(
        (o["id"], o.get("version", o.get("modified", o.get("created", ""))))
        for p in pages for o in p.get(key, [])
    )
    return shape, items


def norm_status(st):
    return (st.status, st.total_count, st.success_count, st.failure_count, st.pending_count,
            sorted((s["id"], s["version"]) for s in st.successes or []))


def queries(objects):
    """(name, call on a Server, normaliser): the sequence of client calls compared."""
    inds, mw, rels = objects["indicators"], objects["malware"], objects["relationships"]
    v1, v2, v3 = objects["versions"]
    vid = v1["id"]
    return [
        ("all objects", lambda s: s.col.get_objects(), norm_envelope),
        ("type indicator", lambda s: s.col.get_objects(type="indicator"), norm_envelope),
        ("types malware, relationship",
         lambda s: s.col.get_objects(type=["malware", "relationship"]), norm_envelope),
        ("ids", lambda s: s.col.get_objects(id=[inds[2]["id"], rels[0]["id"], vid]),
         norm_envelope),
        ("unknown id", lambda s: s.col.get_objects(id=c.stix_id("indicator")), norm_envelope),
        ("version all", lambda s: s.col.get_objects(version="all"), norm_envelope),
        ("version first", lambda s: s.col.get_objects(version="first"), norm_envelope),
        ("version last", lambda s: s.col.get_objects(version="last"), norm_envelope),
        # TAXII 2.1 section 3.4: a match field's comma-separated values are ORed.
        ("versions first and last", lambda s: s.col.get_objects(version=["first", "last"]),
         norm_envelope),
        ("specific version", lambda s: s.col.get_objects(id=vid, version=v2["modified"]),
         norm_envelope),
        ("two specific versions",
         lambda s: s.col.get_objects(id=vid, version=[v1["modified"], v3["modified"]]),
         norm_envelope),
        ("type and version all",
         lambda s: s.col.get_objects(type="indicator", version="all"), norm_envelope),
        ("added_after the first request",
         lambda s: s.col.get_objects(added_after=s.mark), norm_envelope),
        ("added_after, version all",
         lambda s: s.col.get_objects(added_after=s.mark, version="all"), norm_envelope),
        ("manifest", lambda s: s.col.get_manifest(), norm_manifest),
        ("manifest version all", lambda s: s.col.get_manifest(version="all"), norm_manifest),
        ("manifest type malware", lambda s: s.col.get_manifest(type="malware"), norm_manifest),
        ("manifest added_after", lambda s: s.col.get_manifest(added_after=s.mark),
         norm_manifest),
        ("get object", lambda s: s.col.get_object(vid), norm_envelope),
        ("get object, all versions", lambda s: s.col.get_object(vid, version="all"),
         norm_envelope),
        ("get object, first version", lambda s: s.col.get_object(vid, version="first"),
         norm_envelope),
        ("object versions", lambda s: s.col.object_versions(vid), norm_versions),
        ("single-version object's versions", lambda s: s.col.object_versions(mw["id"]),
         norm_versions),
        ("objects in pages of 4", lambda s: list(as_pages(s.col.get_objects, per_request=4)),
         lambda p: norm_pages(p, "objects")),
        ("all versions in pages of 5",
         lambda s: list(as_pages(s.col.get_objects, per_request=5, version="all")),
         lambda p: norm_pages(p, "objects")),
        ("manifest in pages of 3", lambda s: list(as_pages(s.col.get_manifest, per_request=3)),
         lambda p: norm_pages(p, "objects")),
    ]


def test_adding_gives_the_same_status(servers):
    a, b = servers
    assert [norm_status(s) for s in a.statuses] == [norm_status(s) for s in b.statuses]
    # And the status resource read back says the same.
    for s in (a, b):
        root = ApiRoot(s.root, user="admin", password=PASSWORD)
        st = s.statuses[0]
        assert norm_status(root.get_status(st.id)) == norm_status(st), s.name


def test_the_same_queries_give_the_same_answers(servers, objects):
    a, b = servers
    differences = []
    for name, call, norm in queries(objects):
        got = {}
        for s in (a, b):
            try:
                got[s.name] = norm(call(s))
            except requests.HTTPError as e:
                got[s.name] = f"HTTP {e.response.status_code}"
        if got[a.name] != got[b.name]:
            differences.append(f"{name}:\n  medallion: {got[a.name]}\n  node:      {got[b.name]}")
    assert not differences, "answers differ:\n" + "\n".join(differences)


def test_the_answers_are_not_trivial(servers, objects):
    # Guards the comparison above against two servers agreeing on nothing at all.
    a, b = servers
    v1 = objects["versions"][0]
    assert len(b.col.get_objects(version="all")["objects"]) == 6 + 1 + 2 + 3 + 2
    assert norm_versions(a.col.object_versions(v1["id"]))[0] == sorted(
        v["modified"] for v in objects["versions"])
    assert [len(p["objects"]) for p in as_pages(a.col.get_objects, per_request=4)] == [4, 4, 4]


def _bad_requests(s, cid_url):
    """(name, response) of bad requests, relative to a collection URL."""
    ok = {"Accept": c.TAXII}
    unknown = cid_url.rsplit("/", 2)[0] + f"/{uuid.uuid4()}/"
    return [
        ("unknown collection", requests.get(unknown, auth=s.auth, headers=ok)),
        ("unknown collection's objects", requests.get(unknown + "objects/", auth=s.auth,
                                                      headers=ok)),
        ("unknown object", requests.get(cid_url + f"objects/{c.stix_id('indicator')}/",
                                        auth=s.auth, headers=ok)),
        ("unknown object's versions",
         requests.get(cid_url + f"objects/{c.stix_id('indicator')}/versions/", auth=s.auth,
                      headers=ok)),
        ("Accept: application/json", requests.get(cid_url + "objects/", auth=s.auth,
                                                  headers={"Accept": "application/json"})),
        ("Accept: TAXII 2.0", requests.get(cid_url + "objects/", auth=s.auth,
                                           headers={"Accept": "application/taxii+json;version=2.0"})),
        ("POST with Content-Type: application/json",
         requests.post(cid_url + "objects/", auth=s.auth, data=b'{"objects": []}',
                       headers={"Accept": c.TAXII, "Content-Type": "application/json"})),
        ("POST with the STIX media type",
         requests.post(cid_url + "objects/", auth=s.auth, data=b'{"objects": []}',
                       headers={"Accept": c.TAXII, "Content-Type": c.STIX})),
        ("wrong password", requests.get(cid_url + "objects/", auth=("admin", "wrong password!"),
                                        headers=ok)),
        ("no credentials", requests.get(cid_url + "objects/", headers=ok)),
    ]


def test_both_refuse_the_same_bad_requests(servers):
    a, b = servers
    got = {s.name: [(n, r.status_code) for n, r in _bad_requests(s, s.col.url)] for s in (a, b)}
    assert got["medallion"] == got["node"]
    # The statuses TAXII 2.1 gives these, so that agreeing on a wrong one fails too.
    assert [code for _, code in got["node"]] == [404, 404, 404, 404, 406, 406, 415, 415, 401,
                                                 401]
