//! Proves that sanitisation rules read from configuration take their documented defaults,
//! refuse unknown keys, and that bad rules are refused naming the rule and the reason.

use halyard_stix::sanitize::{CustomRule, EmailRule, RuleError, Rules, Sanitizer};
use serde_json::json;

fn refused(rules: Rules) -> RuleError {
    match Sanitizer::new(&rules) {
        Ok(_) => panic!("rules were accepted: {rules:?}"),
        Err(e) => e,
    }
}

fn custom(name: &str, pattern: &str, replacement: &str) -> Rules {
    Rules {
        custom: vec![CustomRule {
            name: name.into(),
            pattern: pattern.into(),
            replacement: replacement.into(),
        }],
        ..Rules::default()
    }
}

#[test]
fn an_empty_section_takes_the_defaults() {
    let rules: Rules = serde_json::from_value(json!({})).expect("empty section");
    assert_eq!(rules, Rules::default());
    assert!(rules.hostnames && rules.usernames && rules.file_paths);
    assert_eq!(rules.emails, EmailRule::Internal);
    assert!(Sanitizer::new(&rules).is_ok());
}

#[test]
fn a_full_section_reads() {
    let rules: Rules = serde_json::from_value(json!({
        "internal_domains": ["corp.example"],
        "internal_networks": ["10.0.0.0/8", "fd00::/8"],
        "emails": "all",
        "hostnames": false,
        "usernames": true,
        "internal_netbios": ["CORP"],
        "known_users": ["jdoe"],
        "file_paths": false,
        "custom": [{"name": "employee-id", "pattern": "EMP-\\d{6}", "replacement": "EMP-XXXXXX"}],
        "skip_properties": ["x_ticket"]
    }))
    .expect("full section");
    assert_eq!(rules.emails, EmailRule::All);
    assert!(!rules.hostnames && !rules.file_paths);
    assert_eq!(rules.custom[0].name, "employee-id");
    let back: Rules = serde_json::from_value(serde_json::to_value(&rules).expect("serialise"))
        .expect("round trip");
    assert_eq!(back, rules);
    assert!(Sanitizer::new(&rules).is_ok());
}

#[test]
fn email_rule_spellings() {
    for (text, rule) in [
        ("internal", EmailRule::Internal),
        ("all", EmailRule::All),
        ("none", EmailRule::None),
    ] {
        let rules: Rules = serde_json::from_value(json!({ "emails": text })).expect("known rule");
        assert_eq!(rules.emails, rule);
    }
    assert!(serde_json::from_value::<Rules>(json!({"emails": "Internal"})).is_err());
}

#[test]
fn unknown_keys_are_refused() {
    let err = serde_json::from_value::<Rules>(json!({"internal_domain": ["corp.example"]}))
        .expect_err("misspelt key");
    assert!(err.to_string().contains("internal_domain"), "{err}");
    let err = serde_json::from_value::<Rules>(
        json!({"custom": [{"name": "a", "pattern": "b", "replacement": "c", "flags": "i"}]}),
    )
    .expect_err("unknown custom key");
    assert!(err.to_string().contains("flags"), "{err}");
    assert!(
        serde_json::from_value::<Rules>(json!({"custom": [{"name": "a", "pattern": "b"}]}))
            .is_err()
    );
}

#[test]
fn bad_networks_are_refused() {
    let cases = [
        ("10.0.0.0/33", "prefix length"),
        ("10.0.0/8", "not an IPv4 or IPv6 address"),
        ("10.1.2.3", "no prefix length"),
        ("10.1.0.0/8", "host bits set; the network is 10.0.0.0/8"),
        ("fd00::1/8", "host bits set; the network is fd00::/8"),
        ("fd00::/129", "prefix length"),
    ];
    for (cidr, reason) in cases {
        let e = refused(Rules {
            internal_networks: vec!["192.168.0.0/16".into(), cidr.into()],
            ..Rules::default()
        });
        assert_eq!(e.rule, "internal_networks[1]");
        assert!(e.reason.contains(reason), "{cidr}: {e}");
        assert!(
            e.to_string()
                .starts_with("sanitize rule internal_networks[1]: "),
            "{e}"
        );
    }
}

#[test]
fn bad_custom_rules_are_refused() {
    let cases = [
        (custom("", "x", "y"), "custom[0]", "name"),
        (custom("has space", "x", "y"), "custom[0]", "name"),
        (custom("id", "", "y"), "custom:id", "empty"),
        (
            custom("id", "EMP-(\\d+", "y"),
            "custom:id",
            "not a valid regex",
        ),
        (
            custom("id", "\\d*", "y"),
            "custom:id",
            "matches the empty string",
        ),
        (custom("id", "EMP-(\\d+)", "$2"), "custom:id", "group `2`"),
        (custom("id", "EMP-(\\d+)", "$1x"), "custom:id", "group `1x`"),
        (
            custom("id", "EMP-(\\d+)", "${who}"),
            "custom:id",
            "group `who`",
        ),
    ];
    for (rules, rule, reason) in cases {
        let e = refused(rules);
        assert_eq!(e.rule, rule, "{e}");
        assert!(e.reason.contains(reason), "{e}");
    }
}

#[test]
fn good_replacements_are_accepted() {
    for replacement in ["$1", "${1}x", "$$1", "${id}", "$", "cost: $ 5"] {
        let rules = custom("id", "EMP-(?P<id>\\d+)", replacement);
        assert!(Sanitizer::new(&rules).is_ok(), "{replacement}");
    }
}

#[test]
fn duplicate_custom_names_are_refused() {
    let mut rules = custom("id", "a", "b");
    rules.custom.push(rules.custom[0].clone());
    let e = refused(rules);
    assert_eq!(e.rule, "custom:id");
    assert!(e.reason.contains("same name"));
}

#[test]
fn bad_names_and_domains_are_refused() {
    let e = refused(Rules {
        internal_domains: vec!["corp.example".into(), "bad domain".into()],
        ..Rules::default()
    });
    assert_eq!(
        (e.rule.as_str(), e.reason.contains("not a DNS domain name")),
        ("internal_domains[1]", true)
    );
    let e = refused(Rules {
        internal_domains: vec!["*.corp.example".into()],
        ..Rules::default()
    });
    assert!(e.reason.contains("without `*.`"), "{e}");
    let e = refused(Rules {
        known_users: vec![" ".into()],
        ..Rules::default()
    });
    assert_eq!(e.rule, "known_users[0]");
    let e = refused(Rules {
        known_users: vec!["Administrator".into()],
        ..Rules::default()
    });
    assert!(e.reason.contains("built-in account"), "{e}");
    let e = refused(Rules {
        internal_netbios: vec!["CORP\\X".into()],
        ..Rules::default()
    });
    assert_eq!(e.rule, "internal_netbios[0]");
    let e = refused(Rules {
        skip_properties: vec![String::new()],
        ..Rules::default()
    });
    assert_eq!(e.rule, "skip_properties[0]");
}

#[test]
fn rule_error_is_an_error() {
    let e: Box<dyn std::error::Error> = Box::new(refused(custom("", "x", "y")));
    assert!(e.to_string().contains("custom[0]"));
}
