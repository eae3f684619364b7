//! Proves the access-control documents are verified and read as Cyclone DDS 0.10 reads them:
//! signatures (good, changed, other CA, none), XML errors with positions, rule evaluation
//! (order, partitions, defaults, validity), subject matching and the security info masks.

use super::*;
use crate::random::SeededRandom;
use crate::setup::{
    self, governance_xml, make_ca, permissions_xml, Ca, KeyKind, Protection, Validity,
};

const NOW: i64 = 1_790_000_000;

fn ca(name: &str, seed: u64) -> Ca {
    let v = Validity {
        not_before: NOW - 10,
        not_after: NOW + 86400,
    };
    make_ca(name, KeyKind::EcP256, v, &mut SeededRandom::new(seed)).unwrap()
}

fn signed(xml: &str, ca: &Ca) -> Vec<u8> {
    smime::sign(xml.as_bytes(), &ca.cert, &ca.key).unwrap()
}

fn encrypt_all() -> String {
    governance_xml(
        &[],
        Protection {
            encrypt: true,
            origin_auth: false,
            none: false,
        },
    )
}

#[test]
fn signed_governance_verifies_and_gives_cyclones_participant_security_info() {
    let perm_ca = ca("Permissions CA", 1);
    let doc = signed(&encrypt_all(), &perm_ca);
    let g = Governance::from_smime(&doc, &perm_ca.cert.to_pem().unwrap()).unwrap();
    let rule = g.domain_rule(0).expect("domain 0 governed");
    assert!(g.domain_rule(230).is_some());
    assert!(g.domain_rule(231).is_none());
    assert_eq!(rule.rtps_protection_kind, ProtectionKind::Encrypt);
    // Cyclone 0.10 sent PID 0x1005 = 07 00 00 80 07 00 00 80 with everything ENCRYPT.
    let info = rule.participant_security_info();
    assert_eq!(info.to_bytes(true), [0x07, 0, 0, 0x80, 0x07, 0, 0, 0x80]);
    assert_eq!(info.to_bytes(false), [0x80, 0, 0, 0x07, 0x80, 0, 0, 0x07]);
    let topic = rule.topic_rule("DDSPerfRDataKS").expect("topic rule *");
    let ep = topic.endpoint_security_info();
    assert_eq!(ep.endpoint_security_attributes, 0x8000_007f);
    assert_eq!(ep.plugin_endpoint_security_attributes, 0x8000_0003);
    let disc = rule.builtin_endpoint_security_info(BuiltinSecureTopic::Discovery);
    assert_eq!(
        (
            disc.endpoint_security_attributes,
            disc.plugin_endpoint_security_attributes
        ),
        (0x8000_0008, 0x8000_0001)
    );
    let stateless = rule.builtin_endpoint_security_info(BuiltinSecureTopic::Unprotected);
    assert_eq!(stateless.endpoint_security_attributes, mask::IS_VALID);
}

#[test]
fn origin_authentication_and_sign_masks() {
    let oa = Governance::from_xml(&governance_xml(
        &[7],
        Protection {
            encrypt: true,
            origin_auth: true,
            none: false,
        },
    ))
    .unwrap();
    let rule = oa.domain_rule(7).unwrap();
    assert!(oa.domain_rule(0).is_none());
    let info = rule.participant_security_info();
    assert_eq!(info.participant_security_attributes, 0x8000_0007);
    assert_eq!(info.plugin_participant_security_attributes, 0x8000_003f);
    let ep = rule.topic_rule("x").unwrap().endpoint_security_info();
    assert_eq!(ep.plugin_endpoint_security_attributes, 0x8000_0007);
    let sign = Governance::from_xml(&governance_xml(
        &[],
        Protection {
            encrypt: false,
            origin_auth: false,
            none: false,
        },
    ))
    .unwrap();
    let rule = sign.domain_rule(3).unwrap();
    assert_eq!(
        rule.participant_security_info()
            .plugin_participant_security_attributes,
        mask::IS_VALID
    );
    let ep = rule.topic_rule("x").unwrap().endpoint_security_info();
    assert_eq!(
        ep.endpoint_security_attributes, 0x8000_005f,
        "payload protected, key not"
    );
    assert_eq!(ep.plugin_endpoint_security_attributes, mask::IS_VALID);
}

#[test]
fn a_changed_byte_in_the_signed_xml_is_refused() {
    let perm_ca = ca("Permissions CA", 1);
    let mut doc = signed(&encrypt_all(), &perm_ca);
    let at = doc.windows(7).position(|w| w == b"ENCRYPT").unwrap();
    doc[at + 6] = b'X';
    let err = Governance::from_smime(&doc, &perm_ca.cert.to_pem().unwrap()).unwrap_err();
    assert!(matches!(err, AccessError::BadSignature(_)), "{err}");
    assert!(err.to_string().contains("changed after signing"), "{err}");
}

