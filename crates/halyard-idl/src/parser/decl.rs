//! Definitions, members, types and annotations.

use winnow::combinator::cut_err;
use winnow::prelude::*;

use super::expr::const_expr;
use super::{
    advance, at, expect_sym, expected, here, ident, kw, nested, next_word, offset, scoped_name,
    sym, Input, PResult,
};
use crate::ast::*;
use crate::source::Location;

/// Parses one definition with its annotations and `;`. Most give one definition; an
/// `@annotation` declaration gives none; a typedef of an inline struct, union or enum
/// definition gives that definition and then the typedef.
pub(super) fn definition(i: &mut Input<'_>) -> PResult<Vec<Definition>> {
    let location = here(i);
    let annotations = annotations(i)?;
    if name_is_annotation_decl(&annotations) {
        // `@annotation name { ... };` declares an annotation type: nothing to keep.
        cut_err(ident).parse_next(i)?;
        skip_body(i)?;
        expect_sym(i, ";")?;
        return Ok(Vec::new());
    }
    if next_word(i) == "typedef" {
        let defs = typedef_dcl(i, annotations, location)?;
        expect_sym(i, ";")?;
        return Ok(defs);
    }
    let def = match next_word(i) {
        "module" => Definition::Module(nested(i, |i| module(i, annotations, location))?),
        "struct" => struct_dcl(i, annotations, location)?,
        "union" => union_dcl(i, annotations, location)?,
        "enum" => Definition::Enum(enum_dcl(i, annotations, location)?),
        "bitmask" => Definition::Bitmask(bitmask_dcl(i, annotations, location)?),
        "bitset" => Definition::Bitset(bitset_dcl(i, annotations, location)?),
        "const" => Definition::Const(const_dcl(i, annotations, location)?),
        "interface" | "valuetype" | "exception" | "native" | "abstract" | "local" | "custom" => {
            Definition::Unsupported(unsupported_dcl(i, location)?)
        }
        _ => {
            return expected(
                i,
                "a definition (`module`, `struct`, `union`, `enum`, `bitmask`, `bitset`, `typedef` or `const`)",
            )
        }
    };
    expect_sym(i, ";")?;
    Ok(vec![def])
}

fn module(i: &mut Input<'_>, annotations: Vec<Annotation>, location: Location) -> PResult<Module> {
    kw(i, "module")?;
    let name = cut_err(ident).parse_next(i)?;
    let start = offset(i);
    expect_sym(i, "{")?;
    i.state.scope.borrow_mut().push(name.name.clone());
    let mut definitions = Vec::new();
    while !at(i, "}") {
        if i.input.is_empty() {
            return expected(i, "`}` closing the module");
        }
        definitions.extend(definition(i)?);
    }
    let path = i.state.scope.borrow().clone();
    i.state.extents.borrow_mut().push(super::ModuleExtent {
        path,
        start,
        end: offset(i),
    });
    i.state.scope.borrow_mut().pop();
    expect_sym(i, "}")?;
    Ok(Module {
        annotations,
        name,
        definitions,
        location,
    })
}

fn struct_dcl(
    i: &mut Input<'_>,
    annotations: Vec<Annotation>,
    location: Location,
) -> PResult<Definition> {
    kw(i, "struct")?;
    let name = cut_err(ident).parse_next(i)?;
    if at(i, ";") {
        return Ok(Definition::Forward(ForwardDecl {
            union: false,
            name,
            location,
        }));
    }
    let base = if at(i, ":") {
        advance(i, 1)?;
        Some(cut_err(scoped_name).parse_next(i)?)
    } else {
        None
    };
    expect_sym(i, "{")?;
    let mut members = Vec::new();
    while !at(i, "}") {
        members.extend(member(i)?);
    }
    expect_sym(i, "}")?;
    let typed = TypeAnnotations::default();
    Ok(Definition::Struct(StructDef {
        annotations,
        name,
        base,
        members,
        typed,
        location,
    }))
}

/// `annotations type declarator, declarator;` as one member per declarator.
fn member(i: &mut Input<'_>) -> PResult<Vec<Member>> {
    let annotations = annotations(i)?;
    let type_spec = type_spec(i)?;
    let mut members = Vec::new();
    loop {
        let d = declarator(i)?;
        let typed = MemberAnnotations::default();
        let (annotations, type_spec) = (annotations.clone(), type_spec.clone());
        members.push(Member {
            annotations,
            type_spec,
            name: d.name,
            array: d.array,
            typed,
        });
        if !at(i, ",") {
            break;
        }
        advance(i, 1)?;
    }
    expect_sym(i, ";")?;
    Ok(members)
}

