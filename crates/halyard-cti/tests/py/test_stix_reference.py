"""What the node stores and serves is valid STIX 2.1 for the reference tools: a realistic bundle
(indicators with patterns, malware, attack pattern, intrusion set, vulnerability,
relationships, a sighting, a report, an identity, notes, marking definitions), a MISP event the
node converts, and the reference bundle of halyard-stix's fixtures are posted to the REST API,
read back through TAXII, and every object read back must parse with `stix2.parse` and be valid
for `stix2validator` (its messages shown on failure), and be the version that was posted.
"""

import json

import pytest
import stix2
from stix2validator import ValidationOptions, validate_instance

import ctitest as c

DOMAIN = 212
FIXTURE = c.REPO / "crates" / "halyard-stix" / "tests" / "fixtures" / "valid_bundle.json"


@pytest.fixture(scope="module")
def node(start_module_node):
    return start_module_node("acme", DOMAIN, ["finance"])


def realistic_bundle():
    ident = {
        "type": "identity", "spec_version": "2.1", "id": c.stix_id("identity"),
        "created": c.ts(0), "modified": c.ts(0), "name": "ACME Bank CERT",
        "identity_class": "organization", "sectors": ["financial-services"],
        "contact_information": "cert@acme-bank.example",
    }
    by = ident["id"]
    green = c.TLP_GREEN
    statement = {
        "type": "marking-definition", "spec_version": "2.1", "id": c.stix_id("marking-definition"),
        "created": c.ts(0), "created_by_ref": by, "definition_type": "statement",
        "definition": {"statement": "Copyright 2026 ACME Bank. Share within the sector only."},
        "name": "ACME sharing statement",
    }
    marks = [green, statement["id"]]
    kill = [{"kill_chain_name": "mitre-attack", "phase_name": "command-and-control"}]
    inds = [
        c.indicator(1, pattern="[ipv4-addr:value = '203.0.113.45']", created_by_ref=by,
                    kill_chain_phases=kill, object_marking_refs=marks, confidence=85,
                    labels=["c2"]),
        c.indicator(2, pattern="[domain-name:value = 'update-check.example.net']",
                    created_by_ref=by, object_marking_refs=marks),
        c.indicator(3, pattern="[file:hashes.'SHA-256' = "
                               "'aec070645fe53ee3b3763059376134f058cc337247c978add178b6ccdfb0019f']",
                    created_by_ref=by, indicator_types=["malicious-activity", "attribution"]),
        c.indicator(4, pattern="[url:value = 'http://203.0.113.45/gate.php'] AND "
                               "[network-traffic:dst_port = 8443]",
                    created_by_ref=by, valid_until=c.ts(86400 * 90)),
        c.indicator(5, pattern="[email-message:from_ref.value MATCHES '^billing@.*\\\\.example$']",
                    created_by_ref=by, description="Sender of the overdue-invoice lure"),
        c.indicator(6, pattern="[process:command_line LIKE '%powershell -enc%'] "
                               "WITHIN 300 SECONDS", created_by_ref=by),
    ]
    mw = dict(c.malware("Emotet"), created_by_ref=by, description="Loader and banking trojan",
              aliases=["Geodo"], first_seen=c.ts(-86400 * 400),
              kill_chain_phases=[{"kill_chain_name": "mitre-attack",
                                  "phase_name": "execution"}])
    ap = {
        "type": "attack-pattern", "spec_version": "2.1", "id": c.stix_id("attack-pattern"),
        "created": c.ts(7), "modified": c.ts(7), "name": "Spearphishing Attachment",
        "external_references": [
            {"source_name": "mitre-attack", "external_id": "T1566.001",
             "url": "https://attack.mitre.org/techniques/T1566/001/"},
            {"source_name": "capec", "external_id": "CAPEC-163"},
        ],
        "object_marking_refs": [green],
    }
    iset = {
        "type": "intrusion-set", "spec_version": "2.1", "id": c.stix_id("intrusion-set"),
        "created": c.ts(8), "modified": c.ts(8), "name": "TA542",
        "goals": ["financial gain"], "resource_level": "organization",
        "primary_motivation": "personal-gain", "object_marking_refs": [green],
    }
    vuln = {
        "type": "vulnerability", "spec_version": "2.1", "id": c.stix_id("vulnerability"),
        "created": c.ts(9), "modified": c.ts(9), "name": "CVE-2017-11882",
        "external_references": [{"source_name": "cve", "external_id": "CVE-2017-11882"}],
        "object_marking_refs": [green],
    }
    rels = [
        c.relationship(inds[0], "indicates", mw), c.relationship(inds[2], "indicates", mw),
        c.relationship(mw, "uses", ap), c.relationship(iset, "uses", mw),
        c.relationship(mw, "targets", vuln),
    ]
    for r in rels:
        r["created_by_ref"] = by
    sighting = {
        "type": "sighting", "spec_version": "2.1", "id": c.stix_id("sighting"),
        "created": c.ts(10), "modified": c.ts(10), "created_by_ref": by,
        "sighting_of_ref": inds[0]["id"], "where_sighted_refs": [by],
        "first_seen": c.ts(3600), "last_seen": c.ts(7200), "count": 14,
        "object_marking_refs": [green],
    }
    report = {
        "type": "report", "spec_version": "2.1", "id": c.stix_id("report"),
        "created": c.ts(11), "modified": c.ts(11), "created_by_ref": by,
        "name": "Emotet returns with invoice lures", "report_types": ["campaign", "malware"],
        "published": c.ts(11), "description": "Wave of 1 March 2026.",
        "object_refs": [o["id"] for o in inds + [mw, ap, iset, vuln] + rels + [sighting]],
        "object_marking_refs": marks,
    }
    notes = [
        {"type": "note", "spec_version": "2.1", "id": c.stix_id("note"), "created": c.ts(12),
         "modified": c.ts(12), "created_by_ref": by, "abstract": "Blocked at the proxy",
         "content": "All six indicators are blocked at the web proxy since 11:00 UTC.",
         "authors": ["SOC shift 2"], "object_refs": [report["id"]],
         "object_marking_refs": [green]},
        {"type": "note", "spec_version": "2.1", "id": c.stix_id("note"), "created": c.ts(13),
         "modified": c.ts(13), "content": "C2 answered only on port 8443.",
         "object_refs": [inds[0]["id"], inds[3]["id"]], "object_marking_refs": [green]},
    ]
    return [ident, statement] + inds + [mw, ap, iset, vuln] + rels + [sighting, report] + notes