#[test]
fn a_document_signed_by_another_ca_is_refused() {
    let (perm_ca, other) = (ca("Permissions CA", 1), ca("Other CA", 2));
    let doc = signed(&encrypt_all(), &other);
    let err = Governance::from_smime(&doc, &perm_ca.cert.to_pem().unwrap()).unwrap_err();
    match &err {
        AccessError::WrongSigner { signer, ca } => {
            assert_eq!(signer, "CN=Other CA,O=Halyard");
            assert_eq!(ca, "CN=Permissions CA,O=Halyard");
        }
        e => panic!("expected WrongSigner, got {e}"),
    }
}

#[test]
fn an_unsigned_document_is_refused_as_unsigned() {
    let perm_ca = ca("Permissions CA", 1);
    let err = Governance::from_smime(encrypt_all().as_bytes(), &perm_ca.cert.to_pem().unwrap())
        .unwrap_err();
    assert!(matches!(err, AccessError::Unsigned), "{err}");
    assert!(err.to_string().contains("not signed"));
    let err = Permissions::from_smime(b"garbage", &perm_ca.cert.to_pem().unwrap()).unwrap_err();
    assert!(matches!(err, AccessError::NotSmime(_)), "{err}");
    let err = Permissions::from_smime(b"<dds/>", b"not a pem").unwrap_err();
    assert!(matches!(err, AccessError::BadCaCertificate(_)), "{err}");
}

#[test]
fn xml_errors_point_to_line_and_column() {
    let broken = "<dds>\n  <permissions>\n    <grant name=\"a\">\n  </permissions>\n</dds>";
    match Permissions::from_xml(broken).unwrap_err() {
        AccessError::Xml { line, column, .. } => {
            assert_eq!((line, column), (4, 3), "the stray </permissions>")
        }
        e => panic!("{e}"),
    }
    let bad_kind = encrypt_all().replacen(
        "<rtps_protection_kind>ENCRYPT",
        "<rtps_protection_kind>SCRAMBLE",
        1,
    );
    let err = Governance::from_xml(&bad_kind).unwrap_err();
    let line = 1 + bad_kind[..bad_kind.find("<rtps_protection_kind>").unwrap()]
        .matches('\n')
        .count() as u32;
    match &err {
        AccessError::Xml {
            line: l,
            column,
            message,
        } => {
            assert_eq!((*l, *column), (line, 7));
            assert!(message.contains("SCRAMBLE"), "{message}");
        }
        e => panic!("{e}"),
    }
    assert!(err.to_string().starts_with(&format!("{line}:7: ")));
    let missing = encrypt_all().replace(
        "<enable_join_access_control>true</enable_join_access_control>",
        "",
    );
    assert!(Governance::from_xml(&missing)
        .unwrap_err()
        .to_string()
        .contains("lacks the required <enable_join_access_control>"));
    let big = encrypt_all().replace("<max>230</max>", "<max>231</max>");
    assert!(Governance::from_xml(&big)
        .unwrap_err()
        .to_string()
        .contains("from 0 to 230"));
}

fn grant_xml(rules: &str, default: &str) -> String {
    format!(
        "<dds><permissions><grant name=\"g\"><subject_name>CN=alice,O=Halyard</subject_name>\
         <validity><not_before>2026-01-01T00:00:00Z</not_before><not_after>2027-01-01T00:00:00+01:00</not_after></validity>\
         {rules}<default>{default}</default></grant></permissions></dds>"
    )
}

fn rule(kind: &str, what: &str, topic: &str, partitions: Option<&str>) -> String {
    let parts = partitions
        .map(|p| format!("<partitions><partition>{p}</partition></partitions>"))
        .unwrap_or_default();
    format!("<{kind}><domains><id>0</id><id_range><min>5</min><max>9</max></id_range></domains><{what}><topics><topic>{topic}</topic></topics>{parts}</{what}></{kind}>")
}

