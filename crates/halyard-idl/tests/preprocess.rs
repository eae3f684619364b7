//! Proves the preprocessor over several files: include search (beside the file, then the
//! include path), include guards and `#pragma once`, macros, conditionals, `#line`, and that
//! locations and errors name the original file, line and column.

mod common;

use common::*;
use halyard_idl::ast::*;
use halyard_idl::{ErrorKind, ParseOptions};

fn include_opts() -> ParseOptions {
    let mut opts = ParseOptions::default();
    opts.include_paths.push(idl_dir().join("include/sys"));
    opts
}

#[test]
fn includes_macros_and_conditionals_across_files() {
    let spec = parse_with("include/main.idl", &include_opts());
    // The guarded file and the `#pragma once` file each appear once although included twice.
    let modules: Vec<&str> = spec
        .definitions
        .iter()
        .filter_map(|d| match d {
            Definition::Module(m) => Some(m.name.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(modules, vec!["Common", "Sys"]);
    let extra = strukt(&spec, "Extra");
    assert_eq!(dims(member(extra, "data")), vec![8]);
    assert!(
        matches!(&member(extra, "id").type_spec, TypeSpec::Named(n) if n.resolved.as_deref() == Some("::Common::Id"))
    );
    assert!(
        matches!(&member(extra, "h").type_spec, TypeSpec::Named(n) if n.resolved.as_deref() == Some("::Sys::Handle"))
    );
    assert_eq!(constant(&spec, "CHOSEN"), ConstValue::Int(1));
    assert!(
        spec.definitions.iter().all(|d| name_of(d) != Some("Gone")),
        "#undef then #ifdef"
    );
    assert!(
        spec.definitions
            .iter()
            .all(|d| name_of(d) != Some("FromCaller")),
        "VERSION is 0"
    );
    assert_eq!(spec.pragmas.len(), 1);
    assert_eq!(spec.pragmas[0].text, "some_vendor_thing with words");
    // Locations: an included file's node names that file.
    let point = strukt(&spec, "Common::Point");
    assert!(
        point.location.file.ends_with("include/common/types.idl"),
        "{}",
        point.location.file
    );
    assert_eq!((point.location.line, point.location.column), (5, 3));
    // A macro-substituted type keeps the column of the macro name; later text its own column.
    let id = member(extra, "id");
    assert_eq!(
        (id.type_spec.location().line, id.type_spec.location().column),
        (12, 16)
    );
    assert_eq!((id.name.location.line, id.name.location.column), (12, 27));
    let data = member(extra, "data");
    assert_eq!(data.name.location.column, 36);
    // `#line 100 "renamed.idl"` renames and renumbers what follows.
    let after = strukt(&spec, "AfterLine");
    assert_eq!(&*after.location.file, "renamed.idl");
    assert_eq!(after.location.line, 100);
}

#[test]
fn caller_defines_select_branches() {
    let mut opts = include_opts();
    opts.defines.push(("VERSION".into(), "2".into()));
    let spec = parse_with("include/main.idl", &opts);
    strukt(&spec, "FromCaller");
}

#[test]
fn include_without_the_path_is_not_found_with_its_name() {
    let errs = file_errors("include/main.idl", &ParseOptions::default());
    let e = errs.first().unwrap();
    assert!(e.file().ends_with("include/main.idl"));
    assert_eq!((e.line(), e.column()), (3, 10));
    assert_eq!(
        e.message(),
        "included file `sys_types.idl` not found beside the including file or on the include path"
    );
}

#[test]
fn missing_include_is_an_error_naming_it() {
    let errs = file_errors("include/missing.idl", &ParseOptions::default());
    assert_eq!(errs.len(), 1);
    let text = errs.to_string();
    assert!(text.ends_with(
        "include/missing.idl:4:10: included file `does_not_exist.idl` not found beside the including file or on the include path"
    ), "{text}");
}

#[test]
fn include_cycle_stops_at_the_depth_limit() {
    let mut opts = ParseOptions::default();
    opts.max_include_depth = 8;
    let errs = file_errors("include/cycle_a.idl", &opts);
    let e = errs.first().unwrap();
    match &e.kind {
        ErrorKind::IncludeTooDeep { limit, chain } => {
            assert_eq!(*limit, 8);
            assert_eq!(chain.len(), 9);
            assert!(chain[0].ends_with("cycle_a.idl") && chain[1].ends_with("cycle_b.idl"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!((e.line(), e.column()), (1, 10));
}

#[test]
fn include_depth_is_clamped_so_a_cycle_cannot_overflow_the_stack() {
    let mut opts = ParseOptions::default();
    opts.max_include_depth = usize::MAX;
    let errs = file_errors("include/cycle_a.idl", &opts);
    match &errs.first().unwrap().kind {
        ErrorKind::IncludeTooDeep { limit, .. } => {
            assert_eq!(*limit, halyard_idl::INCLUDE_DEPTH_MAX)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn syntax_error_in_an_included_file_points_into_it() {
    let errs = file_errors("include/bad_in_include.idl", &ParseOptions::default());
    let e = errs.first().unwrap();
    assert!(e.file().ends_with("include/common/broken.idl"), "{e}");
    assert_eq!((e.line(), e.column()), (4, 3));
    assert_eq!(e.message(), "expected `;`, found `}`");
}

#[test]
fn directive_errors() {
    assert_eq!(
        errors("#if 1\nstruct S { long a; };\n"),
        "t.idl:1:1: `#if` without a matching `#endif` before the end of the file"
    );
    assert_eq!(
        errors("struct S { long a; };\n#endif\n"),
        "t.idl:2:1: `#endif` without a matching `#if`"
    );
    assert_eq!(
        errors("  #define F(x) x\n"),
        "t.idl:1:3: bad `#define` directive: function-like macros are not supported"
    );
    assert_eq!(errors("#error stop here\n"), "t.idl:1:1: #error stop here");
    assert_eq!(
        errors("#frobnicate\n"),
        "t.idl:1:1: bad `#frobnicate` directive: unknown preprocessor directive"
    );
    assert_eq!(
        errors("#if (1 +\n#endif\n"),
        "t.idl:1:5: bad `#if` directive: condition ends too early"
    );
    assert_eq!(
        errors("struct S { long a; }; /* open\n\n"),
        "t.idl:1:23: `/*` comment is never closed"
    );
    assert_eq!(
        errors("#include nothing\n"),
        "t.idl:1:10: bad `#include` directive: expected \"file\" or <file>"
    );
}

#[test]
fn comments_and_macros_keep_columns() {
    let spec = parse_text("#define T long\n/* a */ struct /* b */ S { T /* c */ x; };\n");
    let s = strukt(&spec, "S");
    assert_eq!((s.location.line, s.location.column), (2, 9));
    assert_eq!(s.name.location.column, 24);
    let x = member(s, "x");
    assert_eq!(x.type_spec.location().column, 28);
    assert_eq!(x.name.location.column, 38);
    assert!(matches!(x.type_spec, TypeSpec::Basic(BasicType::Long, _)));
}

#[test]
fn self_referencing_macros_do_not_loop() {
    let spec = parse_text("#define A B\n#define B A\nstruct S { long A; };\n");
    assert_eq!(strukt(&spec, "S").members[0].name.name, "A");
}

#[test]
fn literals_are_not_macro_expanded() {
    let spec = parse_text("#define X 5\nconst string S = \"X\";\nconst char C = 'X';\n");
    assert_eq!(constant(&spec, "S"), ConstValue::Str("X".into()));
    assert_eq!(constant(&spec, "C"), ConstValue::Char('X'));
}

#[test]
fn unreadable_root_file_is_an_io_error() {
    let errs = file_errors("no_such_file.idl", &ParseOptions::default());
    let e = errs.first().unwrap();
    assert!(matches!(e.kind, ErrorKind::Io { .. }));
    assert_eq!((e.line(), e.column()), (1, 1));
    assert!(e.message().starts_with("cannot read `"), "{e}");
}
