//! Proves that what the back ends cannot compile is reported as `file:line:col: error: ...`
//! at the offending construct, and that parse errors keep their position too.

fn compile(text: &str) -> Result<String, String> {
    let spec = halyard_idl::parse_str("t.idl", text, &halyard_idl::ParseOptions::default())
        .map_err(|e| halyard_idlc::Error::from(e).to_string())?;
    let types = halyard_idlc::type_objects(&spec).map_err(|e| e.to_string())?;
    halyard_idlc::rust::generate(&spec, &types).map_err(|e| e.to_string())?;
    halyard_idlc::python::generate(&spec, &types).map_err(|e| e.to_string())?;
    Ok(String::new())
}

#[test]
fn unsupported_constructs_point_at_file_line_and_column() {
    let cases = [
        ("struct S {\n  wstring w;\n};", "t.idl:2:3: error: wstring is not supported"),
        ("struct S {\n  long double x;\n};", "t.idl:2:3: error: `long double` is not supported"),
        (
            "struct S { map<long, long, 4> m; };",
            "t.idl:1:28: error: bounded maps are not supported (the XTypes of Cyclone's Python binding has no bound for maps)",
        ),
        ("struct S { fixed<5, 2> f; };", "t.idl:1:12: error: fixed-point types are not supported"),
        (
            "@mutable union U switch (long) { case 1: long a; };\nstruct S { U u; };",
            "t.idl:1:1: error: @mutable unions are not supported",
        ),
        (
            "struct S { map<double, long> m; };",
            "t.idl:1:12: error: map keys cannot be floating-point",
        ),
    ];
    for (idl, want) in cases {
        let got = compile(idl).expect_err(idl);
        assert_eq!(got, want, "{idl}");
    }
}

#[test]
fn parse_errors_keep_their_position() {
    let got = compile("struct S { long x }").unwrap_err();
    assert!(got.starts_with("t.idl:1:19: error: "), "{got}");
}

#[test]
fn recursive_types_are_refused_not_looped() {
    let got = compile("struct N; struct N { sequence<N> next; };").unwrap_err();
    assert!(got.contains("recursive type `N` is not supported"), "{got}");
}

/// Every corpus file with one line removed: whatever parses must compile or fail with an error,
/// never panic.
#[test]
fn damaged_corpus_never_panics() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let common = std::fs::read_to_string(dir.join("common.idl")).unwrap();
    let corpus = std::fs::read_to_string(dir.join("corpus.idl")).unwrap();
    let whole = corpus.replace("#include \"common.idl\"", &common);
    let lines: Vec<&str> = whole.lines().collect();
    let mut compiled = 0;
    for skip in 0..lines.len() {
        let text: Vec<&str> = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, l)| *l)
            .collect();
        if compile(&text.join("\n")).is_ok() {
            compiled += 1;
        }
    }
    assert!(compiled > 0);
}