#[test]
fn the_first_matching_rule_decides() {
    let xml = grant_xml(
        &[
            rule("deny_rule", "publish", "Secret*", Some("*")),
            rule("allow_rule", "publish", "*", Some("*")),
            rule("deny_rule", "subscribe", "*", Some("*")),
        ]
        .concat(),
        "ALLOW",
    );
    let p = Permissions::from_xml(&xml).unwrap();
    let g = p.grant_for("CN=alice,O=Halyard").unwrap();
    let d = g.check(0, Action::Publish, "SecretPlans", &[], NOW);
    assert!(!d.is_allowed());
    assert!(
        matches!(
            d.reason(),
            Reason::Rule {
                kind: RuleKind::Deny,
                index: 1,
                ..
            }
        ),
        "{d}"
    );
    let d = g.check(0, Action::Publish, "Square", &["a"], NOW);
    assert!(
        matches!(
            d.reason(),
            Reason::Rule {
                kind: RuleKind::Allow,
                index: 2,
                ..
            }
        ),
        "{d}"
    );
    assert!(
        d.to_string().starts_with("allowed: allow_rule #2 (line 1)"),
        "{d}"
    );
    assert!(!g
        .check(7, Action::Subscribe, "Square", &[], NOW)
        .is_allowed());
    // Domain 3 is in no rule: the default (ALLOW) decides.
    let d = g.check(3, Action::Publish, "SecretPlans", &[], NOW);
    assert_eq!(d, Decision::Allow(Reason::Default(RuleKind::Allow)));
    assert_eq!(d.to_string(), "allowed: no rule matches, default ALLOW");
    // Allow after deny in the document: the deny still wins for what it covers.
    let xml = grant_xml(
        &[
            rule("allow_rule", "publish", "*", Some("*")),
            rule("deny_rule", "publish", "Secret*", Some("*")),
        ]
        .concat(),
        "DENY",
    );
    let g = Permissions::from_xml(&xml).unwrap().grants.remove(0);
    assert!(
        g.check(0, Action::Publish, "SecretPlans", &[], NOW)
            .is_allowed(),
        "first match wins"
    );
    let d = g.check(0, Action::Subscribe, "SecretPlans", &[], NOW);
    assert_eq!(d.to_string(), "denied: no rule matches, default DENY");
}

#[test]
fn partitions_match_as_cyclone_matches_them() {
    let xml = grant_xml(
        &[
            rule("deny_rule", "subscribe", "T", Some("secret*")),
            rule("allow_rule", "subscribe", "T", Some("p[0-9]")),
            rule("allow_rule", "publish", "T", None),
        ]
        .concat(),
        "DENY",
    );
    let g = Permissions::from_xml(&xml).unwrap().grants.remove(0);
    let sub = |parts: &[&str]| g.check(0, Action::Subscribe, "T", parts, NOW);
    assert!(sub(&["p1"]).is_allowed());
    assert!(sub(&["p1", "p2"]).is_allowed(), "every partition allowed");
    assert!(
        !sub(&["p1", "q"]).is_allowed(),
        "allow needs every partition"
    );
    let d = sub(&["p1", "secretive"]);
    assert!(
        matches!(
            d.reason(),
            Reason::Rule {
                kind: RuleKind::Deny,
                index: 1,
                ..
            }
        ),
        "deny needs one: {d}"
    );
    assert!(!sub(&[]).is_allowed(), "default partition is not p[0-9]");
    let publ = |parts: &[&str]| g.check(0, Action::Publish, "T", parts, NOW);
    assert!(
        publ(&[]).is_allowed(),
        "no <partitions> covers the default partition"
    );
    assert!(publ(&[""]).is_allowed());
    assert!(!publ(&["p1"]).is_allowed(), "... and only it");
    assert!(!g.check(0, Action::Publish, "U", &[], NOW).is_allowed());
}

#[test]
fn grants_are_valid_only_inside_their_window() {
    let g = Permissions::from_xml(&grant_xml(
        &rule("allow_rule", "publish", "*", Some("*")),
        "DENY",
    ))
    .unwrap()
    .grants
    .remove(0);
    let start = parse_xml_date("2026-01-01T00:00:00Z").unwrap();
    let end = parse_xml_date("2026-12-31T23:00:00Z").unwrap();
    assert_eq!((g.not_before, g.not_after), (start, end));
    let d = g.check(0, Action::Publish, "T", &[], start);
    assert_eq!(
        d,
        Decision::Deny(Reason::NotYetValid(start)),
        "Cyclone refuses at not_before itself"
    );
    assert_eq!(
        d.to_string(),
        "denied: grant not yet valid (valid from 2026-01-01T00:00:00Z)"
    );
    assert!(g
        .check(0, Action::Publish, "T", &[], start + 1)
        .is_allowed());
    assert!(g.check(0, Action::Publish, "T", &[], end - 1).is_allowed());
    let d = g.check(0, Action::Publish, "T", &[], end);
    assert_eq!(
        d.to_string(),
        "denied: grant expired (valid until 2026-12-31T23:00:00Z)"
    );
    assert!(g.may_join(0, start + 1).is_allowed());
    assert!(!g.may_join(3, start + 1).is_allowed());
    let bad = grant_xml("", "DENY").replace("2026-01-01T00:00:00Z", "2026-01-01");
    assert!(Permissions::from_xml(&bad)
        .unwrap_err()
        .to_string()
        .contains("not a date and time"));
}

