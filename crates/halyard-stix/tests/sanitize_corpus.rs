//! Proves on a corpus of realistic STIX 2.1 objects that sanitising removes every planted
//! personal or internal datum, keeps the public intelligence, leaves every unreported value
//! byte-identical, reports exactly the differences it made, and keeps patterns well-formed.
//!
//! The corpus lives in `tests/corpus/sanitize/`: `rules.json` (the `[sanitize]` rules),
//! `input/NAME.json`, the reviewed `expected/NAME.json`, and `planted.json`, which lists for
//! each NAME the strings that must be gone (`planted`) and those that must remain (`kept`).
//! After a deliberate change of behaviour, `HALYARD_BLESS=1` rewrites the expected files, which
//! then need reviewing like any other diff.

use halyard_stix::sanitize::{Change, Rules, Sanitizer, CREDENTIAL_WITHHELD};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/sanitize")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Planted {
    planted: Vec<String>,
    kept: Vec<String>,
}

/// One corpus object: its name, input, sanitised output and changes.
struct Case {
    name: String,
    input: Map<String, Value>,
    output: Map<String, Value>,
    changes: Vec<Change>,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> T {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sanitizer() -> Sanitizer {
    let rules: Rules = read_json(&corpus_dir().join("rules.json"));
    Sanitizer::new(&rules).expect("corpus rules compile")
}

fn cases() -> Vec<Case> {
    let sanitizer = sanitizer();
    let mut names: Vec<String> = fs::read_dir(corpus_dir().join("input"))
        .expect("corpus input directory")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 10, "corpus too small: {names:?}");
    names
        .into_iter()
        .map(|name| {
            let input: Map<String, Value> =
                read_json(&corpus_dir().join(format!("input/{name}.json")));
            let mut output = input.clone();
            let changes = sanitizer.sanitize(&mut output);
            Case {
                name,
                input,
                output,
                changes,
            }
        })
        .collect()
}

/// Every scalar (and empty container) of a JSON tree by JSON pointer.
fn leaves(value: &Value, path: String, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let key = k.replace('~', "~0").replace('/', "~1");
                leaves(v, format!("{path}/{key}"), out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                leaves(v, format!("{path}/{i}"), out);
            }
        }
        other => {
            out.insert(path, other.clone());
        }
    }
}

fn leaf_map(map: &Map<String, Value>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    leaves(&Value::Object(map.clone()), String::new(), &mut out);
    out
}

