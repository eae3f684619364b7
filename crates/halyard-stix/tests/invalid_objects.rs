//! Proves that each kind of violation of STIX 2.1 is refused, naming the property at fault
//! and saying why in words.

use halyard_stix::validate::{self, ValidationError};
use serde_json::{json, Value};

fn indicator() -> Value {
    json!({
        "type": "indicator",
        "spec_version": "2.1",
        "id": "indicator--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f",
        "created_by_ref": "identity--f431f809-377b-45e0-aa1c-6a4751cae5ff",
        "created": "2024-03-14T09:30:00.000Z",
        "modified": "2024-03-14T09:30:00.000Z",
        "name": "C2",
        "pattern": "[ipv4-addr:value = '198.51.100.23']",
        "pattern_type": "stix",
        "valid_from": "2024-03-14T00:00:00Z",
        "object_marking_refs": ["marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb"]
    })
}

fn with(mut base: Value, key: &str, value: Value) -> Value {
    if let Some(map) = base.as_object_mut() {
        map.insert(key.to_string(), value);
    }
    base
}

fn without(mut base: Value, key: &str) -> Value {
    if let Some(map) = base.as_object_mut() {
        map.remove(key);
    }
    base
}

/// Asserts `v` is refused on `property` with a reason containing `words`.
fn refused(v: &Value, property: &str, words: &str) -> ValidationError {
    let e = validate::object(v).expect_err("must be refused");
    assert_eq!(e.property, property, "wrong property in: {e}");
    assert!(
        e.reason.contains(words),
        "reason {:?} lacks {words:?}",
        e.reason
    );
    e
}

#[test]
fn the_base_indicator_is_valid() {
    validate::object(&indicator()).expect("valid");
}

#[test]
fn missing_required_properties() {
    for prop in [
        "pattern",
        "pattern_type",
        "valid_from",
        "created",
        "modified",
        "spec_version",
        "id",
        "type",
    ] {
        refused(
            &without(indicator(), prop),
            prop,
            "required property is missing",
        );
    }
    let malware = json!({
        "type": "malware", "spec_version": "2.1", "id": "malware--31b940d4-6f7f-459a-80ea-9c1f17b58abc",
        "created": "2024-01-01T00:00:00.000Z", "modified": "2024-01-01T00:00:00.000Z", "name": "X"
    });
    refused(&malware, "is_family", "required");
    let family = with(without(malware, "name"), "is_family", json!(true));
    refused(&family, "name", "is_family");
}

#[test]
fn bad_ids_are_refused() {
    refused(
        &with(indicator(), "id", json!("indicator-8e2e2d2b")),
        "id",
        "<type>--<UUID>",
    );
    refused(
        &with(
            indicator(),
            "id",
            json!("indicator--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3"),
        ),
        "id",
        "UUID",
    );
    // Version nibble 0 and the NCS variant are not RFC 4122 UUIDs.
    refused(
        &with(
            indicator(),
            "id",
            json!("indicator--8e2e2d2b-17d4-0cbf-938f-98ee46b3cd3f"),
        ),
        "id",
        "UUID",
    );
    refused(
        &with(
            indicator(),
            "id",
            json!("indicator--8e2e2d2b-17d4-4cbf-738f-98ee46b3cd3f"),
        ),
        "id",
        "UUID",
    );
    let e = refused(
        &with(
            indicator(),
            "id",
            json!("malware--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f"),
        ),
        "id",
        "differs",
    );
    assert!(e.to_string().starts_with("malware--8e2e2d2b"), "{e}");
    refused(
        &with(indicator(), "type", json!("Indicator")),
        "type",
        "not a STIX type name",
    );
    refused(
        &with(indicator(), "type", json!("x--y")),
        "type",
        "not a STIX type name",
    );
}