fn declarator(i: &mut Input<'_>) -> PResult<Declarator> {
    let name = cut_err(ident).parse_next(i)?;
    let mut array = Vec::new();
    while at(i, "[") {
        advance(i, 1)?;
        array.push(cut_err(const_expr).parse_next(i)?);
        expect_sym(i, "]")?;
    }
    Ok(Declarator { name, array })
}

fn union_dcl(
    i: &mut Input<'_>,
    annotations: Vec<Annotation>,
    location: Location,
) -> PResult<Definition> {
    kw(i, "union")?;
    let name = cut_err(ident).parse_next(i)?;
    if at(i, ";") {
        return Ok(Definition::Forward(ForwardDecl {
            union: true,
            name,
            location,
        }));
    }
    cut_err(|i: &mut Input<'_>| kw(i, "switch")).parse_next(i)?;
    expect_sym(i, "(")?;
    let discriminator_annotations = annotations_list(i)?;
    let discriminator = type_spec(i)?;
    expect_sym(i, ")")?;
    expect_sym(i, "{")?;
    let mut cases = Vec::new();
    while !at(i, "}") {
        cases.push(union_case(i)?);
    }
    if cases.is_empty() {
        return expected(i, "`case` or `default`");
    }
    expect_sym(i, "}")?;
    let typed = TypeAnnotations::default();
    let def = UnionDef {
        annotations,
        name,
        discriminator_annotations,
        discriminator,
        cases,
        typed,
        location,
    };
    Ok(Definition::Union(def))
}

fn union_case(i: &mut Input<'_>) -> PResult<UnionCase> {
    let mut member_annotations = annotations(i)?;
    let mut labels = Vec::new();
    loop {
        let location = here(i);
        match next_word(i) {
            "case" => {
                advance(i, 4)?;
                labels.push(CaseLabel::Value(cut_err(const_expr).parse_next(i)?));
            }
            "default" => {
                advance(i, 7)?;
                labels.push(CaseLabel::Default(location));
            }
            _ if labels.is_empty() => return expected(i, "`case` or `default`"),
            _ => break,
        }
        expect_sym(i, ":")?;
    }
    member_annotations.extend(annotations(i)?);
    let type_spec = type_spec(i)?;
    let d = declarator(i)?;
    expect_sym(i, ";")?;
    let typed = MemberAnnotations::default();
    let member = Member {
        annotations: member_annotations,
        type_spec,
        name: d.name,
        array: d.array,
        typed,
    };
    Ok(UnionCase { labels, member })
}

/// `{ item, item, ... }` of an enum or bitmask (a trailing comma is accepted).
fn named_list(i: &mut Input<'_>) -> PResult<Vec<(Vec<Annotation>, Ident)>> {
    expect_sym(i, "{")?;
    let mut items = Vec::new();
    loop {
        let mut annotations = annotations(i)?;
        let name = cut_err(ident).parse_next(i)?;
        annotations.extend(annotations_list(i)?);
        items.push((annotations, name));
        if !at(i, ",") {
            break;
        }
        advance(i, 1)?;
        if at(i, "}") {
            break;
        }
    }
    expect_sym(i, "}")?;
    Ok(items)
}

fn enum_dcl(
    i: &mut Input<'_>,
    annotations: Vec<Annotation>,
    location: Location,
) -> PResult<EnumDef> {
    kw(i, "enum")?;
    let name = cut_err(ident).parse_next(i)?;
    let enumerators = named_list(i)?
        .into_iter()
        .map(|(annotations, name)| Enumerator {
            annotations,
            name,
            value: 0,
            default_literal: false,
        })
        .collect();
    Ok(EnumDef {
        annotations,
        name,
        enumerators,
        typed: TypeAnnotations::default(),
        location,
    })
}

fn bitmask_dcl(
    i: &mut Input<'_>,
    annotations: Vec<Annotation>,
    location: Location,
) -> PResult<BitmaskDef> {
    kw(i, "bitmask")?;
    let name = cut_err(ident).parse_next(i)?;
    let flags = named_list(i)?
        .into_iter()
        .map(|(annotations, name)| BitFlag {
            annotations,
            name,
            position: 0,
        })
        .collect();
    Ok(BitmaskDef {
        annotations,
        name,
        flags,
        typed: TypeAnnotations::default(),
        location,
    })
}

fn bitset_dcl(
    i: &mut Input<'_>,
    annotations: Vec<Annotation>,
    location: Location,
) -> PResult<BitsetDef> {
    kw(i, "bitset")?;
    let name = cut_err(ident).parse_next(i)?;
    let base = if at(i, ":") {
        advance(i, 1)?;
        Some(cut_err(scoped_name).parse_next(i)?)
    } else {
        None
    };
    expect_sym(i, "{")?;
    let mut fields = Vec::new();
    while !at(i, "}") {
        annotations_list(i)?;
        cut_err(|i: &mut Input<'_>| kw(i, "bitfield")).parse_next(i)?;
        expect_sym(i, "<")?;
        let width = cut_err(super::const_expr_in_template).parse_next(i)?;
        let type_spec = if at(i, ",") {
            advance(i, 1)?;
            Some(type_spec(i)?)
        } else {
            None
        };
        expect_sym(i, ">")?;
        let mut names = Vec::new();
        while !at(i, ";") {
            names.push(cut_err(ident).parse_next(i)?);
            if !at(i, ",") {
                break;
            }
            advance(i, 1)?;
        }
        expect_sym(i, ";")?;
        fields.push(BitField {
            width,
            type_spec,
            names,
        });
    }
    expect_sym(i, "}")?;
    Ok(BitsetDef {
        annotations,
        name,
        base,
        fields,
        location,
    })
}

/// `typedef type declarators`, where the type may be an inline `struct`, `union`, `enum`,
/// `bitmask` or `bitset` definition (as Cyclone DDS accepts): that definition comes first
/// in the result, then the typedef naming it.
fn typedef_dcl(
    i: &mut Input<'_>,
    mut annotations: Vec<Annotation>,
    location: Location,
) -> PResult<Vec<Definition>> {
    kw(i, "typedef")?;
    annotations.extend(annotations_list(i)?);
    let mut defs = Vec::new();
    let type_location = here(i);
    let inline = match next_word(i) {
        "struct" => Some(struct_dcl(i, Vec::new(), type_location.clone())?),
        "union" => Some(union_dcl(i, Vec::new(), type_location.clone())?),
        "enum" => Some(Definition::Enum(enum_dcl(
            i,
            Vec::new(),
            type_location.clone(),
        )?)),
        "bitmask" => Some(Definition::Bitmask(bitmask_dcl(
            i,
            Vec::new(),
            type_location.clone(),
        )?)),
        "bitset" => Some(Definition::Bitset(bitset_dcl(
            i,
            Vec::new(),
            type_location.clone(),
        )?)),
        _ => None,
    };
    let type_spec = match inline {
        Some(def) => {
            let name = defined_name(&def).to_string();
            defs.push(def);
            TypeSpec::Named(ScopedName {
                absolute: false,
                parts: vec![name],
                location: type_location,
                resolved: None,
            })
        }
        None => type_spec(i)?,
    };
    let mut declarators = vec![declarator(i)?];
    while at(i, ",") {
        advance(i, 1)?;
        declarators.push(declarator(i)?);
    }
    defs.push(Definition::Typedef(Typedef {
        annotations,
        type_spec,
        declarators,
        location,
    }));
    Ok(defs)
}

/// The name declared by a constructed-type definition.
fn defined_name(def: &Definition) -> &str {
    match def {
        Definition::Struct(s) => &s.name.name,
        Definition::Union(u) => &u.name.name,
        Definition::Enum(e) => &e.name.name,
        Definition::Bitmask(b) => &b.name.name,
        Definition::Bitset(b) => &b.name.name,
        Definition::Forward(f) => &f.name.name,
        _ => "",
    }
}

fn const_dcl(
    i: &mut Input<'_>,
    annotations: Vec<Annotation>,
    location: Location,
) -> PResult<ConstDef> {
    kw(i, "const")?;
    let type_spec = type_spec(i)?;
    let name = cut_err(ident).parse_next(i)?;
    expect_sym(i, "=")?;
    let value = cut_err(const_expr).parse_next(i)?;
    Ok(ConstDef {
        annotations,
        type_spec,
        name,
        value,
        location,
    })
}

/// Skips an `interface`, `valuetype`, `exception` or `native` declaration, keeping its name.
fn unsupported_dcl(i: &mut Input<'_>, location: Location) -> PResult<UnsupportedDecl> {
    while matches!(next_word(i), "abstract" | "local" | "custom") {
        let n = next_word(i).len();
        advance(i, n)?;
    }
    let kind = match next_word(i) {
        "interface" => UnsupportedKind::Interface,
        "valuetype" => UnsupportedKind::ValueType,
        "exception" => UnsupportedKind::Exception,
        "native" => UnsupportedKind::Native,
        _ => return expected(i, "`interface` or `valuetype`"),
    };
    let n = next_word(i).len();
    advance(i, n)?;
    let name = cut_err(ident).parse_next(i)?;
    // Anything up to the body or the end of the declaration (bases, `supports` ...).
    let rest: &str = i.input;
    let skip = rest.find(['{', ';']).unwrap_or(rest.len());
    advance(i, skip)?;
    if at(i, "{") {
        skip_body(i)?;
    }
    Ok(UnsupportedDecl {
        kind,
        name,
        location,
    })
}

/// Skips a `{ ... }` block with balanced braces, string and char literals respected.
fn skip_body(i: &mut Input<'_>) -> PResult<()> {
    let rest: &str = i.input;
    if !rest.starts_with('{') {
        return expected(i, "`{`");
    }
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (idx, c) in rest.char_indices() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                c if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return advance(i, idx + 1);
                }
            }
            _ => {}
        }
    }
    advance(i, rest.len())?;
    expected(i, "`}` closing the block")
}

