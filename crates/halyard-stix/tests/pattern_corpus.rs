//! Proves that the pattern parser accepts the example patterns of STIX 2.1 §9 and other
//! valid forms, refuses a corpus of broken patterns with an offset inside the input, and
//! never panics on random bytes or mutated valid patterns.

use halyard_stix::pattern::{self, ComparisonExpr, ObservationExpr, Operator, Qualifier};

const VALID: &str = include_str!("fixtures/patterns_valid.txt");
const INVALID: &str = include_str!("fixtures/patterns_invalid.txt");

fn valid_patterns() -> impl Iterator<Item = &'static str> {
    VALID.lines().filter(|l| !l.is_empty())
}

#[test]
fn every_valid_pattern_parses() {
    for p in valid_patterns() {
        if let Err(e) = pattern::parse(p) {
            panic!("{p}\n  refused {e}");
        }
    }
}

#[test]
fn every_broken_pattern_is_refused_with_an_offset_inside_it() {
    let mut count = 0;
    for p in INVALID.lines() {
        let e = pattern::parse(p).expect_err(p);
        assert!(e.offset <= p.len(), "{p}: offset {} past the end", e.offset);
        assert!(!e.message.is_empty());
        count += 1;
    }
    assert!(count >= 50, "only {count} broken patterns");
}

#[test]
fn qualifiers_and_operators_are_in_the_tree() {
    let p = pattern::parse(
        "[network-traffic:dst_ref.type = 'domain-name'] REPEATS 5 TIMES WITHIN 1800 SECONDS",
    )
    .expect("valid");
    let ObservationExpr::Qualified { qualifiers, .. } = &p.root else {
        panic!("{p:?}");
    };
    assert_eq!(
        qualifiers,
        &[Qualifier::Repeats(5), Qualifier::Within(1800.0)]
    );
    let p = pattern::parse("[file:name NOT IN ('a', 'b') OR EXISTS file:size]").expect("valid");
    let ObservationExpr::Observation(ComparisonExpr::Or(parts)) = &p.root else {
        panic!("{p:?}");
    };
    assert!(
        matches!(&parts[0], ComparisonExpr::Compare(c) if c.negated && c.operator == Operator::In)
    );
    assert!(matches!(&parts[1], ComparisonExpr::Exists(_)));
    assert_eq!(p.object_types(), vec!["file"]);
    assert_eq!(pattern::string_literals(&p), vec!["a", "b"]);
}

#[test]
fn error_messages_say_what_is_expected() {
    let e = pattern::parse("[file:name = 'x'] WITHIN 5").expect_err("no SECONDS");
    assert_eq!(
        e.to_string(),
        "at offset 26: expected SECONDS, found the end of the pattern"
    );
    let e = pattern::parse("[file:hashes.SHA-256 = 'x']").expect_err("hyphen");
    assert_eq!(e.offset, 13);
    assert!(e.message.contains("quote it"), "{e}");
    let e = pattern::parse("[file:created = t'2016-13-01T00:00:00Z']").expect_err("month 13");
    assert_eq!(e.offset, 16);
}

#[test]
fn long_flat_chains_parse_without_deep_recursion() {
    let chain = vec!["[a:b = 1]"; 20_000].join(" AND ");
    let p = pattern::parse(&chain).expect("long chain");
    assert!(matches!(&p.root, ObservationExpr::And(v) if v.len() == 20_000));
    let inner = vec!["a:b = 'x'"; 20_000].join(" OR ");
    pattern::parse(&format!("[{inner}]")).expect("long comparison chain");
}

/// A small deterministic generator (xorshift), so failures reproduce from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let alphabet =
        b"[]()':.,*=!<>-+ 0123456789abcfhtxAND OR NOT FOLLOWEDBY WITHIN SECONDS\\\"\x00\xff";
    for _ in 0..20_000 {
        let len = rng.below(40);
        let bytes: Vec<u8> = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        let _ = pattern::parse(&text);
    }
}

#[test]
fn mutated_valid_patterns_never_panic() {
    let corpus: Vec<&str> = valid_patterns().collect();
    let pieces = [
        "[",
        "]",
        "(",
        ")",
        "'",
        "\\",
        " AND ",
        " OR ",
        "t'",
        "h'",
        "b'",
        ".",
        "[*]",
        "-",
        "é",
        "\u{1F600}",
    ];
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    for round in 0..20_000 {
        let base = corpus[round % corpus.len()];
        let mut chars: Vec<char> = base.chars().collect();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(chars.len() + 1);
            match rng.below(3) {
                0 if at < chars.len() => {
                    chars.remove(at);
                }
                1 => {
                    let piece = pieces[rng.below(pieces.len())];
                    for (i, c) in piece.chars().enumerate() {
                        chars.insert(at + i, c);
                    }
                }
                _ => chars.truncate(at),
            }
        }
        let text: String = chars.into_iter().collect();
        if let Err(e) = pattern::parse(&text) {
            assert!(
                e.offset <= text.len(),
                "seed round {round}: {text:?} offset {}",
                e.offset
            );
        }
    }
}