#[test]
fn bad_timestamps_and_order_are_refused() {
    refused(
        &with(indicator(), "created", json!("2024-03-14 09:30:00")),
        "created",
        "not a STIX timestamp",
    );
    refused(
        &with(indicator(), "modified", json!("2024-02-30T00:00:00Z")),
        "modified",
        "not a STIX timestamp",
    );
    refused(
        &with(
            indicator(),
            "valid_from",
            json!("2024-03-14T00:00:00+01:00"),
        ),
        "valid_from",
        "not a STIX timestamp",
    );
    refused(
        &with(indicator(), "modified", json!("2024-03-14T09:29:59.999Z")),
        "modified",
        "earlier than `created`",
    );
    refused(
        &with(indicator(), "valid_until", json!("2024-03-14T00:00:00Z")),
        "valid_until",
        "later than `valid_from`",
    );
}

#[test]
fn wrong_reference_types_are_refused() {
    refused(
        &with(
            indicator(),
            "created_by_ref",
            json!("malware--31b940d4-6f7f-459a-80ea-9c1f17b58abc"),
        ),
        "created_by_ref",
        "must reference identity",
    );
    refused(
        &with(
            indicator(),
            "object_marking_refs",
            json!(["identity--f431f809-377b-45e0-aa1c-6a4751cae5ff"]),
        ),
        "object_marking_refs[0]",
        "marking-definition",
    );
    let rel = json!({
        "type": "relationship", "spec_version": "2.1", "id": "relationship--44298a74-ba52-4f0c-87a3-1824e67d7fad",
        "created": "2024-01-01T00:00:00.000Z", "modified": "2024-01-01T00:00:00.000Z", "relationship_type": "uses",
        "source_ref": "relationship--44298a74-ba52-4f0c-87a3-1824e67d7fad",
        "target_ref": "malware--31b940d4-6f7f-459a-80ea-9c1f17b58abc"
    });
    refused(&rel, "source_ref", "SDO or SCO");
    let sighting = json!({
        "type": "sighting", "spec_version": "2.1", "id": "sighting--ee20065d-2555-424f-ad9e-0f8428623c75",
        "created": "2024-01-01T00:00:00.000Z", "modified": "2024-01-01T00:00:00.000Z",
        "sighting_of_ref": "ipv4-addr--ff26c055-6336-5bc5-b98d-13d6226742dd",
        "where_sighted_refs": ["malware--31b940d4-6f7f-459a-80ea-9c1f17b58abc"]
    });
    refused(&sighting, "sighting_of_ref", "an SDO");
    let sighting = with(
        sighting,
        "sighting_of_ref",
        json!("indicator--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f"),
    );
    refused(&sighting, "where_sighted_refs[0]", "identity or location");
    let sighting = with(
        without(sighting, "where_sighted_refs"),
        "count",
        json!(1_000_000_000),
    );
    refused(&sighting, "count", "0 to 999999999");
}

#[test]
fn bad_patterns_are_refused_with_the_offset() {
    let e = refused(
        &with(
            indicator(),
            "pattern",
            json!("[ipv4-addr:value = '1.2.3.4'"),
        ),
        "pattern",
        "offset 28",
    );
    assert!(e.to_string().contains("property `pattern`"), "{e}");
    refused(
        &with(indicator(), "pattern", json!("[file:hashes.MD5 ~ 'x']")),
        "pattern",
        "offset 17",
    );
    // Another pattern language is not parsed.
    let sigma = with(
        with(indicator(), "pattern_type", json!("sigma")),
        "pattern",
        json!("title: x"),
    );
    validate::object(&sigma).expect("non-STIX patterns are not parsed");
}