fn strings(map: &Map<String, Value>) -> Vec<String> {
    leaf_map(map)
        .into_values()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn outputs_match_the_reviewed_expected_files() {
    let bless = std::env::var_os("HALYARD_BLESS").is_some();
    for case in cases() {
        let path = corpus_dir().join(format!("expected/{}.json", case.name));
        let output = Value::Object(case.output);
        if bless {
            let text = serde_json::to_string_pretty(&output).expect("serialise") + "\n";
            fs::write(&path, text).expect("write expected");
            continue;
        }
        let expected: Value = read_json(&path);
        assert_eq!(output, expected, "{}", case.name);
    }
}

#[test]
fn planted_data_is_gone_and_public_intelligence_stays() {
    let planted: BTreeMap<String, Planted> = read_json(&corpus_dir().join("planted.json"));
    let cases = cases();
    let names: Vec<&String> = cases.iter().map(|c| &c.name).collect();
    assert_eq!(
        planted.keys().collect::<Vec<_>>(),
        names,
        "planted.json covers the corpus"
    );
    for case in &cases {
        let entry = &planted[&case.name];
        let input = strings(&case.input).join("\n");
        let output = strings(&case.output).join("\n");
        for p in &entry.planted {
            assert!(
                input.contains(p.as_str()),
                "{}: `{p}` was never planted",
                case.name
            );
            assert!(
                !output.contains(p.as_str()),
                "{}: `{p}` survived",
                case.name
            );
        }
        for k in &entry.kept {
            assert!(output.contains(k.as_str()), "{}: `{k}` was lost", case.name);
        }
    }
}

#[test]
fn only_reported_paths_differ_and_changes_chain_exactly() {
    for case in cases() {
        let before = leaf_map(&case.input);
        let after = leaf_map(&case.output);
        let mut by_path: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
        for c in &case.changes {
            assert_ne!(c.before, c.after, "{}: empty change {c:?}", case.name);
            by_path.entry(c.path.as_str()).or_default().push(c);
        }
        for (path, chain) in &by_path {
            check_chain(&case.name, path, chain, &before, &after);
        }
        let reported = |p: &str| by_path.contains_key(p);
        for (path, value) in &before {
            if !reported(path) {
                assert_eq!(
                    after.get(path),
                    Some(value),
                    "{}: {path} changed unreported",
                    case.name
                );
            }
        }
        for path in after.keys() {
            assert!(before.contains_key(path), "{}: {path} appeared", case.name);
        }
    }
}

fn check_chain(
    name: &str,
    path: &str,
    chain: &[&Change],
    before: &BTreeMap<String, Value>,
    after: &BTreeMap<String, Value>,
) {
    if chain[0].rule == "credential" {
        assert_eq!(chain.len(), 1, "{name}: {path}");
        assert_eq!(chain[0].before, CREDENTIAL_WITHHELD);
        assert!(
            before.contains_key(path),
            "{name}: {path} removed but absent"
        );
        assert!(!after.contains_key(path), "{name}: {path} not removed");
        return;
    }
    let first = Value::String(chain[0].before.clone());
    let last = Value::String(chain[chain.len() - 1].after.clone());
    assert_eq!(
        before.get(path),
        Some(&first),
        "{name}: {path} first before"
    );
    assert_eq!(after.get(path), Some(&last), "{name}: {path} last after");
    for pair in chain.windows(2) {
        assert_eq!(pair[0].after, pair[1].before, "{name}: {path} chain");
    }
}

#[test]
fn patterns_stay_well_formed() {
    let mut seen = 0;
    for case in cases() {
        let Some(pattern) = case.output.get("pattern").and_then(Value::as_str) else {
            continue;
        };
        seen += 1;
        assert_well_formed(pattern).unwrap_or_else(|e| panic!("{}: {e}: {pattern}", case.name));
    }
    assert!(seen >= 4, "corpus has {seen} patterns");
}

/// Literals closed with only `\\` and `\'` escapes; brackets and parentheses balanced outside
/// them; no letters glued to a quote other than the `h`/`b`/`t` prefixes.
fn assert_well_formed(pattern: &str) -> Result<(), String> {
    let mut stack = Vec::new();
    let mut chars = pattern.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => {
                loop {
                    match chars.next() {
                        None => return Err(format!("literal at {i} not closed")),
                        Some((_, '\'')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, '\\' | '\'')) => {}
                            other => return Err(format!("bad escape {other:?} in literal at {i}")),
                        },
                        Some(_) => {}
                    }
                }
                if chars.peek().is_some_and(|(_, n)| n.is_alphanumeric()) {
                    return Err(format!("word glued after literal at {i}"));
                }
            }
            '[' | '(' => stack.push(c),
            ']' | ')' => {
                let open = if c == ']' { '[' } else { '(' };
                if stack.pop() != Some(open) {
                    return Err(format!("unbalanced `{c}` at {i}"));
                }
            }
            _ => {}
        }
    }
    match stack.is_empty() {
        true => Ok(()),
        false => Err(format!("unclosed {stack:?}")),
    }
}

#[test]
fn sanitising_the_output_again_changes_nothing() {
    let sanitizer = sanitizer();
    for case in cases() {
        let mut again = case.output.clone();
        let changes = sanitizer.sanitize(&mut again);
        assert!(changes.is_empty(), "{}: {changes:?}", case.name);
        assert_eq!(again, case.output);
    }
}

#[test]
fn every_object_kind_in_the_corpus_is_exercised() {
    let cases = cases();
    let changed = cases.iter().filter(|c| !c.changes.is_empty()).count();
    let untouched = cases.iter().filter(|c| c.changes.is_empty()).count();
    assert!(
        changed >= 10 && untouched >= 2,
        "{changed} changed, {untouched} untouched"
    );
    let rules: std::collections::BTreeSet<&str> = cases
        .iter()
        .flat_map(|c| c.changes.iter().map(|ch| ch.rule.as_str()))
        .collect();
    for rule in [
        "custom:employee-id",
        "custom:ticket",
        "custom:workstation",
        "file-path",
        "email",
        "hostname",
        "username",
        "internal-ip",
        "credential",
    ] {
        assert!(rules.contains(rule), "no change by {rule}: {rules:?}");
    }
}
