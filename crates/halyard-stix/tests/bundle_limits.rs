//! Proves that bundle parsing is all or nothing and that every limit, encoding and syntax
//! fault refuses the input with a clear error, before large structures are built.

use halyard_stix::bundle;
use halyard_stix::validate::Limits;
use serde_json::{json, Value};

const VALID_BUNDLE: &str = include_str!("fixtures/valid_bundle.json");

fn bundle_of(objects: Vec<Value>) -> String {
    json!({"type": "bundle", "id": "bundle--5d0092c5-5f74-4287-9642-33f4c354e56d", "objects": objects}).to_string()
}

fn url(n: usize) -> Value {
    json!({"type": "url", "spec_version": "2.1", "id": format!("url--5d0092c5-5f74-4287-9642-{n:012}"), "value": format!("https://x.example/{n}")})
}

#[test]
fn one_bad_object_refuses_the_whole_bundle() {
    let mut v: Value = serde_json::from_str(VALID_BUNDLE).expect("json");
    let objects = v["objects"].as_array_mut().expect("objects");
    let index = objects
        .iter()
        .position(|o| o["type"] == "indicator")
        .expect("indicator");
    objects[index]["pattern"] = json!("[domain-name:value = 'x' AND]");
    let id = objects[index]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let e = bundle::parse(v.to_string().as_bytes(), &Limits::default()).expect_err("refused");
    assert_eq!(e.index, Some(index));
    assert_eq!(e.id.as_deref(), Some(id.as_str()));
    assert_eq!(e.property, "pattern");
    assert!(
        e.to_string()
            .starts_with(&format!("object {index} ({id}): property `pattern`")),
        "{e}"
    );
}

#[test]
fn too_deep_is_refused_before_serde() {
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let e = bundle::parse(deep.as_bytes(), &Limits::default()).expect_err("deep");
    assert!(
        e.reason.contains("nested deeper than the limit of 16"),
        "{e}"
    );
    let mut obj = url(1);
    obj["x_deep"] = json!([[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]);
    let e = bundle::parse(bundle_of(vec![obj]).as_bytes(), &Limits::default()).expect_err("deep");
    assert!(e.reason.contains("nested deeper"), "{e}");
}

#[test]
fn too_big_is_refused() {
    let limits = Limits {
        max_bytes: 1000,
        ..Limits::default()
    };
    let text = bundle_of((0..20).map(url).collect());
    let e = bundle::parse(text.as_bytes(), &limits).expect_err("big");
    assert!(
        e.reason.contains("more than the limit of 1000 bytes"),
        "{e}"
    );
}

#[test]
fn too_many_objects_is_refused() {
    let limits = Limits {
        max_objects: 5,
        ..Limits::default()
    };
    let text = bundle_of((0..6).map(url).collect());
    let e = bundle::parse(text.as_bytes(), &limits).expect_err("many");
    assert!(
        e.reason.contains("6 objects, more than the limit of 5"),
        "{e}"
    );
    let text = bundle_of((0..5).map(url).collect());
    assert_eq!(
        bundle::parse(text.as_bytes(), &limits).expect("five").len(),
        5
    );
}

#[test]
fn long_strings_and_too_many_properties_are_refused() {
    let limits = Limits {
        max_string_bytes: 100,
        max_properties: 8,
        ..Limits::default()
    };
    let mut obj = url(1);
    obj["value"] = json!(format!("https://x.example/{}", "a".repeat(200)));
    let e = bundle::parse(bundle_of(vec![obj]).as_bytes(), &limits).expect_err("long");
    assert!(
        e.reason.contains("longer than the limit of 100 bytes"),
        "{e}"
    );
    let mut obj = url(1);
    for i in 0..10 {
        obj[format!("x_p{i}")] = json!(i);
    }
    let e = bundle::parse(bundle_of(vec![obj]).as_bytes(), &limits).expect_err("props");
    assert!(
        e.reason.contains("more than the limit of 8 properties"),
        "{e}"
    );
}

#[test]
fn malformed_json_reports_line_and_column() {
    let text = "{\n  \"type\": \"bundle\",\n  \"objects\": [1,]\n}";
    let e = bundle::parse(text.as_bytes(), &Limits::default()).expect_err("malformed");
    assert!(
        e.reason.starts_with("malformed JSON at line 3 column"),
        "{e}"
    );
    let e = bundle::parse(b"", &Limits::default()).expect_err("empty");
    assert!(e.reason.contains("malformed JSON"), "{e}");
}

#[test]
fn non_utf8_is_refused() {
    let mut bytes = bundle_of(vec![url(1)]).into_bytes();
    bytes.insert(20, 0xff);
    let e = bundle::parse(&bytes, &Limits::default()).expect_err("not utf-8");
    assert!(
        e.reason.contains("not UTF-8: invalid byte at offset 20"),
        "{e}"
    );
}

#[test]
fn duplicate_versions_are_refused_but_distinct_versions_pass() {
    let e = bundle::parse(
        bundle_of(vec![url(1), url(2), url(1)]).as_bytes(),
        &Limits::default(),
    )
    .expect_err("duplicate");
    assert_eq!((e.index, e.property.as_str()), (Some(2), "id"));
    assert!(e.reason.contains("object 0"), "{e}");
    let mut v: Value = serde_json::from_str(VALID_BUNDLE).expect("json");
    let objects = v["objects"].as_array_mut().expect("objects");
    let mut newer = objects
        .iter()
        .find(|o| o["type"] == "indicator")
        .cloned()
        .expect("indicator");
    newer["modified"] = json!("2024-04-01T00:00:00.000Z");
    objects.push(newer);
    bundle::parse(v.to_string().as_bytes(), &Limits::default()).expect("two versions");
}

#[test]
fn envelope_and_bundle_headers_are_checked() {
    let bad_id = json!({"type": "bundle", "id": "report--5d0092c5-5f74-4287-9642-33f4c354e56d", "objects": []});
    let e = bundle::parse(bad_id.to_string().as_bytes(), &Limits::default()).expect_err("id");
    assert_eq!(e.property, "id");
    let old = json!({"type": "bundle", "id": "bundle--5d0092c5-5f74-4287-9642-33f4c354e56d", "spec_version": "2.0", "objects": []});
    let e = bundle::parse(old.to_string().as_bytes(), &Limits::default()).expect_err("2.0");
    assert_eq!(e.property, "spec_version");
    let env = json!({"objects": [url(1)], "next": 3});
    let e = bundle::parse(env.to_string().as_bytes(), &Limits::default()).expect_err("next");
    assert_eq!(e.property, "next");
    let e = bundle::parse(b"[1, 2]", &Limits::default()).expect_err("array");
    assert!(e.reason.contains("expected a JSON object"), "{e}");
    let not_object = bundle_of(vec![json!("url--x")]);
    let e = bundle::parse(not_object.as_bytes(), &Limits::default()).expect_err("string");
    assert_eq!(e.index, Some(0));
}

#[test]
fn mutated_bundles_never_panic() {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let original = VALID_BUNDLE.as_bytes();
    let noise = b"{}[]\",:0-9.eE\\u tfn x_Z";
    for _ in 0..1500 {
        let mut bytes = original.to_vec();
        for _ in 0..1 + next() % 4 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] = noise[(next() % noise.len() as u64) as usize];
        }
        let _ = bundle::parse(&bytes, &Limits::default());
    }
}
