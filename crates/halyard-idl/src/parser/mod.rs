//! The IDL grammar, on the preprocessed text (OMG IDL 4.2 §7.4, the building blocks DDS uses:
//! core data types, anonymous types, annotations, extended data types).
//!
//! # Design
//!
//! The parser is predictive recursive descent written with `winnow` primitives over a
//! [`Stateful`] `&str`: each definition and type starts with a keyword or a name, so the next
//! word decides the rule ([`next_word`]) and no rule needs to backtrack over more than one
//! token. Once a rule has seen its keyword it commits (`cut_err`), so an error is reported
//! where the text stops fitting, with what was expected there. The only backtracking is inside
//! constant expressions (`>>` may close two template lists) and annotation parameters, whose
//! raw text is always kept so that unknown annotations never fail.
//!
//! The state carries the source map (each node records its original location when it is
//! built), a nesting-depth counter (modules, types and expressions recurse, so hostile input
//! must not overflow the stack) and the first non-syntax error (a bad literal, too deep),
//! which is reported in place of winnow's context. Comments were removed by the
//! preprocessor, so whitespace is the only thing skipped between tokens.

mod decl;
mod expr;

use std::cell::{Cell, RefCell};

use winnow::combinator::{cut_err, fail};

use expr::const_expr_in_template;
use winnow::error::{ContextError, ErrMode, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::stream::Stateful;
use winnow::token::take_while;

use crate::ast::{Definition, Ident, ScopedName};
use crate::error::{Error, ErrorKind};
use crate::source::{Location, SourceMap};

/// Parser state shared by all rules.
#[derive(Debug)]
pub(crate) struct St<'a> {
    map: &'a SourceMap,
    text_len: usize,
    depth: Cell<usize>,
    depth_max: usize,
    /// Inside a template argument list, where `>>` closes two lists rather than shifting
    /// (unless parenthesized).
    in_template: Cell<bool>,
    fatal: RefCell<Option<(usize, ErrorKind)>>,
    /// The module path being parsed.
    scope: RefCell<Vec<String>>,
    /// Each module body seen: its path and its byte range in the text.
    extents: RefCell<Vec<ModuleExtent>>,
}

/// Where a module body lies in the preprocessed text (to give `#pragma` lines a scope).
#[derive(Clone, Debug)]
pub(crate) struct ModuleExtent {
    /// The module path, outermost first.
    pub path: Vec<String>,
    /// Byte offset of the `{`.
    pub start: usize,
    /// Byte offset of the `}`.
    pub end: usize,
}

/// The parser input: the rest of the preprocessed text and the shared state.
pub(crate) type Input<'a> = Stateful<&'a str, &'a St<'a>>;

type PResult<T> = ModalResult<T>;

/// Words that cannot be identifiers (IDL 4.2 §7.2.4, the keywords of the building blocks used).
const KEYWORDS: &[&str] = &[
    "any",
    "bitfield",
    "bitmask",
    "bitset",
    "boolean",
    "case",
    "char",
    "const",
    "default",
    "double",
    "enum",
    "exception",
    "FALSE",
    "fixed",
    "float",
    "int16",
    "int32",
    "int64",
    "int8",
    "interface",
    "long",
    "map",
    "module",
    "native",
    "octet",
    "sequence",
    "short",
    "string",
    "struct",
    "switch",
    "TRUE",
    "typedef",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "union",
    "unsigned",
    "valuetype",
    "wchar",
    "wstring",
];

/// Parses the whole preprocessed `text` into definitions.
pub(crate) fn parse(
    text: &str,
    map: &SourceMap,
    depth_max: usize,
) -> Result<(Vec<Definition>, Vec<ModuleExtent>), Error> {
    let st = St {
        map,
        text_len: text.len(),
        depth: Cell::new(0),
        depth_max,
        in_template: Cell::new(false),
        fatal: RefCell::new(None),
        scope: RefCell::new(Vec::new()),
        extents: RefCell::new(Vec::new()),
    };
    let mut input = Input {
        input: text,
        state: &st,
    };
    match specification(&mut input) {
        Ok(defs) => Ok((defs, st.extents.take())),
        Err(e) => {
            if let Some((offset, kind)) = st.fatal.take() {
                return Err(Error::new(map.locate(offset), kind));
            }
            let offset = text.len() - input.input.len();
            let err = match e {
                ErrMode::Backtrack(e) | ErrMode::Cut(e) => e,
                ErrMode::Incomplete(_) => ContextError::new(),
            };
            Err(Error::new(
                map.locate(offset),
                syntax_error(&err, input.input),
            ))
        }
    }
}

fn specification(i: &mut Input<'_>) -> PResult<Vec<Definition>> {
    ws(i)?;
    let mut defs = Vec::new();
    while !i.input.is_empty() {
        defs.extend(decl::definition(i)?);
    }
    Ok(defs)
}

