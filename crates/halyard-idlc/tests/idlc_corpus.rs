//! Every corpus type against Cyclone's own IDL compiler.
//!
//! Cyclone C 0.10.2's `idlc` (Debian package `cyclonedds-tools`, installed by
//! `scripts/install-deps.sh`) compiles each `tests/corpus/*.idl` to C. The generated `.c` holds,
//! per topic descriptor, the TypeInformation (`TYPE_INFO_CDR_<Type>`) and the type map
//! (`TYPE_MAP_CDR_<Type>`) as byte arrays. We decode those with `halyard-xtypes` and compare
//! every minimal and complete TypeObject with `halyard_idlc::type_objects` for the same file.
//!
//! The one known difference is normalized on both sides, and only it: `idlc` 0.10.2 sets
//! `IS_MUST_UNDERSTAND` on `@key` struct members (Halyard and the Python `cyclonedds` 11 package
//! do not). Because that flag changes the hash of a keyed type, and so every identifier that
//! names it, `idlc`'s objects are rewritten bottom-up: the flag is cleared, hashes of types
//! already normalized are replaced by their normalized hashes, and the object is hashed again.
//! After that the hashes must be ours exactly, the objects equal, and the TypeInformation equal
//! (dependencies compared as sets). Real differences of idlc 0.10.2 are listed in
//! [`KNOWN_DIFFERENCES`] with the reason; their diffs are printed, and the types that refer to
//! them are still compared in full (with the listed type's identifier taken as ours).
//!
//! A declaration `idlc` refuses (a syntax error, e.g. `map<>` which 0.10.2 does not parse) is
//! blanked out of a copy of the file and the file compiled again; such types are printed with
//! `idlc`'s message and not counted, and must be listed in [`KNOWN_REFUSED`].
//! With `CI` set, a missing `idlc` fails the test; otherwise it is skipped with a message.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use halyard_xtypes::{
    member_flag, TypeIdentifier, TypeInformation, TypeMapping, TypeObject, TypeObjectBody,
};

/// Declarations idlc 0.10.2 refuses, with the reason (file, type name, reason).
const KNOWN_REFUSED: &[(&str, &str, &str)] = &[(
    "corpus.idl",
    "Maps",
    "idlc 0.10.2 has no map<> support (syntax error)",
)];

/// Types whose objects differ from idlc's beyond the key must-understand flag (type, reason).
/// Each is an idlc 0.10.2 deviation, checked in Cyclone's source (tag 0.10.2,
/// `src/tools/idlc/src/descriptor_type_meta.c`; master's `src/idl/src/descriptor_type_meta.c`
/// has them fixed): the diff is still printed. Types that merely refer to one of these are
/// compared in full with its identifiers taken as ours, so they need no entry here.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "Corpus::Primitives",
        "idlc 0.10.2 maps int8 to TK_CHAR8 and uint8 to TK_BYTE (XTypes 1.3: TK_INT8, TK_UINT8; \
         Cyclone master fixed it)",
    ),
    (
        "Corpus::Defaults",
        "idlc 0.10.2's C generator ignores @default (it warns so): TRY_CONSTRUCT1 where we, \
         like the Python cyclonedds 11 package, set TRY_CONSTRUCT2 (USE_DEFAULT)",
    ),
    (
        "Common::Color",
        "idlc 0.10.2 sets no enum literal flags; XTypes 1.3 and Cyclone master flag the default \
         (first) literal IS_DEFAULT, as we do",
    ),
];

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// `idlc` present? Fails with `CI` set when it is not.
fn idlc_available() -> bool {
    match Command::new("idlc").arg("-v").output() {
        Ok(out) if out.status.success() => {
            let v = String::from_utf8_lossy(&out.stdout);
            eprintln!("using {}", v.trim());
            true
        }
        other => {
            let why =
                format!("Cyclone C `idlc` not runnable ({other:?}); install cyclonedds-tools");
            assert!(std::env::var_os("CI").is_none(), "CI: {why}");
            eprintln!("SKIPPED idlc_corpus: {why}");
            false
        }
    }
}