#[test]
fn unknown_and_malformed_property_names_are_refused() {
    refused(
        &with(indicator(), "colour", json!("red")),
        "colour",
        "unknown property",
    );
    refused(
        &with(indicator(), "x_", json!(1)),
        "x_",
        "invalid property name",
    );
    refused(
        &with(indicator(), "x_Acme", json!(1)),
        "x_Acme",
        "invalid property name",
    );
    let long = format!("x_{}", "a".repeat(250));
    let e = validate::object(&with(indicator(), &long, json!(1))).expect_err("too long");
    assert!(e.reason.contains("invalid property name"), "{e}");
    // SCO-only and SDO-only properties do not cross over.
    refused(
        &with(indicator(), "value", json!("x")),
        "value",
        "unknown property",
    );
}

#[test]
fn custom_x_properties_are_accepted() {
    let v = with(indicator(), "x_acme_score", json!({"nested": [1, 2, 3]}));
    validate::object(&v).expect("custom property");
}

#[test]
fn common_property_shapes_are_checked() {
    refused(
        &with(indicator(), "confidence", json!(101)),
        "confidence",
        "0 to 100",
    );
    refused(
        &with(indicator(), "revoked", json!("yes")),
        "revoked",
        "boolean",
    );
    refused(
        &with(indicator(), "labels", json!([])),
        "labels",
        "empty list",
    );
    refused(
        &with(indicator(), "lang", json!("english!")),
        "lang",
        "RFC 5646",
    );
    refused(
        &with(indicator(), "spec_version", json!("2.0")),
        "spec_version",
        "2.1",
    );
    refused(
        &with(
            indicator(),
            "external_references",
            json!([{"url": "https://example.org"}]),
        ),
        "external_references[0].source_name",
        "required",
    );
    refused(
        &with(
            indicator(),
            "external_references",
            json!([{"source_name": "x"}]),
        ),
        "external_references[0]",
        "at least one of",
    );
    refused(
        &with(
            indicator(),
            "granular_markings",
            json!([{"selectors": ["name"]}]),
        ),
        "granular_markings[0]",
        "exactly one of marking_ref and lang",
    );
    refused(
        &with(
            indicator(),
            "kill_chain_phases",
            json!([{"kill_chain_name": "lockheed"}]),
        ),
        "kill_chain_phases[0].phase_name",
        "required",
    );
}

#[test]
fn sco_rules_are_checked() {
    let ip = json!({"type": "ipv4-addr", "spec_version": "2.1", "id": "ipv4-addr--ff26c055-6336-5bc5-b98d-13d6226742dd", "value": "198.51.100.300"});
    refused(&ip, "value", "IPv4");
    refused(
        &with(ip, "created", json!("2024-01-01T00:00:00Z")),
        "created",
        "unknown property",
    );
    let mac = json!({"type": "mac-addr", "id": "mac-addr--65cfcf98-8a6e-5a1b-8f61-379ac4f92d00", "value": "D2:FB:49:24:37:18"});
    refused(&mac, "value", "lower-case");
    let file =
        json!({"type": "file", "id": "file--ec3415cc-5f4f-5ec8-bdb1-6f86996ae66d", "size": 1});
    refused(&file, "hashes|name", "at least one of");
    let file = with(file, "hashes", json!({"MD5": "1234"}));
    refused(&file, "hashes.MD5", "32 hex digits");
    let traffic = json!({"type": "network-traffic", "id": "network-traffic--2568d22a-8998-58eb-99ec-3c8ca74f527d", "protocols": ["tcp"]});
    refused(&traffic, "src_ref|dst_ref", "at least one of");
    let sco_with_created = json!({"type": "url", "id": "url--c1477287-23ac-5971-a010-5c287877fa60", "value": "https://x.example/", "created": "2024-01-01T00:00:00Z"});
    refused(&sco_with_created, "created", "unknown property");
}

