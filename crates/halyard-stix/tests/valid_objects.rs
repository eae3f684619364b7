//! Proves that valid STIX 2.1 content of every listed type is accepted and read correctly:
//! the reference bundle, the TLP and statement markings, envelopes and bare objects.

use halyard_stix::bundle;
use halyard_stix::marking::{statement_marking, Tlp};
use halyard_stix::validate::{self, Limits};
use serde_json::{json, Value};

const VALID_BUNDLE: &str = include_str!("fixtures/valid_bundle.json");

const LISTED_TYPES: [&str; 42] = [
    "attack-pattern",
    "campaign",
    "course-of-action",
    "grouping",
    "identity",
    "incident",
    "indicator",
    "infrastructure",
    "intrusion-set",
    "location",
    "malware",
    "malware-analysis",
    "note",
    "observed-data",
    "opinion",
    "report",
    "threat-actor",
    "tool",
    "vulnerability",
    "relationship",
    "sighting",
    "marking-definition",
    "language-content",
    "extension-definition",
    "ipv4-addr",
    "ipv6-addr",
    "domain-name",
    "url",
    "email-addr",
    "file",
    "network-traffic",
    "user-account",
    "mac-addr",
    "autonomous-system",
    "process",
    "directory",
    "mutex",
    "software",
    "windows-registry-key",
    "x509-certificate",
    "email-message",
    "artifact",
];

#[test]
fn the_reference_bundle_is_accepted_whole() {
    let objects = bundle::parse(VALID_BUNDLE.as_bytes(), &Limits::default()).expect("valid");
    for t in LISTED_TYPES {
        assert!(
            objects.iter().any(|o| o.stix_type == t),
            "no {t} in the bundle"
        );
    }
    let value: Value = serde_json::from_str(VALID_BUNDLE).expect("json");
    assert_eq!(
        objects.len(),
        value["objects"].as_array().map_or(0, Vec::len)
    );
}

#[test]
fn the_reference_bundle_is_referentially_consistent() {
    let objects = bundle::parse(VALID_BUNDLE.as_bytes(), &Limits::default()).expect("valid");
    let ids: Vec<&str> = objects.iter().map(|o| o.id.as_str()).collect();
    for o in &objects {
        for (name, value) in &o.json {
            let refs: Vec<&str> = if name.ends_with("_ref") {
                value.as_str().into_iter().collect()
            } else if name.ends_with("_refs") {
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect()
            } else {
                continue;
            };
            for r in refs {
                assert!(
                    ids.contains(&r),
                    "{} {name} names {r}, absent from the bundle",
                    o.id
                );
            }
        }
    }
}

#[test]
fn summaries_carry_tlp_versions_and_refs() {
    let objects = bundle::parse(VALID_BUNDLE.as_bytes(), &Limits::default()).expect("valid");
    let find = |t: &str| objects.iter().find(|o| o.stix_type == t).expect("present");
    let indicator = find("indicator");
    assert_eq!(indicator.tlp, Some(Tlp::Green));
    assert_eq!(indicator.version(), "2024-03-15T11:00:00.000Z");
    assert!(indicator
        .created_by_ref
        .as_deref()
        .is_some_and(|r| r.starts_with("identity--")));
    let marking = find("marking-definition");
    assert_eq!(marking.tlp, None);
    assert_eq!(
        marking.version(),
        marking.created.as_deref().unwrap_or_default()
    );
    let sco = find("ipv4-addr");
    assert_eq!((sco.created.as_deref(), sco.version()), (None, ""));
    assert_eq!(sco.spec_version, "2.1");
}

#[test]
fn tlp_2_0_and_statement_markings_validate() {
    for tlp in Tlp::ALL {
        let md = validate::object(&tlp.marking_definition()).expect("published marking is valid");
        assert_eq!(md.id, tlp.marking_definition_id());
    }
    let s = statement_marking(
        "Copyright ACME",
        "2024-01-01T00:00:00.000Z",
        "marking-definition--b7a5f1d8-2c0e-4a4e-9b0c-7f3c1d2e4f5a",
    );
    validate::object(&s).expect("statement marking is valid");
}

#[test]
fn tlp_1_0_marking_definition_with_its_fixed_id_validates() {
    let white = json!({
        "type": "marking-definition", "spec_version": "2.1",
        "id": "marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9",
        "created": "2017-01-20T00:00:00.000Z",
        "definition_type": "tlp", "name": "TLP:WHITE", "definition": {"tlp": "white"}
    });
    validate::object(&white).expect("TLP 1.0 white");
}

#[test]
fn most_restrictive_tlp_wins() {
    let mut v: Value = serde_json::from_str(VALID_BUNDLE).expect("json");
    let ind = v["objects"]
        .as_array_mut()
        .and_then(|objs| objs.iter_mut().find(|o| o["type"] == "indicator"))
        .expect("indicator");
    ind["object_marking_refs"] = json!([
        Tlp::Green.marking_definition_id(),
        "marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1",
        "marking-definition--34098fce-860f-48ae-8e50-ebd3cc5e41da"
    ]);
    assert_eq!(validate::object(ind).expect("valid").tlp, Some(Tlp::Red));
}

#[test]
fn a_taxii_envelope_and_a_bare_object_are_accepted() {
    let v: Value = serde_json::from_str(VALID_BUNDLE).expect("json");
    let envelope = json!({"objects": v["objects"], "more": false});
    let got = bundle::parse(envelope.to_string().as_bytes(), &Limits::default()).expect("envelope");
    assert_eq!(got.len(), v["objects"].as_array().map_or(0, Vec::len));
    let bare = v["objects"][5].to_string();
    let got = bundle::parse(bare.as_bytes(), &Limits::default()).expect("bare");
    assert_eq!(got.len(), 1);
    let empty = json!({"type": "bundle", "id": "bundle--5d0092c5-5f74-4287-9642-33f4c354e56d"});
    assert!(
        bundle::parse(empty.to_string().as_bytes(), &Limits::default())
            .expect("empty")
            .is_empty()
    );
}

#[test]
fn custom_properties_custom_objects_and_extensions_are_accepted() {
    let custom_object = json!({
        "type": "x-acme-ticket", "spec_version": "2.1",
        "id": "x-acme-ticket--6c2d6a7e-3f9b-4f0e-8a1d-2b3c4d5e6f70",
        "created": "2024-01-01T00:00:00.000Z", "modified": "2024-01-01T00:00:00.000Z",
        "ticket_number": "INC-42"
    });
    validate::object(&custom_object).expect("custom x- object");
    let toplevel = json!({
        "type": "identity", "spec_version": "2.1",
        "id": "identity--6c2d6a7e-3f9b-4f0e-8a1d-2b3c4d5e6f70",
        "created": "2024-01-01T00:00:00.000Z", "modified": "2024-01-01T00:00:00.000Z",
        "name": "Org", "rating": 5,
        "extensions": {
            "extension-definition--a932fcc6-e032-476c-826f-cb970a5a1ade": {
                "extension_type": "toplevel-property-extension"
            }
        }
    });
    validate::object(&toplevel).expect("top-level property extension");
    let sco_ext = json!({
        "type": "file", "spec_version": "2.1",
        "id": "file--6c2d6a7e-3f9b-4f0e-8a1d-2b3c4d5e6f70", "name": "a.exe",
        "extensions": {"windows-pebinary-ext": {"pe_type": "exe", "anything_goes": true}}
    });
    validate::object(&sco_ext).expect("predefined SCO extension");
}
