//! Proves that a realistic MISP event converts to valid STIX 2.1 shaped like MISP's own
//! export: ids from MISP uuids, TLP tags as markings, indicators and observed data by
//! `to_ids`, idempotent re-conversion, and clear errors for unusable events.

use halyard_stix::bundle;
use halyard_stix::marking::Tlp;
use halyard_stix::misp::{event_to_stix, MispError};
use halyard_stix::validate::{self, Limits};
use serde_json::{json, Value};

const EVENT: &str = include_str!("fixtures/misp_event.json");
const NOW: i64 = 1_720_000_000_000;

fn event() -> Value {
    serde_json::from_str(EVENT).expect("fixture is JSON")
}

fn convert() -> Vec<Value> {
    event_to_stix(&event(), NOW).expect("converts")
}

fn by_id<'a>(objects: &'a [Value], id: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn every_object_is_valid_and_the_bundle_is_accepted() {
    let objects = convert();
    for o in &objects {
        validate::object(o).unwrap_or_else(|e| panic!("{e}\n{o:#}"));
    }
    let b = json!({"type": "bundle", "id": "bundle--5e1f7a4c-9b2d-4c8e-a1f3-2d4b6c8e0a12", "objects": objects});
    bundle::parse(b.to_string().as_bytes(), &Limits::default()).expect("bundle");
}

#[test]
fn report_identity_and_markings_follow_the_event() {
    let objects = convert();
    let report = by_id(&objects, "report--5e1f7a4c-9b2d-4c8e-a1f3-2d4b6c8e0a12");
    assert_eq!(report["name"], "Phishing wave: overdue invoice dropper");
    assert_eq!(report["created"], "2024-03-14T09:30:00.000Z");
    assert_eq!(report["published"], "2024-03-14T10:00:00.000Z");
    assert_eq!(
        report["created_by_ref"],
        "identity--a0c22599-9e58-4da4-96ac-7051603fa951"
    );
    assert_eq!(
        report["object_marking_refs"],
        json!([Tlp::Amber.marking_definition_id()])
    );
    let identity = by_id(&objects, "identity--a0c22599-9e58-4da4-96ac-7051603fa951");
    assert_eq!(identity["name"], "ACME CERT");
    assert_eq!(identity["identity_class"], "organization");
    // Amber from the event, red from one attribute's own tag.
    by_id(&objects, Tlp::Amber.marking_definition_id());
    by_id(&objects, Tlp::Red.marking_definition_id());
    let refs = report["object_refs"].as_array().expect("refs");
    // Six event attributes and three of the file object: the text attribute is unmapped,
    // the ip-src deleted.
    assert_eq!(refs.len(), 9);
    assert!(!refs
        .iter()
        .any(|r| r.as_str().is_some_and(|r| r.contains("c9a7e8b1"))));
    assert!(!refs
        .iter()
        .any(|r| r.as_str().is_some_and(|r| r.contains("7a6b5c4d"))));
}

#[test]
fn to_ids_attributes_become_indicators_with_misp_patterns() {
    let objects = convert();
    let domain = by_id(&objects, "indicator--91ae0a21-c7ae-4c7f-b84b-b84a7ce53d1f");
    assert_eq!(
        domain["pattern"],
        "[domain-name:value = 'update.evil.example']"
    );
    assert_eq!(domain["valid_from"], "2024-03-14T09:20:00.000Z");
    assert_eq!(domain["description"], "C2 domain contacted by the dropper");
    assert_eq!(
        domain["kill_chain_phases"][0]["phase_name"],
        "Network activity"
    );
    let ip = by_id(&objects, "indicator--518b4bcb-a86b-4783-9457-391d548b605b");
    assert_eq!(
        ip["pattern"],
        "[network-traffic:dst_ref.type = 'ipv4-addr' AND network-traffic:dst_ref.value = '198.51.100.23']"
    );
    let port = by_id(&objects, "indicator--34cb1a7c-55ec-412a-8684-ba4a88d83a45");
    assert_eq!(
        port["pattern"],
        "[network-traffic:dst_ref.type = 'ipv6-addr' AND network-traffic:dst_ref.value = '2001:db8::23' AND network-traffic:dst_port = 8443]"
    );
    assert_eq!(
        port["object_marking_refs"],
        json!([Tlp::Red.marking_definition_id()])
    );
    let url = by_id(&objects, "indicator--2ef41be1-8e4f-4a9a-8b55-3f1c0a9b7d21");
    assert_eq!(
        url["pattern"],
        "[url:value = 'https://update.evil.example/get?id=7\\'1']"
    );
    let hash = by_id(&objects, "indicator--9d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a");
    assert_eq!(
        hash["pattern"],
        "[file:hashes.'SHA-256' = '4bac27393bdd9777ce02453256c5577cd02275510b2227f473d03f533924f877']"
    );
}

