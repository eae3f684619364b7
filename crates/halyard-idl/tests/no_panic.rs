//! Proves that no input makes the parser panic: random bytes, random soups of IDL tokens and
//! directives, and random mutations of the corpus files, from fixed seeds (printed on failure).

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use halyard_idl::{parse_str, ParseOptions};

/// xorshift64*: a small deterministic generator, enough to drive input generation.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "module",
    "struct",
    "union",
    "switch",
    "case",
    "default",
    "enum",
    "bitmask",
    "bitset",
    "bitfield",
    "typedef",
    "const",
    "sequence",
    "map",
    "string",
    "wstring",
    "fixed",
    "long",
    "unsigned",
    "short",
    "double",
    "char",
    "boolean",
    "octet",
    "int8",
    "uint64",
    "interface",
    "native",
    "exception",
    "valuetype",
    "TRUE",
    "FALSE",
    "A",
    "B",
    "_x",
    "::",
    "::A",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    ">>",
    "<<",
    "[",
    "]",
    ";",
    ":",
    ",",
    "=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "|",
    "^",
    "&",
    "~",
    "@",
    "@key",
    "@id(",
    "@value(",
    "@extensibility(",
    "@topic(name=",
    "@annotation",
    "0",
    "1",
    "0x",
    "0x1F",
    "077",
    "09",
    "1.5e",
    "1e-3",
    ".5",
    "'a'",
    "'\\x4",
    "\"s\"",
    "\"\\u12",
    "L\"w\"",
    "L'w'",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "\n#define X ",
    "\n#define F(x)",
    "\n#undef X",
    "\n#ifdef X\n",
    "\n#ifndef X\n",
    "\n#if defined(X) && X > 1\n",
    "\n#elif 1\n",
    "\n#else\n",
    "\n#endif\n",
    "\n#pragma keylist A B\n",
    "\n#line 7 \"f.idl\"\n",
    "\n#include \"nope.idl\"\n",
    "\n#error e\n",
    "\n#",
    "X",
    "\\\n",
    "\u{e9}",
    "\0",
];

fn check(seed: u64, text: &str, opts: &ParseOptions) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _ = parse_str("fuzz.idl", text, opts);
    }));
    if r.is_err() {
        panic!("panic for seed {seed:#x} on input {text:?}");
    }
}

fn quiet_opts() -> ParseOptions {
    let mut opts = ParseOptions::default();
    opts.max_nesting_depth = 32;
    opts
}

#[test]
fn random_bytes_never_panic() {
    let opts = quiet_opts();
    for seed in 1..=3000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        check(seed, &String::from_utf8_lossy(&bytes), &opts);
    }
}

#[test]
fn token_soup_never_panics() {
    let opts = quiet_opts();
    for seed in 1..=10000u64 {
        let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
        let count = rng.below(80);
        let mut text = String::new();
        for _ in 0..count {
            text.push_str(TOKENS[rng.below(TOKENS.len())]);
            if rng.below(3) > 0 {
                text.push(' ');
            }
        }
        check(seed, &text, &opts);
    }
}

#[test]
fn mutated_corpus_never_panics() {
    let opts = quiet_opts();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(common::idl_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "idl") {
            files.push(std::fs::read_to_string(path).unwrap());
        }
    }
    files.sort();
    for seed in 1..=4000u64 {
        let mut rng = Rng(seed.wrapping_mul(0xA076_1D64_78BD_642F) | 1);
        let mut text: Vec<char> = files[rng.below(files.len())].chars().collect();
        for _ in 0..1 + rng.below(4) {
            if text.is_empty() {
                break;
            }
            let at = rng.below(text.len());
            let len = rng.below(12).min(text.len() - at);
            match rng.below(3) {
                0 => {
                    text.drain(at..at + len);
                }
                1 => {
                    let token: Vec<char> = TOKENS[rng.below(TOKENS.len())].chars().collect();
                    text.splice(at..at, token);
                }
                _ => {
                    let copy: Vec<char> = text[at..at + len].to_vec();
                    let to = rng.below(text.len());
                    text.splice(to..to, copy);
                }
            }
        }
        check(seed, &text.into_iter().collect::<String>(), &opts);
    }
}

#[test]
fn the_largest_nesting_limit_still_fits_a_test_thread_stack() {
    let mut opts = ParseOptions::default();
    opts.max_nesting_depth = usize::MAX; // clamped by the crate
    for text in [
        format!("const long X = {}1{};", "(".repeat(5000), ")".repeat(5000)),
        format!(
            "typedef {}long{} T;",
            "sequence<".repeat(5000),
            ">".repeat(5000)
        ),
        "module M { ".repeat(5000),
        format!("const long X = 1{};", " | 1".repeat(100_000)),
    ] {
        assert!(parse_str("deep.idl", &text, &opts).is_err());
    }
    // Just under the limits: accepted, evaluated and dropped without overflowing.
    let chain = format!(
        "const long X = 0{};",
        " + 1".repeat(4 * halyard_idl::NESTING_DEPTH_MAX - 1)
    );
    let spec = parse_str("chain.idl", &chain, &opts).unwrap();
    assert_eq!(
        common::constant(&spec, "X"),
        halyard_idl::ast::ConstValue::Int(511)
    );
    let depth = halyard_idl::NESTING_DEPTH_MAX - 2;
    let parens = format!(
        "const long X = {}1{};",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    parse_str("parens.idl", &parens, &opts).unwrap();
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let opts = ParseOptions::default();
    for text in [
        "module M { ".repeat(5000),
        format!("const long X = {};", "(".repeat(20000)),
        format!("const long X = {}1;", "-".repeat(20000)),
        format!("typedef {}", "sequence<".repeat(20000)),
        format!("typedef {}long", "map<long, ".repeat(20000)),
        format!("struct S {{ @a({}) long x; }};", "(".repeat(20000)),
        format!("const long X = 1{};", " + 1".repeat(100_000)),
        format!("const long X = 1{};", " + (1".repeat(20000)),
    ] {
        assert!(parse_str("deep.idl", &text, &opts).is_err());
    }
}