/// A declaration blanked out of the file because idlc refused it.
struct Refusal {
    name: String,
    message: String,
}

/// Line range (0-based, inclusive) and name of the declaration covering line `idx`.
fn declaration_at(lines: &[String], idx: usize) -> Option<(usize, usize, String)> {
    const STARTS: [&str; 6] = ["@", "struct", "union", "typedef", "enum", "bitmask"];
    let start = (0..=idx)
        .rev()
        .find(|&i| STARTS.iter().any(|s| lines[i].trim_start().starts_with(s)))?;
    let end = (start..lines.len()).find(|&i| lines[i].trim_end().ends_with("};"))?;
    let words: Vec<&str> = lines[start]
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let name = words
        .iter()
        .position(|w| ["struct", "union", "enum", "bitmask"].contains(w))
        .and_then(|p| words.get(p + 1))
        .or_else(|| words.last())?;
    Some((start, end, name.to_string()))
}

/// Compiles `file` with idlc into `out`, blanking refused declarations; returns the generated
/// C text and the refusals.
fn compile(file: &Path, out: &Path) -> (String, Vec<Refusal>) {
    let original = std::fs::read_to_string(file).unwrap();
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    let copy = out.join(file.file_name().unwrap());
    let mut refused = Vec::new();
    for _ in 0..20 {
        std::fs::write(&copy, lines.join("\n") + "\n").unwrap();
        let run = Command::new("idlc")
            .arg("-Wno-implicit-extensibility")
            .arg("-I")
            .arg(corpus_dir())
            .arg("-o")
            .arg(out)
            .arg(&copy)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        if run.status.success() {
            if !text.trim().is_empty() {
                eprintln!("idlc on {}: {}", file.display(), text.trim());
            }
            let c = copy.with_extension("c");
            return (std::fs::read_to_string(&c).unwrap(), refused);
        }
        // `<file>:<line>:<col>: <message>` about our copy.
        let prefix = format!("{}:", copy.display());
        let located = text
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| {
                panic!(
                    "idlc failed on {} without a location: {text}",
                    file.display()
                )
            });
        let line: usize = located
            .split(':')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("idlc message without a line: {located}"));
        let (start, end, name) = declaration_at(&lines, line.saturating_sub(1))
            .unwrap_or_else(|| panic!("no declaration around {}:{line}: {text}", file.display()));
        for l in &mut lines[start..=end] {
            l.clear();
        }
        refused.push(Refusal {
            name,
            message: located.to_string(),
        });
    }
    panic!("idlc keeps refusing {}", file.display());
}

/// `TYPE_INFO_CDR_<suffix>` / `TYPE_MAP_CDR_<suffix>` arrays of a generated `.c` by suffix.
fn arrays(c: &str, macro_prefix: &str) -> BTreeMap<String, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut rest = c;
    let marker = format!("#define {macro_prefix}");
    while let Some(at) = rest.find(&marker) {
        rest = &rest[at + marker.len()..];
        let Some((name, body)) = rest.split_once(' ') else {
            break;
        };
        if !body.starts_with("(unsigned char []){") {
            continue;
        }
        let end = body.find('}').expect("array closes");
        let bytes = body[..end]
            .split(|c: char| c == ',' || c.is_whitespace() || c == '\\' || c == '{')
            .filter_map(|t| t.strip_prefix("0x"))
            .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
            .collect();
        found.insert(name.to_string(), bytes);
    }
    found
}

fn ti_bytes(id: &TypeIdentifier) -> Vec<u8> {
    id.to_xcdr2_le().unwrap()
}

