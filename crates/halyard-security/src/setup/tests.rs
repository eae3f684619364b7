//! Proves `init` writes a complete, consistent set-up (keys 0600, documents that verify) and
//! that `check` names each kind of breakage in words.

use super::*;
use crate::access::{Action, Governance, Permissions};
use crate::random::SeededRandom;
use std::os::unix::fs::PermissionsExt;

const NOW: i64 = 1_790_000_000;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-setup-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn opts(participants: &[&str]) -> InitOptions {
    InitOptions {
        participants: participants.iter().map(|s| s.to_string()).collect(),
        protection: Protection {
            encrypt: true,
            origin_auth: false,
            none: false,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains: vec![],
        allows: None,
        force: false,
        now: NOW,
    }
}

fn check_at(dir: &Path, now: i64, query: Option<Query>) -> CheckReport {
    check(
        dir,
        &CheckOptions {
            participant: None,
            query,
            now,
        },
    )
}

fn problems(r: &CheckReport) -> String {
    r.problems.join("\n")
}

#[test]
fn init_writes_a_set_up_that_checks_clean() {
    let dir = temp_dir("clean");
    init(&dir, &opts(&["alice", "bob"]), &mut SeededRandom::new(1)).unwrap();
    for key in [
        dir.join(files::IDENTITY_CA_KEY),
        dir.join(files::PERMISSIONS_CA_KEY),
        dir.join("alice").join(files::IDENTITY_KEY),
    ] {
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", key.display());
    }
    let ca = read_file(&dir.join(files::PERMISSIONS_CA)).unwrap();
    let g = Governance::from_smime(&read_file(&dir.join(files::GOVERNANCE)).unwrap(), &ca).unwrap();
    assert!(g.domain_rule(0).is_some());
    let p = Permissions::from_smime(
        &read_file(&dir.join("bob").join(files::PERMISSIONS)).unwrap(),
        &ca,
    )
    .unwrap();
    assert!(p.grant_for("CN=bob,O=Halyard").is_some());
    let r = check_at(&dir, NOW, None);
    assert!(r.is_ok(), "{}", problems(&r));
    assert_eq!(r.checked.len(), 3 + 2 * 3, "{:?}", r.checked);
    let again = init(&dir, &opts(&["alice"]), &mut SeededRandom::new(2)).unwrap_err();
    assert!(matches!(again, SetupError::AlreadyExists(_)), "{again}");
    let mut forced = opts(&["carol"]);
    forced.force = true;
    init(&dir, &forced, &mut SeededRandom::new(3)).unwrap();
    let r = check_at(&dir, NOW, None);
    assert!(!r.is_ok(), "alice and bob now belong to the old CAs");
    assert!(
        problems(&r).contains("alice: the identity certificate is not issued by the identity CA"),
        "{}",
        problems(&r)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn add_reuses_the_cas() {
    let dir = temp_dir("add");
    init(&dir, &opts(&["alice"]), &mut SeededRandom::new(1)).unwrap();
    add(&dir, &opts(&["dave"]), &mut SeededRandom::new(2)).unwrap();
    let r = check_at(&dir, NOW, None);
    assert!(r.is_ok(), "{}", problems(&r));
    assert!(r
        .checked
        .iter()
        .any(|l| l.starts_with("dave: identity certificate")));
    assert!(matches!(
        add(&dir, &opts(&["dave"]), &mut SeededRandom::new(3)),
        Err(SetupError::AlreadyExists(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_names_every_kind_of_breakage() {
    let dir = temp_dir("broken");
    init(
        &dir,
        &opts(&["alice", "bob", "carol", "dave"]),
        &mut SeededRandom::new(1),
    )
    .unwrap();
    let other = temp_dir("broken-other");
    init(&other, &opts(&["alice"]), &mut SeededRandom::new(2)).unwrap();
    // alice: identity from another identity CA.
    std::fs::copy(
        other.join("alice").join(files::IDENTITY),
        dir.join("alice").join(files::IDENTITY),
    )
    .unwrap();
    // bob: key of carol; permissions replaced by the unsigned XML.
    std::fs::copy(
        dir.join("carol").join(files::IDENTITY_KEY),
        dir.join("bob").join(files::IDENTITY_KEY),
    )
    .unwrap();
    std::fs::copy(
        dir.join("bob").join(files::PERMISSIONS_XML),
        dir.join("bob").join(files::PERMISSIONS),
    )
    .unwrap();
    // carol: dave's permissions (subject mismatch).
    std::fs::copy(
        dir.join("dave").join(files::PERMISSIONS),
        dir.join("carol").join(files::PERMISSIONS),
    )
    .unwrap();
    // dave: permissions signed by the other set-up's permissions CA.
    std::fs::copy(
        other.join("alice").join(files::PERMISSIONS),
        dir.join("dave").join(files::PERMISSIONS),
    )
    .unwrap();
    let r = check_at(&dir, NOW, None);
    let p = problems(&r);
    for want in [
        "alice: the identity certificate is not issued by the identity CA (its issuer is \"CN=Halyard Identity CA ",
        "alice: the private key identity_key.pem does not match",
        "bob: the private key identity_key.pem does not match the certificate identity.pem",
        "bob: permissions.p7s: the document is not signed",
        "carol: the permissions subject does not match the identity's subject \"CN=carol,O=Halyard\"",
        "dave: permissions.p7s: the document is signed by \"CN=Halyard Permissions CA ",
    ] {
        assert!(p.contains(want), "missing {want:?} in:\n{p}");
    }
    assert_eq!(r.problems.len(), 6, "{p}");
    // 40 days later everything has expired.
    let r = check_at(&dir, NOW + 40 * 86400, None);
    let p = problems(&r);
    assert!(
        p.contains("the identity CA certificate (identity_ca.pem) has expired"),
        "{p}"
    );
    assert!(
        p.contains("dave: the identity certificate has expired"),
        "{p}"
    );
    let r = check_at(&other, NOW + 40 * 86400, None);
    assert!(
        problems(&r).contains("alice: grant expired (valid until"),
        "{}",
        problems(&r)
    );
    let r = check_at(&other, NOW - 7200, None);
    assert!(
        problems(&r).contains("alice: the identity certificate is not yet valid"),
        "{}",
        problems(&r)
    );
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

#[test]
fn allow_lists_limit_what_a_participant_may_do() {
    let dir = temp_dir("allow");
    let mut o = opts(&["alice", "bob"]);
    o.domains = vec![5];
    o.allows = Some(vec![
        AllowSpec::parse("alice:pub:Square").unwrap(),
        AllowSpec::parse("bob:sub:Sq*@p?").unwrap(),
    ]);
    init(&dir, &o, &mut SeededRandom::new(1)).unwrap();
    let q = |topic: &str, action, partitions: &[&str], domain| Query {
        topic: topic.into(),
        action,
        partitions: partitions.iter().map(|s| s.to_string()).collect(),
        domain,
    };
    let ask = |name: &str, query: Query| {
        check(
            &dir,
            &CheckOptions {
                participant: Some(name.into()),
                query: Some(query),
                now: NOW,
            },
        )
    };
    assert!(ask("alice", q("Square", Action::Publish, &[], 5)).is_ok());
    let r = ask("alice", q("Square", Action::Subscribe, &[], 5));
    assert!(problems(&r).contains("topic not granted: alice may not subscribe topic \"Square\" in the default partition on domain 5: denied: no rule matches, default DENY"), "{}", problems(&r));
    assert!(ask("bob", q("Square", Action::Subscribe, &["p1"], 5)).is_ok());
    assert!(!ask("bob", q("Square", Action::Subscribe, &["px1"], 5)).is_ok());
    let r = ask("bob", q("Square", Action::Subscribe, &["p1"], 6));
    assert!(
        problems(&r).contains("the governance has no rule for domain 6"),
        "{}",
        problems(&r)
    );
    let bad = InitOptions {
        allows: Some(vec![AllowSpec::parse("zed:pub:T").unwrap()]),
        ..opts(&["alice"])
    };
    assert!(matches!(
        init(&temp_dir("allow-bad"), &bad, &mut SeededRandom::new(1)),
        Err(SetupError::UnknownParticipant(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn allow_specs_and_names_parse() {
    let a = AllowSpec::parse("alice:pubsub:Sq*@part:1").unwrap();
    assert_eq!(
        (
            a.publish,
            a.subscribe,
            a.topic.as_str(),
            a.partition.as_deref()
        ),
        (true, true, "Sq*", Some("part:1"))
    );
    assert!(AllowSpec::parse("alice:read:T").is_none());
    assert!(AllowSpec::parse("alice:pub:").is_none());
    assert!(AllowSpec::parse("alice:pub").is_none());
    assert!(check_name("alice-2.b_c").is_ok());
    for bad in ["", "..", "a/b", "a,b", "CN=x"] {
        assert!(check_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn cyclone_config_names_absolute_files() {
    let dir = temp_dir("cfg");
    init(&dir, &opts(&["alice"]), &mut SeededRandom::new(1)).unwrap();
    let cfg = cyclone_config(&dir.join("alice")).unwrap();
    let abs = dir.display().to_string();
    assert!(
        cfg.starts_with("<Security><Authentication><Library path=\"dds_security_auth\""),
        "{cfg}"
    );
    assert!(
        cfg.contains(&format!(
            "<IdentityCA>file:{abs}/identity_ca.pem</IdentityCA>"
        )),
        "{cfg}"
    );
    assert!(
        cfg.contains(&format!(
            "<Permissions>file:{abs}/alice/permissions.p7s</Permissions>"
        )),
        "{cfg}"
    );
    assert!(!cfg.contains('\n'));
    assert!(matches!(
        cyclone_config(&dir.join("nobody")),
        Err(SetupError::BadFile { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn resign_signs_an_edited_document() {
    let dir = temp_dir("resign");
    init(&dir, &opts(&["alice"]), &mut SeededRandom::new(1)).unwrap();
    let xml = dir.join("alice").join(files::PERMISSIONS_XML);
    let edited = String::from_utf8(read_file(&xml).unwrap())
        .unwrap()
        .replace("<topic>*</topic>", "<topic>Only</topic>");
    write_file(&xml, edited.as_bytes()).unwrap();
    resign(&dir, Some("alice")).unwrap();
    let ca = read_file(&dir.join(files::PERMISSIONS_CA)).unwrap();
    let p = Permissions::from_smime(
        &read_file(&dir.join("alice").join(files::PERMISSIONS)).unwrap(),
        &ca,
    )
    .unwrap();
    assert!(!p.grants[0]
        .check(0, Action::Publish, "Other", &[], NOW)
        .is_allowed());
    std::fs::remove_dir_all(&dir).unwrap();
}
