//! Proves the Rust back end's output for the whole corpus is rustfmt-clean once formatted (what
//! the build.rs helper and `halyard idl` write; the corpus-test crate compiles and runs it).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn generated_rust_is_rustfmt_clean() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut opts = halyard_idl::ParseOptions::default();
    opts.include_paths.push(corpus.clone());
    let (code, read) = halyard_idlc::compile_rust(
        &corpus.join("corpus.idl"),
        &opts,
        &halyard_idlc::rust::Options::default(),
    )
    .unwrap();
    assert!(
        read.iter().any(|f| f.ends_with("common.idl")),
        "includes are reported: {read:?}"
    );
    if Command::new("rustfmt").arg("--version").output().is_err() {
        eprintln!("SKIPPED: rustfmt is not installed");
        return;
    }
    let again = halyard_idlc::rust::rustfmt(&code).expect("rustfmt accepts the generated code");
    assert_eq!(again, code, "compile_rust output is already formatted");
}

#[test]
fn the_runtime_path_is_configurable() {
    let spec = halyard_idl::parse_str(
        "t.idl",
        "struct S { string<4> s; };",
        &halyard_idl::ParseOptions::default(),
    )
    .unwrap();
    let types = halyard_idlc::type_objects(&spec).unwrap();
    let default = halyard_idlc::rust::generate(&spec, &types).unwrap();
    assert!(
        default.contains("::halyard::cdr::BoundedString<4>")
            && default.contains("::halyard::cdr::Topic")
    );
    let mut opts = halyard_idlc::rust::Options::default();
    opts.runtime = "::halyard_cdr".to_string();
    let own = halyard_idlc::rust::generate_with(&spec, &types, &opts).unwrap();
    assert!(own.contains("::halyard_cdr::BoundedString<4>") && !own.contains("::halyard::cdr"));
}
