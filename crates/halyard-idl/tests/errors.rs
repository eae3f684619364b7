//! Proves that malformed IDL gives errors at the exact file:line:column with a message that
//! says what is wrong, for syntax errors and for every check of the resolver.

mod common;

use common::errors;

#[test]
fn syntax_errors_point_at_the_offending_token() {
    assert_eq!(
        errors("struct S {\n  long x\n};\n"),
        "t.idl:3:1: expected `;`, found `}`"
    );
    assert_eq!(errors("module M {\n  strukt S { long x; };\n};"), "t.idl:2:3: expected a definition (`module`, `struct`, `union`, `enum`, `bitmask`, `bitset`, `typedef` or `const`), found `strukt`");
    assert_eq!(
        errors("struct S { long long long x; };"),
        "t.idl:1:22: expected an identifier, found `long`"
    );
    assert_eq!(
        errors("struct S { sequence<long x; };"),
        "t.idl:1:26: expected `>`, found `x`"
    );
    assert_eq!(
        errors("struct S { 42 x; };"),
        "t.idl:1:12: expected a type, found `42`"
    );
    assert_eq!(
        errors("module M {\n  struct S { long x; };\n"),
        "t.idl:3:1: expected `}` closing the module, found end of input"
    );
    assert_eq!(
        errors("union U switch (long) { };"),
        "t.idl:1:25: expected `case` or `default`, found `}`"
    );
    assert_eq!(
        errors("enum E { A, B C };"),
        "t.idl:1:15: expected `}`, found `C`"
    );
    assert_eq!(
        errors("const long X = ;"),
        "t.idl:1:16: expected a constant expression, found `;`"
    );
    assert_eq!(
        errors("struct S { long x[; };"),
        "t.idl:1:19: expected a constant expression, found `;`"
    );
    assert_eq!(
        errors("struct S { unsigned char c; };"),
        "t.idl:1:21: expected `short` or `long` after `unsigned`, found `char`"
    );
    assert_eq!(
        errors("struct S { long x; }"),
        "t.idl:1:21: expected `;`, found end of input"
    );
}

#[test]
fn bad_literals() {
    assert_eq!(
        errors("const long X = 0x;"),
        "t.idl:1:16: malformed or out-of-range literal `0x`"
    );
    assert_eq!(
        errors("const long X = 09;"),
        "t.idl:1:16: malformed or out-of-range literal `09`"
    );
    assert_eq!(
        errors("const string S = \"open;\n"),
        "t.idl:1:18: malformed or out-of-range literal `\"open;`"
    );
    assert_eq!(
        errors("const char C = 'ab';"),
        "t.idl:1:16: malformed or out-of-range literal `'ab';`"
    );
}

#[test]
fn duplicates() {
    assert_eq!(
        errors("struct S { long a; };\nstruct S { long b; };"),
        "t.idl:2:8: name `::S` declared twice; first declared at t.idl:1:8"
    );
    assert_eq!(
        errors("struct S {\n  long a;\n  short a;\n};"),
        "t.idl:3:9: member `a` declared twice; first declared at t.idl:2:8"
    );
    assert_eq!(
        errors("struct A { long x; };\nstruct B : A { long x; };"),
        "t.idl:2:21: member `x` declared twice; first declared at t.idl:2:12"
    );
    assert_eq!(
        errors("enum E { A, B };\nconst long A = 1;"),
        "t.idl:2:12: name `::A` declared twice; first declared at t.idl:1:10"
    );
    assert_eq!(
        errors("union U switch (long) {\n  case 1: long a;\n  case 1: long b;\n};"),
        "t.idl:3:8: case label `1` declared twice; first declared at t.idl:2:8"
    );
    assert_eq!(
        errors("struct S {\n  @id(1) long a;\n  @id(1) long b;\n};"),
        "t.idl:3:15: member @id `1` declared twice; first declared at t.idl:2:15"
    );
    assert_eq!(
        errors("enum E { A, @value(0) B };"),
        "t.idl:1:23: enumerator value `0` declared twice; first declared at t.idl:1:10"
    );
}