#[test]
fn observed_data_and_location_rules_are_checked() {
    let od = json!({
        "type": "observed-data", "spec_version": "2.1", "id": "observed-data--b67d30ff-02ac-498a-92f9-32f845f448cf",
        "created": "2024-01-01T00:00:00.000Z", "modified": "2024-01-01T00:00:00.000Z",
        "first_observed": "2024-01-01T00:00:00Z", "last_observed": "2023-12-31T00:00:00Z",
        "number_observed": 0, "object_refs": ["indicator--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f"]
    });
    refused(&od, "number_observed", "1 to 999999999");
    let od = with(od, "number_observed", json!(1));
    refused(&od, "object_refs[0]", "SCO or SRO");
    let od = with(
        od,
        "object_refs",
        json!(["ipv4-addr--ff26c055-6336-5bc5-b98d-13d6226742dd"]),
    );
    refused(&od, "last_observed", "earlier than `first_observed`");
    let loc = json!({
        "type": "location", "spec_version": "2.1", "id": "location--a6e9345f-5a15-4c29-8bb3-7dcc5d168d64",
        "created": "2024-01-01T00:00:00.000Z", "modified": "2024-01-01T00:00:00.000Z", "latitude": 48.8
    });
    refused(&loc, "longitude", "together");
    refused(
        &with(loc, "longitude", json!(200.0)),
        "longitude",
        "between",
    );
}

#[test]
fn marking_definition_rules_are_checked() {
    let tlp2 = halyard_stix::marking::Tlp::Amber.marking_definition();
    refused(
        &with(
            tlp2.clone(),
            "id",
            json!("marking-definition--0b5b5a96-60b3-4d4c-9d7e-6c9b7d1a2b3c"),
        ),
        "id",
        "must have the id",
    );
    refused(
        &with(tlp2.clone(), "modified", json!("2022-10-01T00:00:00.000Z")),
        "modified",
        "unknown property",
    );
    let tlp1 = json!({
        "type": "marking-definition", "spec_version": "2.1",
        "id": "marking-definition--0b5b5a96-60b3-4d4c-9d7e-6c9b7d1a2b3c",
        "created": "2017-01-20T00:00:00.000Z", "definition_type": "tlp", "definition": {"tlp": "green"}
    });
    refused(&tlp1, "id", "must have the id");
    refused(
        &without(without(tlp1, "definition_type"), "definition"),
        "definition_type",
        "required",
    );
}

#[test]
fn display_names_object_property_and_reason() {
    let e = validate::object(&with(indicator(), "pattern", json!("[a:b = ]")))
        .expect_err("bad")
        .at_index(3);
    let text = e.to_string();
    assert!(
        text.starts_with(
            "object 3 (indicator--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f): property `pattern`: "
        ),
        "{text}"
    );
    let err: &dyn std::error::Error = &e;
    assert!(!err.to_string().is_empty());
}

#[test]
fn rules_shared_with_stix2_validator_are_checked() {
    refused(
        &with(indicator(), "modified", json!("2024-03-15T11:00:00.1Z")),
        "modified",
        "precise to the millisecond",
    );
    refused(
        &with(indicator(), "created", json!("2024-03-14T09:30:00Z")),
        "created",
        "precise to the millisecond",
    );
    validate::object(&with(
        indicator(),
        "modified",
        json!("2024-03-15T11:00:00.123456Z"),
    ))
    .expect("finer is fine");
    refused(
        &with(
            indicator(),
            "external_references",
            json!([{"source_name": "cve", "external_id": "CVE-1"}]),
        ),
        "external_references[0].external_id",
        "CVE-YYYY-NNNN",
    );
    refused(
        &with(
            indicator(),
            "external_references",
            json!([{"source_name": "capec", "external_id": "9"}]),
        ),
        "external_references[0].external_id",
        "CAPEC-n",
    );
    let lc = json!({
        "type": "language-content", "spec_version": "2.1", "id": "language-content--b86bd89f-98bb-4fa9-8cb2-9ad421da981d",
        "created": "2024-01-01T00:00:00.000Z", "modified": "2024-01-01T00:00:00.000Z",
        "object_ref": "indicator--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f", "contents": {"de": "Text"}
    });
    refused(&lc, "contents.de", "dictionary of translated properties");
}
