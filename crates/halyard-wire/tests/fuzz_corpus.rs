//! Proves that every committed fuzz seed and every minimized fuzz crash of the `rtps_message`
//! and `parameter_list` targets (fuzz/corpus/<t>/, fuzz/regressions/<t>/) passes the very
//! checks those targets run (fuzz/src/wire_checks.rs, included verbatim), on stable.

#[path = "../../../fuzz/src/wire_checks.rs"]
mod wire_checks;

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut files = Vec::new();
    for dir in ["corpus", "regressions"] {
        let Ok(rd) = std::fs::read_dir(fuzz.join(dir).join(target)) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_file() {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn replay(target: &str, check: fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no corpus for {target}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        if std::panic::catch_unwind(|| check(&bytes)).is_err() {
            panic!("{target}: {} fails the fuzz check", f.display());
        }
    }
}

#[test]
fn rtps_message_corpus_and_regressions() {
    replay("rtps_message", wire_checks::check_rtps_message);
}

#[test]
fn parameter_list_corpus_and_regressions() {
    replay("parameter_list", wire_checks::check_parameter_list);
}