def misp_event():
    def attr(i, t, cat, value, ids=True):
        return {"id": str(100 + i), "type": t, "category": cat, "to_ids": ids,
                "uuid": f"5f0c2a7e-1b3d-4c5e-8f9a-0b1c2d3e4f{i:02x}", "event_id": "42",
                "distribution": "5", "timestamp": "1772359200", "comment": "",
                "sharing_group_id": "0", "deleted": False, "disable_correlation": False,
                "object_id": "0", "object_relation": None, "first_seen": None,
                "last_seen": None, "value": value}

    return {"Event": {
        "id": "42", "orgc_id": "1", "org_id": "1", "date": "2026-03-01",
        "threat_level_id": "2", "info": "Invoice lure wave: Emotet loader", "published": True,
        "uuid": "5f0c2a7e-1b3d-4c5e-8f9a-0b1c2d3e4f50", "analysis": "2",
        "timestamp": "1772359200", "distribution": "1", "publish_timestamp": "1772359300",
        "sharing_group_id": "0",
        "Orgc": {"id": "1", "name": "ACME Bank CERT",
                 "uuid": "5f0c2a7e-1b3d-4c5e-8f9a-0b1c2d3e4f60"},
        "Tag": [{"name": "tlp:green"}, {"name": "misp-galaxy:malpedia=\"Emotet\""}],
        "Attribute": [
            attr(1, "ip-dst", "Network activity", "203.0.113.46"),
            attr(2, "domain", "Network activity", "invoice-portal.example.org"),
            attr(3, "url", "Network activity", "https://invoice-portal.example.org/dl.php"),
            attr(4, "sha256", "Payload delivery",
                 "0b5d3a1e8f7c6b4a29381706f5e4d3c2b1a09f8e7d6c5b4a3928170615243342"),
            attr(5, "email-src", "Payload delivery", "billing@invoice-portal.example.org"),
            attr(6, "text", "Other", "Lure subject: Overdue invoice 2026-0301", ids=False),
        ],
    }}