/// Builds the message of a syntax error from winnow's context and the text at the error.
fn syntax_error(err: &ContextError, rest: &str) -> ErrorKind {
    let mut expected: Vec<String> = Vec::new();
    for ctx in err.context() {
        let text = match ctx {
            StrContext::Expected(StrContextValue::StringLiteral(s)) => format!("`{s}`"),
            StrContext::Expected(StrContextValue::CharLiteral(c)) => format!("`{c}`"),
            StrContext::Expected(StrContextValue::Description(d)) => d.to_string(),
            _ => continue,
        };
        if !expected.contains(&text) {
            expected.push(text);
        }
    }
    let expected = if expected.is_empty() {
        "valid IDL".to_string()
    } else {
        expected.join(" or ")
    };
    ErrorKind::Syntax {
        expected,
        found: describe_next(rest),
    }
}

/// Describes the token at the start of `rest` for an error message.
fn describe_next(rest: &str) -> String {
    let rest = rest.trim_start();
    let Some(first) = rest.chars().next() else {
        return "end of input".to_string();
    };
    let word_len = rest
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(rest.len());
    if word_len > 0 {
        format!("`{}`", &rest[..word_len.min(40)])
    } else {
        format!("`{first}`")
    }
}

/// The byte offset of the input in the preprocessed text.
fn offset(i: &Input<'_>) -> usize {
    i.state.text_len - i.input.len()
}

/// The original location of the input position.
fn here(i: &Input<'_>) -> Location {
    i.state.map.locate(offset(i))
}

/// Records a non-syntax error and stops parsing.
fn fatal<T>(i: &Input<'_>, at: usize, kind: ErrorKind) -> PResult<T> {
    i.state.fatal.borrow_mut().get_or_insert((at, kind));
    Err(ErrMode::Cut(ContextError::new()))
}

/// Runs `f` one nesting level deeper, failing past the depth limit.
fn nested<'a, T>(i: &mut Input<'a>, f: impl FnOnce(&mut Input<'a>) -> PResult<T>) -> PResult<T> {
    let depth = i.state.depth.get() + 1;
    if depth > i.state.depth_max {
        return fatal(
            i,
            offset(i),
            ErrorKind::NestingTooDeep {
                limit: i.state.depth_max,
            },
        );
    }
    i.state.depth.set(depth);
    let r = f(i);
    i.state.depth.set(depth - 1);
    r
}

/// A committed failure saying what was expected here.
fn expected<T>(i: &mut Input<'_>, what: &'static str) -> PResult<T> {
    cut_err(fail::<_, T, _>)
        .context(StrContext::Expected(StrContextValue::Description(what)))
        .parse_next(i)
}

/// Skips whitespace.
fn ws(i: &mut Input<'_>) -> PResult<()> {
    take_while(0.., char::is_whitespace).void().parse_next(i)
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier-like word at the input, without consuming it ("" if none).
fn next_word<'a>(i: &Input<'a>) -> &'a str {
    let s: &'a str = i.input;
    if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return "";
    }
    &s[..s.find(|c| !is_word_char(c)).unwrap_or(s.len())]
}

/// Whether the input starts with punctuation `s`.
fn at(i: &Input<'_>, s: &str) -> bool {
    i.input.starts_with(s)
}

/// Consumes `n` bytes and the whitespace after them.
fn advance(i: &mut Input<'_>, n: usize) -> PResult<()> {
    winnow::token::take(n).void().parse_next(i)?;
    ws(i)
}

/// Consumes punctuation `s` (backtracking if absent).
fn sym(i: &mut Input<'_>, s: &'static str) -> PResult<()> {
    if at(i, s) {
        return advance(i, s.len());
    }
    fail.context(StrContext::Expected(StrContextValue::StringLiteral(s)))
        .parse_next(i)
}

/// Consumes punctuation `s`, committed: its absence is the error.
fn expect_sym(i: &mut Input<'_>, s: &'static str) -> PResult<()> {
    cut_err(|i: &mut Input<'_>| sym(i, s)).parse_next(i)
}

/// Consumes keyword `k` (backtracking if absent).
fn kw(i: &mut Input<'_>, k: &'static str) -> PResult<()> {
    if next_word(i) == k {
        return advance(i, k.len());
    }
    fail.context(StrContext::Expected(StrContextValue::StringLiteral(k)))
        .parse_next(i)
}

/// Parses an identifier (not a keyword); a leading `_` escapes a keyword (IDL 4.2 §7.2.3.1).
fn ident(i: &mut Input<'_>) -> PResult<Ident> {
    let location = here(i);
    let word = next_word(i);
    if word.is_empty() || KEYWORDS.contains(&word) {
        return fail
            .context(StrContext::Expected(StrContextValue::Description(
                "an identifier",
            )))
            .parse_next(i);
    }
    advance(i, word.len())?;
    let name = word.strip_prefix('_').unwrap_or(word).to_string();
    Ok(Ident { name, location })
}

/// Parses a scoped name `A`, `A::B` or `::A::B`.
fn scoped_name(i: &mut Input<'_>) -> PResult<ScopedName> {
    let location = here(i);
    let absolute = at(i, "::");
    if absolute {
        advance(i, 2)?;
    }
    let mut parts = vec![ident(i)?.name];
    while at(i, "::") {
        advance(i, 2)?;
        parts.push(cut_err(ident).parse_next(i)?.name);
    }
    Ok(ScopedName {
        absolute,
        parts,
        location,
        resolved: None,
    })
}