/// Replaces every occurrence of `from` with `to` (same length) in `bytes`.
fn replace(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    if from == to || from.is_empty() || bytes.len() < from.len() {
        return;
    }
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to);
            i += from.len();
        } else {
            i += 1;
        }
    }
}

/// Clears IS_MUST_UNDERSTAND on `@key` struct members, the one known idlc 0.10.2 difference.
fn clear_key_must_understand(o: &TypeObject) -> TypeObject {
    fn clear(f: &mut u16) {
        if *f & member_flag::IS_KEY != 0 {
            *f &= !member_flag::IS_MUST_UNDERSTAND;
        }
    }
    let mut o = o.clone();
    match &mut o {
        TypeObject::Minimal(TypeObjectBody::Struct(s)) => s
            .members
            .iter_mut()
            .for_each(|m| clear(&mut m.member_flags)),
        TypeObject::Complete(TypeObjectBody::Struct(s)) => s
            .members
            .iter_mut()
            .for_each(|m| clear(&mut m.member_flags)),
        _ => {}
    }
    o
}

/// The qualified name of a complete object.
fn complete_name(o: &TypeObject) -> Option<&str> {
    let TypeObject::Complete(body) = o else {
        return None;
    };
    Some(match body {
        TypeObjectBody::Alias(t) => &t.detail.type_name,
        TypeObjectBody::Struct(t) => &t.detail.type_name,
        TypeObjectBody::Union(t) => &t.detail.type_name,
        TypeObjectBody::Array(t) => &t.detail.type_name,
        TypeObjectBody::Enum(t) => &t.detail.type_name,
        TypeObjectBody::Bitmask(t) => &t.detail.type_name,
        TypeObjectBody::Sequence(_) | TypeObjectBody::Map(_) => return None,
    })
}

/// Where two objects of the same type differ, member by member where possible.
fn difference(ours: &TypeObject, theirs: &TypeObject) -> String {
    let members = |o: &TypeObject| -> Vec<String> {
        match o {
            TypeObject::Complete(TypeObjectBody::Struct(s)) => {
                s.members.iter().map(|m| format!("{m:?}")).collect()
            }
            TypeObject::Minimal(TypeObjectBody::Struct(s)) => {
                s.members.iter().map(|m| format!("{m:?}")).collect()
            }
            TypeObject::Complete(TypeObjectBody::Union(u)) => {
                u.members.iter().map(|m| format!("{m:?}")).collect()
            }
            TypeObject::Minimal(TypeObjectBody::Union(u)) => {
                u.members.iter().map(|m| format!("{m:?}")).collect()
            }
            _ => Vec::new(),
        }
    };
    let (a, b) = (members(ours), members(theirs));
    let mut out = Vec::new();
    for i in 0..a.len().max(b.len()) {
        if a.get(i) != b.get(i) {
            out.push(format!(
                "  member {i}:\n    ours  {:?}\n    idlc  {:?}",
                a.get(i),
                b.get(i)
            ));
        }
    }
    if out.is_empty() {
        out.push(format!("  ours {ours:?}\n  idlc {theirs:?}"));
    }
    out.join("\n")
}

/// Outcome of one corpus file.
#[derive(Default)]
struct Tally {
    equal: BTreeSet<String>,
    known_different: BTreeSet<String>,
    failures: Vec<String>,
    /// idlc objects that had must-understand on a key member (the normalized flag).
    key_must_understand: usize,
}

