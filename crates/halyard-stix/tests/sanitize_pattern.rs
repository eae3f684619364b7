//! Proves that inside an indicator's STIX pattern only string literals are rewritten, that they
//! stay correctly escaped, and that an internal address compared with `=` becomes `ISSUBSET`.

use halyard_stix::sanitize::{Rules, Sanitizer};
use serde_json::{json, Value};

fn rules() -> Rules {
    Rules {
        internal_domains: vec!["corp.example".into()],
        internal_networks: vec!["10.0.0.0/8".into(), "fd00::/8".into()],
        known_users: vec!["jdoe".into()],
        ..Rules::default()
    }
}

/// The pattern after sanitising an indicator holding it, and the rules that fired.
fn sanitize_pattern(pattern: &str, pattern_type: Option<&str>) -> (String, Vec<String>) {
    let sanitizer = Sanitizer::new(&rules()).expect("rules compile");
    let mut obj = json!({"type": "indicator", "pattern": pattern});
    if let Some(t) = pattern_type {
        obj["pattern_type"] = json!(t);
    }
    let Value::Object(mut map) = obj else {
        unreachable!()
    };
    let changes = sanitizer.sanitize(&mut map);
    assert!(changes.iter().all(|c| c.path == "/pattern"));
    let out = map["pattern"]
        .as_str()
        .expect("pattern stays a string")
        .to_owned();
    (out, changes.into_iter().map(|c| c.rule).collect())
}

fn pattern(p: &str) -> String {
    sanitize_pattern(p, Some("stix")).0
}

#[test]
fn internal_address_equality_becomes_issubset() {
    assert_eq!(
        pattern("[ipv4-addr:value = '10.1.2.3']"),
        "[ipv4-addr:value ISSUBSET '10.0.0.0/8']"
    );
    assert_eq!(
        pattern("[ipv6-addr:value='fd12::17']"),
        "[ipv6-addr:value ISSUBSET 'fd00::/8']"
    );
    assert_eq!(
        pattern("[network-traffic:dst_ref.value != '10.1.2.3' AND network-traffic:dst_port = 445]"),
        "[network-traffic:dst_ref.value NOT ISSUBSET '10.0.0.0/8' AND network-traffic:dst_port = 445]"
    );
    assert_eq!(
        pattern("[ipv4-addr:value NOT = '10.1.2.3']"),
        "[ipv4-addr:value NOT ISSUBSET '10.0.0.0/8']"
    );
    assert_eq!(
        pattern("[ipv4-addr:value ISSUBSET '10.1.2.0/24']"),
        "[ipv4-addr:value ISSUBSET '10.0.0.0/8']"
    );
}

#[test]
fn the_change_records_the_whole_pattern_under_internal_ip() {
    let (out, fired) = sanitize_pattern("[ipv4-addr:value = '10.1.2.3']", None);
    assert_eq!(out, "[ipv4-addr:value ISSUBSET '10.0.0.0/8']");
    assert_eq!(fired, ["internal-ip"]);
}

#[test]
fn other_positions_replace_the_literal_and_keep_the_operator() {
    assert_eq!(
        pattern("[ipv4-addr:value IN ('10.1.2.3', '8.8.8.8')]"),
        "[ipv4-addr:value IN ('10.0.0.0/8', '8.8.8.8')]"
    );
    assert_eq!(
        pattern("[x-acme-log:note = 'seen on 10.1.2.3']"),
        "[x-acme-log:note = 'seen on 10.0.0.0/8']"
    );
}

#[test]
fn public_patterns_are_byte_identical() {
    for p in [
        "[ipv4-addr:value = '185.220.101.7'] OR [domain-name:value = 'update-check.net']",
        "[file:hashes.'SHA-256' = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855']",
        "[ipv4-addr:value ISSUBSET '10.0.0.0/8']",
        "[file:name = 'invoice.pdf.exe'] WITHIN 300 SECONDS",
        "[artifact:payload_bin = b'aGVsbG8='] START t'2024-01-01T00:00:00Z' STOP t'2024-02-01T00:00:00Z'",
    ] {
        let (out, fired) = sanitize_pattern(p, Some("stix"));
        assert_eq!(out, p);
        assert!(fired.is_empty());
    }
}

#[test]
fn paths_in_literals_are_unescaped_rewritten_and_escaped_again() {
    assert_eq!(
        pattern(r"[file:parent_directory_ref.path = 'C:\\Users\\alice\\AppData\\Roaming']"),
        r"[file:parent_directory_ref.path = 'C:\\Users\\<user>\\AppData\\Roaming']"
    );
    assert_eq!(
        pattern(r"[directory:path = '\\\\fs01.corp.example\\finance\\q3']"),
        r"[directory:path = '\\\\<internal-share>\\q3']"
    );
    assert_eq!(
        pattern(
            r"[email-message:subject = 'jdoe\'s invoice' AND email-addr:value = 'jdoe@corp.example']"
        ),
        r"[email-message:subject = '<user>\'s invoice' AND email-addr:value = 'redacted@corp.example']"
    );
}

#[test]
fn quoted_path_components_and_hash_values_are_left_alone() {
    let p = "[file:extensions.'jdoe-ext'.name = 'x' AND file:hashes.'jdoe' = 'jdoe' AND file:hashes.MD5 = 'jdoe']";
    assert_eq!(pattern(p), p);
}

#[test]
fn an_unterminated_pattern_is_sanitised_as_text() {
    let (out, fired) = sanitize_pattern("[ipv4-addr:value = '10.1.2.3]", Some("stix"));
    assert_eq!(out, "[ipv4-addr:value = '10.0.0.0/8]");
    assert_eq!(fired, ["internal-ip"]);
}

#[test]
fn other_pattern_languages_are_sanitised_as_text() {
    let sigma = "detection:\n  sel:\n    User: 'CORP\\jdoe'\n    DestinationIp: 10.1.2.3";
    let (out, _) = sanitize_pattern(sigma, Some("sigma"));
    assert_eq!(
        out,
        "detection:\n  sel:\n    User: 'CORP\\<user>'\n    DestinationIp: 10.0.0.0/8"
    );
}