/// Parses a type specification (IDL 4.2 §7.4.1.4.4).
pub(super) fn type_spec(i: &mut Input<'_>) -> PResult<TypeSpec> {
    nested(i, type_spec_inner)
}

fn type_spec_inner(i: &mut Input<'_>) -> PResult<TypeSpec> {
    let location = here(i);
    if let Some(basic) = basic_type(i)? {
        return Ok(TypeSpec::Basic(basic, location));
    }
    let word = next_word(i);
    match word {
        "string" | "wstring" => {
            advance(i, word.len())?;
            let bound = if at(i, "<") {
                Some(Box::new(bound(i, ">")?))
            } else {
                None
            };
            Ok(TypeSpec::String {
                wide: word == "wstring",
                bound,
                location,
            })
        }
        "sequence" => sequence_type(i, location),
        "map" => map_type(i, location),
        "fixed" => {
            advance(i, word.len())?;
            expect_sym(i, "<")?;
            let digits = Box::new(cut_err(super::const_expr_in_template).parse_next(i)?);
            let scale = Box::new(bound(i, ">")?);
            Ok(TypeSpec::Fixed {
                digits,
                scale,
                location,
            })
        }
        _ if at(i, "::") || (!word.is_empty() && !super::KEYWORDS.contains(&word)) => {
            Ok(TypeSpec::Named(scoped_name(i)?))
        }
        _ => expected(i, "a type"),
    }
}

