//! Proves on seeded random text built from the fragments the rules look for that sanitising
//! never panics and that its changes chain exactly from input to output. (Idempotence is proven
//! on realistic text in the rules and corpus tests; on junk like this a second pass may
//! generalise further, which only ever removes more.)

use halyard_stix::sanitize::{CustomRule, Rules, Sanitizer};
use serde_json::{json, Map, Value};

const FRAGMENTS: &[&str] = &[
    "10.1.2.3",
    "10.0.0.0/8",
    "fd12::1",
    "::ffff:",
    "/24",
    "/",
    ":",
    ".",
    "\\",
    "\\\\",
    "'",
    "@",
    "corp.example",
    "fs01.",
    "C:\\Users\\",
    "/home/",
    "CORP\\",
    "jdoe",
    " ",
    "é",
    "ſ",
    "K",
    "[",
    "]",
    "(",
    ")",
    "=",
    "!=",
    "ipv4-addr:value",
    "hashes.",
    "h",
    "x",
    "-",
    "EMP-123456",
    "$",
    "<",
    ">",
    "\n",
    "ISSUBSET",
    "NOT",
    "S-1-5-21-1-2-3-4",
    "8.8.8.8",
    "jane",
    "%",
    ",",
];

/// A small deterministic generator (xorshift64*), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn text(&mut self) -> String {
        let len = 1 + self.next() % 24;
        (0..len)
            .map(|_| FRAGMENTS[(self.next() % FRAGMENTS.len() as u64) as usize])
            .collect()
    }
}

fn sanitizer() -> Sanitizer {
    Sanitizer::new(&Rules {
        internal_domains: vec!["corp.example".into()],
        internal_networks: vec!["10.0.0.0/8".into(), "fd00::/8".into()],
        internal_netbios: vec!["CORP".into()],
        known_users: vec!["jdoe".into()],
        custom: vec![CustomRule {
            name: "employee-id".into(),
            pattern: r"\bEMP-\d{6}\b".into(),
            replacement: "EMP-XXXXXX".into(),
        }],
        ..Rules::default()
    })
    .expect("rules compile")
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("objects only"),
    }
}

#[test]
fn random_text_and_patterns_are_sanitised_consistently() {
    let sanitizer = sanitizer();
    for seed in 1..=3000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let text = rng.text();
        let pattern = format!(
            "[ipv4-addr:value = '{}'] AND [file:name = '{}']",
            rng.text(),
            text
        );
        let mut obj = object(json!({"type": "indicator", "pattern": pattern, "description": text}));
        let input = obj.clone();
        let changes = sanitizer.sanitize(&mut obj);
        for key in ["pattern", "description"] {
            let path = format!("/{key}");
            let chain: Vec<_> = changes.iter().filter(|c| c.path == path).collect();
            let Some(first) = chain.first() else {
                assert_eq!(
                    obj[key], input[key],
                    "seed {seed}: {key} changed unreported"
                );
                continue;
            };
            assert_eq!(input[key], first.before.as_str(), "seed {seed}");
            assert_eq!(
                obj[key],
                chain[chain.len() - 1].after.as_str(),
                "seed {seed}"
            );
            for pair in chain.windows(2) {
                assert_eq!(pair[0].after, pair[1].before, "seed {seed}");
            }
        }
    }
}