#[test]
fn subjects_match_as_in_cyclone() {
    let id = "CN=alice,O=Halyard";
    assert!(subjects_match("CN=alice,O=Halyard", id));
    assert!(subjects_match("O=Halyard,CN=alice", id), "order free");
    assert!(subjects_match("/O=Halyard/CN=alice", id), "slash form");
    assert!(subjects_match("O=Halyard|CN=alice", id));
    assert!(
        subjects_match("C=NL,O=Halyard,CN=alice", id),
        "extra permission parts are fine"
    );
    assert!(
        !subjects_match("CN=alice", "CN=alice,O=Example,C=NL"),
        "every identity part must appear"
    );
    assert!(!subjects_match("cn=alice,O=Halyard", id), "case-sensitive");
    assert!(
        !subjects_match("CN=alice, O=Halyard", id),
        "no space trimming"
    );
    assert!(!subjects_match("CN=bob,O=Halyard", id));
    assert!(!subjects_match("CN=alice,O", id), "a part without =");
    let p = Permissions::from_xml(&grant_xml("", "DENY")).unwrap();
    assert!(p.grant_for(id).is_some());
    assert!(p.grant_for("CN=bob,O=Halyard").is_none());
}

#[test]
fn identity_subjects_print_as_openssl_rfc2253() {
    let alice = ca("alice", 3);
    assert_eq!(identity_subject(&alice.cert), "CN=alice,O=Halyard");
    assert_eq!(escape_rfc2253("a,b+c"), "a\\,b\\+c");
    assert_eq!(escape_rfc2253(" x "), "\\ x\\ ");
    let props = permissions_token_properties(&alice.cert).unwrap();
    assert_eq!(
        props[0],
        (
            PERM_CA_SN_PROPERTY.to_string(),
            "CN=alice,O=Halyard".to_string()
        )
    );
    assert_eq!(props[1].1, "EC-prime256v1");
}

#[test]
fn permissions_made_by_setup_verify_and_grant_everything() {
    let perm_ca = ca("Permissions CA", 1);
    let xml = permissions_xml(
        "alice",
        "CN=alice,O=Halyard",
        NOW - 10,
        NOW + 1000,
        &[],
        None,
    );
    let p =
        Permissions::from_smime(&signed(&xml, &perm_ca), &perm_ca.cert.to_pem().unwrap()).unwrap();
    let g = p.grant_for("CN=alice,O=Halyard").unwrap();
    for (action, topic, parts) in [
        (Action::Publish, "DDSPerfRDataKS", &[][..]),
        (Action::Subscribe, "Square", &["x", "y"][..]),
    ] {
        assert!(g.check(230, action, topic, parts, NOW).is_allowed());
    }
    let allows = [setup::AllowSpec::parse("alice:pub:Square@p*").unwrap()];
    let xml = permissions_xml(
        "alice",
        "CN=alice,O=Halyard",
        NOW - 10,
        NOW + 1000,
        &[4],
        Some(&allows),
    );
    let g = Permissions::from_xml(&xml).unwrap().grants.remove(0);
    assert!(g
        .check(4, Action::Publish, "Square", &["p1"], NOW)
        .is_allowed());
    assert!(!g
        .check(4, Action::Subscribe, "Square", &["p1"], NOW)
        .is_allowed());
    assert!(!g
        .check(5, Action::Publish, "Square", &["p1"], NOW)
        .is_allowed());
    assert!(!g
        .check(4, Action::Publish, "Circle", &["p1"], NOW)
        .is_allowed());
}

#[test]
fn a_document_signed_without_the_text_form_is_refused_as_such() {
    use openssl::pkcs7::{Pkcs7, Pkcs7Flags};
    use openssl::stack::Stack;
    let perm_ca = ca("Permissions CA", 1);
    let xml = encrypt_all();
    let p7 = Pkcs7::sign(
        &perm_ca.cert,
        &perm_ca.key,
        &Stack::new().unwrap(),
        xml.as_bytes(),
        Pkcs7Flags::DETACHED,
    )
    .unwrap();
    let doc = p7.to_smime(xml.as_bytes(), Pkcs7Flags::DETACHED).unwrap();
    let err = Governance::from_smime(&doc, &perm_ca.cert.to_pem().unwrap()).unwrap_err();
    assert!(matches!(err, AccessError::NotSmime(_)), "{err}");
    assert!(err.to_string().contains("-text"), "{err}");
}