#[test]
fn other_attributes_become_observed_data_with_scos() {
    let objects = convert();
    let od = by_id(
        &objects,
        "observed-data--0d1b9c4e-5f2a-4b8e-9c3d-7e6f5a4b3c2d",
    );
    assert_eq!(od["number_observed"], 1);
    assert_eq!(
        od["object_refs"],
        json!([
            "domain-name--0d1b9c4e-5f2a-4b8e-9c3d-7e6f5a4b3c2d",
            "ipv4-addr--0d1b9c4e-5f2a-4b8e-9c3d-7e6f5a4b3c2d"
        ])
    );
    let domain = by_id(
        &objects,
        "domain-name--0d1b9c4e-5f2a-4b8e-9c3d-7e6f5a4b3c2d",
    );
    assert_eq!(
        domain["resolves_to_refs"],
        json!(["ipv4-addr--0d1b9c4e-5f2a-4b8e-9c3d-7e6f5a4b3c2d"])
    );
    let email = by_id(&objects, "email-addr--f3745b11-2b82-4798-80ba-d32c506135ec");
    assert_eq!(email["value"], "billing@evil.example");
    let md5 = by_id(&objects, "file--ae3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b");
    assert_eq!(md5["hashes"]["MD5"], "e2fc714c4727ee9395f324cd2e7f331f");
    assert_eq!(
        md5["object_marking_refs"],
        json!([Tlp::Amber.marking_definition_id()])
    );
}

#[test]
fn conversion_is_idempotent_and_accepts_the_inner_event() {
    assert_eq!(convert(), convert());
    let inner = event()["Event"].clone();
    assert_eq!(event_to_stix(&inner, NOW).expect("inner"), convert());
    assert_eq!(
        event_to_stix(&event(), NOW + 99_999).expect("later"),
        convert()
    );
}

#[test]
fn unusable_events_are_refused_with_the_reason() {
    assert_eq!(event_to_stix(&json!([1]), NOW), Err(MispError::NotAnEvent));
    let mut e = event();
    e["Event"].as_object_mut().map(|m| m.remove("Orgc"));
    assert_eq!(
        event_to_stix(&e, NOW),
        Err(MispError::Missing {
            path: "Event.Orgc".into()
        })
    );
    let mut e = event();
    e["Event"]["uuid"] = json!("not-a-uuid");
    assert!(
        matches!(event_to_stix(&e, NOW), Err(MispError::Invalid { path, .. }) if path == "Event.uuid")
    );
    let mut e = event();
    e["Event"]["Attribute"][1]["value"] = json!("999.1.1.1");
    let err = event_to_stix(&e, NOW).expect_err("bad ip");
    assert_eq!(
        err.to_string(),
        "MISP event: `Attribute[1].value`: a ip-dst value must be an IP address"
    );
    let mut e = event();
    e["Event"]["Attribute"] = json!([]);
    e["Event"]["Object"] = json!([]);
    assert!(event_to_stix(&e, NOW).is_err());
}

#[test]
fn missing_timestamps_fall_back_to_the_date_then_now() {
    let mut e = event();
    e["Event"].as_object_mut().map(|m| m.remove("timestamp"));
    let objects = event_to_stix(&e, NOW).expect("converts");
    let report = by_id(&objects, "report--5e1f7a4c-9b2d-4c8e-a1f3-2d4b6c8e0a12");
    assert_eq!(report["created"], "2024-03-14T00:00:00.000Z");
    e["Event"].as_object_mut().map(|m| m.remove("date"));
    let objects = event_to_stix(&e, NOW).expect("converts");
    let report = by_id(&objects, "report--5e1f7a4c-9b2d-4c8e-a1f3-2d4b6c8e0a12");
    assert_eq!(report["created"], "2024-07-03T09:46:40.000Z");
}

/// The converted event is kept as `fixtures/misp_event_stix.json` (a bundle), checked by the
/// Python interoperability tests; `HALYARD_BLESS=1` rewrites it after a deliberate change.
#[test]
fn conversion_matches_the_recorded_bundle() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/misp_event_stix.json"
    );
    let bundle = json!({
        "type": "bundle",
        "id": "bundle--5e1f7a4c-9b2d-4c8e-a1f3-2d4b6c8e0a12",
        "objects": convert(),
    });
    if std::env::var_os("HALYARD_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&bundle).expect("serialises") + "\n";
        std::fs::write(path, text).expect("write the recorded bundle");
    }
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("recorded bundle"))
            .expect("recorded bundle is JSON");
    assert_eq!(recorded, bundle);
}