def check_valid(objs):
    """Every object parses with stix2 and validates; returns the failures as text."""
    opts = ValidationOptions(version="2.1")
    problems = []
    for o in objs:
        try:
            stix2.parse(o, allow_custom=True)
        except Exception as e:  # any refusal of the library is a finding
            problems.append(f"{o.get('id')}: stix2.parse: {type(e).__name__}: {e}")
        r = validate_instance(o, opts)
        if not r.is_valid:
            msgs = "; ".join(str(e) for e in r.errors)
            problems.append(f"{o.get('id')}: stix2validator: {msgs}\n  {json.dumps(o)}")
    return problems


def served(node):
    """Every version the node serves to its admin: {(id, version): object}."""
    out = {}
    for _col, o in node.all_visible_objects():
        out[(o["id"], o.get("modified", o.get("created", "")))] = o
    return out


def round_trip(node, objects, path="objects"):
    """POSTs, reads everything back, returns (report results, the served objects of the
    report's ids)."""
    report = node.post_bundle(objects, sector="finance", tlp="green", path=path)
    results = report["results"]
    assert results, report
    queued = [r for r in results if r["disposition"] == "queued"]
    assert not queued, f"nothing here should need review: {queued}"
    have = served(node)
    back = []
    missing = []
    for r in results:
        o = have.get((r["id"], r["version"]))
        if o is None:
            missing.append((r["id"], r["version"], r["disposition"]))
        else:
            back.append(o)
    assert not missing, f"posted but not served through TAXII: {missing}"
    return results, back


def test_a_realistic_bundle_is_served_valid(node):
    objs = realistic_bundle()
    # The bundle itself is valid for the reference tools (else the test proves nothing).
    assert check_valid(objs) == []
    results, back = round_trip(node, c.bundle(objs))
    assert [r["id"] for r in results] == [o["id"] for o in objs]
    assert {r["disposition"] for r in results} == {"shared"}, results
    problems = check_valid(back)
    assert not problems, "\n".join(problems)
    # What is served is what was posted (no sanitisation rule is configured).
    posted = {o["id"]: o for o in objs}
    changed = [o["id"] for o in back if o != posted[o["id"]]]
    assert not changed, "served objects differ from the posted ones: " + ", ".join(
        f"\n  {i}: posted {json.dumps(posted[i], sort_keys=True)}\n"
        f"  {' ' * len(i)}  served {json.dumps(next(o for o in back if o['id'] == i), sort_keys=True)}"
        for i in changed)


def test_objects_made_from_a_misp_event_are_valid(node):
    results, back = round_trip(node, misp_event(), path="misp")
    types = c.types_of(back)
    # The event's indicators (to_ids attributes) and the event itself as a report.
    assert "indicator" in types and "report" in types, types
    patterns = " ".join(o.get("pattern", "") for o in back)
    for value in ["203.0.113.46", "invoice-portal.example.org",
                  "0b5d3a1e8f7c6b4a29381706f5e4d3c2b1a09f8e7d6c5b4a3928170615243342"]:
        assert value in patterns, (value, patterns)
    problems = check_valid(back)
    assert not problems, "\n".join(problems)


def test_the_reference_bundle_of_halyard_stix_is_served_valid(node):
    if not FIXTURE.exists():
        pytest.skip(f"{FIXTURE.relative_to(c.REPO)} is not in this tree yet (halyard-stix's "
                    "reference bundle lands with its tests)")
    b = json.loads(FIXTURE.read_text())
    results, back = round_trip(node, b)
    assert sorted(r["id"] for r in results) == sorted(o["id"] for o in b["objects"])
    problems = check_valid(back)
    assert not problems, "\n".join(problems)
    assert c.types_of(back) == c.types_of(b["objects"])