#[test]
fn names_differing_only_in_case_collide() {
    assert_eq!(
        errors("module M { struct Point { long x; }; };\nmodule M { typedef long point; };"),
        "t.idl:2:25: `::M::point` differs only in case from `::M::Point` declared at t.idl:1:19; IDL names that differ only in case collide"
    );
    assert_eq!(
        errors("struct S { long value; short Value; };"),
        "t.idl:1:30: `Value` differs only in case from `value` declared at t.idl:1:17; IDL names that differ only in case collide"
    );
}

#[test]
fn names_must_be_declared_before_use() {
    assert_eq!(
        errors("struct S { Later l; };\nstruct Later { long x; };"),
        "t.idl:1:12: `Later` is used before its declaration at t.idl:2:8; IDL requires declaration before use"
    );
    assert_eq!(
        errors("const long A = B;\nconst long B = 1;"),
        "t.idl:1:16: `B` is used before its declaration at t.idl:2:12; IDL requires declaration before use"
    );
    assert_eq!(
        errors("struct A;\nstruct B { sequence<A> ok; A a; };\nstruct A { long x; };"),
        "t.idl:2:28: `::A` is held by value before its definition at t.idl:3:8; until then only a sequence or map may hold it"
    );
    // A later declaration in an inner scope does not hide the outer one seen before it.
    let spec = common::parse_text(
        "module A { typedef long T; module B { struct S { T t; }; typedef short T; }; };",
    );
    let s = common::strukt(&spec, "A::B::S");
    match &s.members[0].type_spec {
        halyard_idl::ast::TypeSpec::Named(n) => assert_eq!(n.resolved.as_deref(), Some("::A::T")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_and_wrong_kind_names() {
    assert_eq!(
        errors("module M {\n  struct S { Missing m; };\n};"),
        "t.idl:2:14: `Missing` is not declared in this scope or any enclosing one"
    );
    assert_eq!(
        errors("module A { struct T { long x; }; };\nmodule B { struct S { T t; }; };"),
        "t.idl:2:23: `T` is not declared in this scope or any enclosing one"
    );
    assert_eq!(
        errors("const long C = 1;\nstruct S { C c; };"),
        "t.idl:2:12: `::C` is a constant, but a type is needed here"
    );
    assert_eq!(
        errors("struct S { long x; };\nconst long C = S;"),
        "t.idl:2:16: `::S` is a struct, but a constant is needed here"
    );
    assert_eq!(
        errors("enum E { A };\nstruct S : E { long x; };"),
        "t.idl:2:12: `::E` is an enum, but a struct is needed here"
    );
}

#[test]
fn unsupported_declaration_used_by_a_struct() {
    assert_eq!(
        errors("interface I { void f(); };\nnative N;\nstruct S {\n  long ok;\n  I i;\n  sequence<N> n;\n};"),
        "t.idl:5:3: `::I` is an interface, which Halyard does not support in data types\n\
         t.idl:6:12: `::N` is a native, which Halyard does not support in data types"
    );
    assert_eq!(
        errors("struct Never;\ntypedef sequence<Never> Many;\nstruct S { Many m; };"),
        "t.idl:3:12: `::Never` is declared forward but never defined, so no data type can hold it"
    );
}

#[test]
fn keylist_naming_a_missing_member() {
    assert_eq!(
        errors("module M {\n  struct S { long a; };\n  #pragma keylist S a b\n};"),
        "t.idl:3:3: key `b` is not a member of `::M::S`"
    );
    assert_eq!(
        errors("#pragma keylist Nope a\n"),
        "t.idl:1:1: `Nope` is not declared in this scope or any enclosing one"
    );
}

#[test]
fn union_discriminator_and_label_mismatches() {
    assert_eq!(
        errors("union U switch (float) { case 1: long a; };"),
        "t.idl:1:17: union discriminator type `float` is not an integer, char, boolean, octet or enum type"
    );
    assert_eq!(
        errors("union U switch (short) {\n  case 70000: long a;\n};"),
        "t.idl:2:8: case label 70000 is not a value of the discriminator type `short`"
    );
    assert_eq!(
        errors("enum E { A, B };\nenum F { C };\nunion U switch (E) { case C: long a; };"),
        "t.idl:3:27: case label ::F::C is not a value of the discriminator type `E`"
    );
    assert_eq!(
        errors("union U switch (char) { case 1: long a; };"),
        "t.idl:1:30: case label 1 is not a value of the discriminator type `char`"
    );
    assert_eq!(
        errors("union U switch (boolean) { case 'x': long a; };"),
        "t.idl:1:33: case label 'x' is not a value of the discriminator type `boolean`"
    );
}

#[test]
fn recursive_structs_by_value() {
    assert_eq!(
        errors("struct A;\nstruct B { A a; };\nstruct A { B b; };"),
        "t.idl:2:12: `::A` is held by value before its definition at t.idl:3:8; until then only a sequence or map may hold it\n\
         t.idl:3:12: `::A` contains itself by value (::A -> ::B -> ::A), so it would be infinitely large; use a sequence or @external"
    );
    assert_eq!(
        errors("struct S { long x; S again; };"),
        "t.idl:1:20: `::S` contains itself by value (::S -> ::S), so it would be infinitely large; use a sequence or @external"
    );
    assert_eq!(
        errors("struct S;\ntypedef S Arr[2];\nstruct S { Arr a; };"),
        "t.idl:3:12: `::S` contains itself by value (::S -> ::S), so it would be infinitely large; use a sequence or @external"
    );
    // Sequences and @external break the cycle.
    parse_ok("struct S;\nstruct S { sequence<S> children; @external S next; };");
}

fn parse_ok(text: &str) {
    common::parse_text(text);
}

#[test]
fn constant_evaluation_errors() {
    assert_eq!(
        errors("const long X = 1 / 0;"),
        "t.idl:1:16: division by zero"
    );
    assert_eq!(
        errors("const octet O = 256;"),
        "t.idl:1:17: value 256 does not fit in type `octet`"
    );
    assert_eq!(
        errors("const long X = \"s\" + 1;"),
        "t.idl:1:16: operator `+` cannot be applied to string and integer values"
    );
    assert_eq!(
        errors("const string S = 5;"),
        "t.idl:1:18: value 5 is not of type `string`"
    );
    assert_eq!(
        errors("const long A = A + 1;"),
        "t.idl:1:16: constant `::A` is defined in terms of itself"
    );
    assert_eq!(
        errors("struct S { long x[0]; };"),
        "t.idl:1:19: array dimension must be a positive integer, found 0"
    );
    assert_eq!(
        errors("struct S { sequence<long, -1> x; };"),
        "t.idl:1:27: sequence bound must be a positive integer, found -1"
    );
    assert_eq!(
        errors("const long N = 2;\nstruct S { string<N - 2> s; };"),
        "t.idl:2:19: string bound must be a positive integer, found 0"
    );
}

#[test]
fn bad_annotation_parameters() {
    assert_eq!(
        errors("@extensibility(SOMETIMES) struct S { long x; };"),
        "t.idl:1:1: annotation `@extensibility`: expects FINAL, APPENDABLE or MUTABLE"
    );
    assert_eq!(
        errors("struct S { @id(\"x\") long x; };"),
        "t.idl:1:12: annotation `@id`: expects one integer"
    );
    assert_eq!(
        errors("struct S { @key(3) long x; };"),
        "t.idl:1:12: annotation `@key`: expects TRUE or FALSE"
    );
    assert_eq!(
        errors("@autoid(RANDOM) struct S { long x; };"),
        "t.idl:1:1: annotation `@autoid`: expects SEQUENTIAL or HASH"
    );
    assert_eq!(
        errors("@bit_bound(65) bitmask B { F };"),
        "t.idl:1:1: annotation `@bit_bound`: value is out of range"
    );
}

#[test]
fn nesting_depth_is_limited() {
    let deep = format!("{}{}", "module M { ".repeat(100), "};".repeat(100));
    assert_eq!(
        errors(&deep),
        "t.idl:1:705: declarations or expressions nest deeper than 64 levels"
    );
    let expr = format!("const long X = {}1{};", "(".repeat(200), ")".repeat(200));
    assert!(errors(&expr).contains("nest deeper than 64 levels"));
    let seq = format!(
        "typedef {}long{} T;",
        "sequence<".repeat(100),
        ">".repeat(100)
    );
    assert!(errors(&seq).contains("nest deeper than 64 levels"));
}

#[test]
fn several_errors_are_all_reported() {
    let text = errors("struct S { Missing a; Other b; };");
    assert_eq!(
        text,
        "t.idl:1:12: `Missing` is not declared in this scope or any enclosing one\n\
         t.idl:1:23: `Other` is not declared in this scope or any enclosing one"
    );
}