/// `sequence<T>` or `sequence<T, N>`.
fn sequence_type(i: &mut Input<'_>, location: Location) -> PResult<TypeSpec> {
    advance(i, "sequence".len())?;
    expect_sym(i, "<")?;
    let element_annotations = annotations_list(i)?;
    let element = Box::new(type_spec(i)?);
    let bound = if at(i, ",") {
        Some(Box::new(bound(i, ">")?))
    } else {
        None
    };
    if bound.is_none() {
        expect_sym(i, ">")?;
    }
    Ok(TypeSpec::Sequence {
        element_annotations,
        element,
        bound,
        location,
    })
}

/// `map<K, V>` or `map<K, V, N>`.
fn map_type(i: &mut Input<'_>, location: Location) -> PResult<TypeSpec> {
    advance(i, "map".len())?;
    expect_sym(i, "<")?;
    let key = Box::new(type_spec(i)?);
    expect_sym(i, ",")?;
    let value = Box::new(type_spec(i)?);
    let bound = if at(i, ",") {
        Some(Box::new(bound(i, ">")?))
    } else {
        None
    };
    if bound.is_none() {
        expect_sym(i, ">")?;
    }
    Ok(TypeSpec::Map {
        key,
        value,
        bound,
        location,
    })
}

/// `<expr>` or `, expr>`: skips the opening `<` or `,`, parses the expression and `close`.
fn bound(i: &mut Input<'_>, close: &'static str) -> PResult<ConstExpr> {
    advance(i, 1)?;
    let e = cut_err(super::const_expr_in_template).parse_next(i)?;
    expect_sym(i, close)?;
    Ok(e)
}