fn check_file(file: &Path, out: &Path, tally: &mut Tally) {
    let spec = halyard_idl::parse_file(file, &halyard_idl::ParseOptions::default()).unwrap();
    let ours = halyard_idlc::type_objects(&spec).unwrap();
    let (c, refused) = compile(file, out);
    let file_name = file.file_name().unwrap().to_string_lossy().to_string();
    for r in &refused {
        eprintln!("REFUSED by idlc: {file_name} {}: {}", r.name, r.message);
        if !KNOWN_REFUSED
            .iter()
            .any(|(f, n, _)| *f == file_name && *n == r.name)
        {
            tally.failures.push(format!(
                "{file_name}: idlc refused {} which is not in KNOWN_REFUSED: {}",
                r.name, r.message
            ));
        }
    }
    let is_refused = |qualified: &str| {
        refused
            .iter()
            .any(|r| qualified.rsplit("::").next() == Some(r.name.as_str()))
    };
    let infos = arrays(&c, "TYPE_INFO_CDR_");
    let maps = arrays(&c, "TYPE_MAP_CDR_");

    // Every object idlc emitted, by identifier bytes.
    let mut objects: BTreeMap<Vec<u8>, TypeObject> = BTreeMap::new();
    let mut to_minimal: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (name, bytes) in &maps {
        let map = TypeMapping::from_xcdr2(bytes)
            .unwrap_or_else(|e| panic!("{file_name} {name}: idlc's type map: {e}"));
        for (id, obj) in map.minimal.iter().chain(&map.complete) {
            // idlc's identifiers are the hashes of its objects under our hash function.
            assert_eq!(
                &obj.type_identifier().unwrap(),
                id,
                "{file_name} {name}: idlc's identifier is not the hash of its object"
            );
            if clear_key_must_understand(obj) != *obj {
                tally.key_must_understand += 1;
            }
            objects.insert(ti_bytes(id), obj.clone());
        }
        for (c, m) in &map.complete_to_minimal {
            to_minimal.insert(ti_bytes(c), ti_bytes(m));
        }
    }

    // A known-different type stands for our own in the types that refer to it.
    let mut pinned: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (id, obj) in &objects {
        let name = complete_name(obj).unwrap_or_default();
        if !KNOWN_DIFFERENCES.iter().any(|(n, _)| *n == name) {
            continue;
        }
        if let Some(entry) = ours.types.get(name) {
            pinned.insert(id.clone(), ti_bytes(&entry.complete_id.type_id));
            if let Some(m) = to_minimal.get(id) {
                pinned.insert(m.clone(), ti_bytes(&entry.minimal_id.type_id));
            }
        }
    }

    // Normalize bottom-up: clear the flag, substitute normalized hashes, rehash; to a fixpoint.
    let mut renamed: BTreeMap<Vec<u8>, Vec<u8>> =
        objects.keys().map(|k| (k.clone(), k.clone())).collect();
    let mut normalized: BTreeMap<Vec<u8>, TypeObject> = BTreeMap::new();
    for _ in 0..=objects.len() {
        let mut changed = false;
        for (id, obj) in &objects {
            let mut bytes = clear_key_must_understand(obj).to_xcdr2_le().unwrap();
            for (from, to) in &renamed {
                replace(&mut bytes, from, to);
            }
            let o = TypeObject::from_xcdr2(&bytes).unwrap();
            let new_id = match pinned.get(id) {
                Some(p) => p.clone(),
                None => ti_bytes(&o.type_identifier().unwrap()),
            };
            if renamed.get(id) != Some(&new_id) {
                renamed.insert(id.clone(), new_id);
                changed = true;
            }
            normalized.insert(id.clone(), o);
        }
        if !changed {
            break;
        }
    }

    // Compare objects, paired by the complete object's name.
    for (id, theirs) in &normalized {
        let Some(name) = complete_name(theirs) else {
            continue;
        };
        let Some(entry) = ours.types.get(name) else {
            tally
                .failures
                .push(format!("{file_name}: idlc has type {name} which we do not"));
            continue;
        };
        let known = KNOWN_DIFFERENCES.iter().find(|(n, _)| *n == name);
        let minimal = to_minimal.get(id).and_then(|m| normalized.get(m));
        let mut problems = Vec::new();
        let our_complete = clear_key_must_understand(&entry.complete);
        if our_complete != *theirs {
            problems.push(format!("complete:\n{}", difference(&our_complete, theirs)));
        } else if renamed[id] != ti_bytes(&entry.complete_id.type_id) {
            problems.push("complete hash differs though objects are equal".into());
        }
        match minimal {
            None => problems.push("idlc's map has no minimal object for it".into()),
            Some(m) => {
                let our_minimal = clear_key_must_understand(&entry.minimal);
                if our_minimal != *m {
                    problems.push(format!("minimal:\n{}", difference(&our_minimal, m)));
                }
            }
        }
        match (problems.is_empty(), known) {
            (true, None) => {
                tally.equal.insert(name.to_string());
            }
            (true, Some((_, why))) => tally.failures.push(format!(
                "{name} now equals idlc's; remove it from KNOWN_DIFFERENCES ({why})"
            )),
            (false, Some((_, why))) => {
                eprintln!("KNOWN DIFFERENCE {name} ({why}):\n{}", problems.join("\n"));
                tally.known_different.insert(name.to_string());
            }
            (false, None) => tally.failures.push(format!(
                "{file_name} {name} differs from idlc:\n{}",
                problems.join("\n")
            )),
        }
    }

    // TypeInformation of every topic type, with identifiers translated to normalized ones.
    let translate = |t: &mut halyard_xtypes::TypeIdentifierWithSize| {
        if let Some(n) = renamed.get(&ti_bytes(&t.type_id)) {
            t.type_id = TypeIdentifier::from_xcdr2(n).unwrap();
        }
    };
    let sorted = |mut i: TypeInformation| {
        for l in [&mut i.minimal, &mut i.complete] {
            translate(&mut l.typeid_with_size);
            l.dependent_typeids.iter_mut().for_each(translate);
            l.dependent_typeids.sort_by_key(|d| ti_bytes(&d.type_id));
        }
        i
    };
    for (name, topic) in &ours.topics {
        if is_refused(name) {
            continue;
        }
        let key = name.replace("::", "_");
        let Some(bytes) = infos.get(&key) else {
            tally.failures.push(format!(
                "{file_name}: idlc emitted no TypeInformation for topic {name}"
            ));
            continue;
        };
        let theirs = sorted(TypeInformation::from_xcdr2(bytes).unwrap());
        let mut mine = sorted(topic.type_information.clone());
        // Our own identifiers are already normalized; translate() leaves them alone.
        for l in [&mut mine.minimal, &mut mine.complete] {
            l.dependent_typeids.sort_by_key(|d| ti_bytes(&d.type_id));
        }
        let known = KNOWN_DIFFERENCES.iter().any(|(n, _)| n == name);
        if mine != theirs && !known {
            tally.failures.push(format!(
                "{file_name} {name}: TypeInformation differs\n  ours {mine:?}\n  idlc {theirs:?}"
            ));
        }
    }
}

#[test]
fn every_corpus_type_object_matches_cyclone_idlc_0_10_2() {
    if !idlc_available() {
        return;
    }
    let out = std::env::temp_dir().join(format!("halyard-idlc-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "idl"))
        .collect();
    files.sort();
    let mut tally = Tally::default();
    for file in &files {
        check_file(file, &out, &mut tally);
    }
    let _ = std::fs::remove_dir_all(&out);
    eprintln!(
        "{} types equal to idlc's (after clearing must-understand on keys): {:?}",
        tally.equal.len(),
        tally.equal
    );
    eprintln!("known differences: {:?}", tally.known_different);
    eprintln!(
        "{} idlc objects had IS_MUST_UNDERSTAND on a key member (cleared)",
        tally.key_must_understand
    );
    assert!(
        tally.key_must_understand > 0,
        "idlc 0.10.2 is known to set must-understand on keys; none seen, so the \
         normalization is stale"
    );
    assert!(
        tally.failures.is_empty(),
        "{} failures:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
    assert!(
        tally.equal.len() >= 20,
        "too few types compared: {:?}",
        tally.equal
    );
}