/// A basic type if one starts here.
fn basic_type(i: &mut Input<'_>) -> PResult<Option<BasicType>> {
    let one = |w: &str| {
        Some(match w {
            "short" | "int16" => BasicType::Short,
            "int32" => BasicType::Long,
            "int64" => BasicType::LongLong,
            "uint16" => BasicType::UShort,
            "uint32" => BasicType::ULong,
            "uint64" => BasicType::ULongLong,
            "int8" => BasicType::Int8,
            "uint8" => BasicType::UInt8,
            "float" => BasicType::Float,
            "double" => BasicType::Double,
            "char" => BasicType::Char,
            "wchar" => BasicType::WChar,
            "boolean" => BasicType::Boolean,
            "octet" => BasicType::Octet,
            _ => return None,
        })
    };
    let word = next_word(i);
    if let Some(t) = one(word) {
        advance(i, word.len())?;
        return Ok(Some(t));
    }
    match word {
        "long" => {
            advance(i, 4)?;
            Ok(Some(match next_word(i) {
                "long" => advance(i, 4).map(|_| BasicType::LongLong)?,
                "double" => advance(i, 6).map(|_| BasicType::LongDouble)?,
                _ => BasicType::Long,
            }))
        }
        "unsigned" => {
            advance(i, 8)?;
            match next_word(i) {
                "short" => advance(i, 5).map(|_| Some(BasicType::UShort)),
                "long" => {
                    advance(i, 4)?;
                    if next_word(i) == "long" {
                        advance(i, 4)?;
                        return Ok(Some(BasicType::ULongLong));
                    }
                    Ok(Some(BasicType::ULong))
                }
                _ => expected(i, "`short` or `long` after `unsigned`"),
            }
        }
        _ => Ok(None),
    }
}

/// Annotations before a definition or member.
fn annotations(i: &mut Input<'_>) -> PResult<Vec<Annotation>> {
    annotations_list(i)
}

/// Zero or more annotation applications `@name` / `@name(params)` (IDL 4.2 §7.4.15.4.2).
fn annotations_list(i: &mut Input<'_>) -> PResult<Vec<Annotation>> {
    let mut list = Vec::new();
    while at(i, "@") {
        let location = here(i);
        advance(i, 1)?;
        let name = cut_err(annotation_name).parse_next(i)?;
        let (params, raw) = if at(i, "(") {
            annotation_params(i)?
        } else {
            (AnnotationParams::None, String::new())
        };
        list.push(Annotation {
            name,
            params,
            raw,
            location,
        });
        if name_is_annotation_decl(&list) {
            break;
        }
    }
    Ok(list)
}

/// `@annotation` is followed by a declaration, not by more annotations.
fn name_is_annotation_decl(list: &[Annotation]) -> bool {
    list.last()
        .is_some_and(|a| a.name == "annotation" && a.raw.is_empty())
}

/// An annotation name: a scoped name whose last part is kept; keywords are allowed
/// (`@default`).
fn annotation_name(i: &mut Input<'_>) -> PResult<String> {
    loop {
        if at(i, "::") {
            advance(i, 2)?;
        }
        let word = next_word(i);
        if word.is_empty() {
            return expected(i, "an annotation name");
        }
        advance(i, word.len())?;
        if !at(i, "::") {
            return Ok(word.to_string());
        }
    }
}

/// `( ... )` after an annotation name: the raw text always, and the parsed parameters if
/// they parse (else [`AnnotationParams::None`] with the raw text kept).
fn annotation_params(i: &mut Input<'_>) -> PResult<(AnnotationParams, String)> {
    let rest: &str = i.input;
    let Some(close) = matching_paren(rest) else {
        return expected(i, "`)` closing the annotation parameters");
    };
    let raw = rest[1..close].trim().to_string();
    let end = offset(i) + close + 1;
    advance(i, 1)?;
    let checkpoint = i.input;
    let parsed = params_inner(i)
        .ok()
        .filter(|_| offset(i) == end - 1 && at(i, ")"));
    // A literal error inside parameters that do not parse is not an error: the raw text stays.
    i.state.fatal.borrow_mut().take_if(|(at, _)| *at < end);
    if parsed.is_none() {
        i.input = checkpoint;
        let skip = end - 1 - offset(i);
        winnow::token::take(skip).void().parse_next(i)?;
    }
    expect_sym(i, ")")?;
    Ok((parsed.unwrap_or(AnnotationParams::None), raw))
}

fn params_inner(i: &mut Input<'_>) -> PResult<AnnotationParams> {
    if at(i, ")") {
        return Ok(AnnotationParams::None);
    }
    let word = next_word(i);
    let after = i.input[word.len()..].trim_start();
    if !word.is_empty() && after.starts_with('=') && !after.starts_with("==") {
        let mut named = Vec::new();
        loop {
            let name = ident(i)?;
            sym(i, "=")?;
            named.push((name, const_expr(i)?));
            if !at(i, ",") {
                return Ok(AnnotationParams::Named(named));
            }
            advance(i, 1)?;
        }
    }
    Ok(AnnotationParams::Single(const_expr(i)?))
}

/// The byte index of the `)` matching the `(` at the start of `s`.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (idx, c) in s.char_indices() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                c if c == q => quote = None,
                '\n' => return None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(idx);
                }
            }
            _ => {}
        }
    }
    None
}
