//! The DDS SQL filter grammar (DDS 1.4 Annex B) for content-filtered topics and query
//! conditions: comparisons (`=`, `<>`, `!=`, `<`, `<=`, `>`, `>=`, `LIKE`), `BETWEEN` and
//! `NOT BETWEEN`, `AND`, `OR`, `NOT`, parentheses, member paths (`pos.x`, `points[2].y`),
//! integer, float, string, boolean and enumerator literals, and `%n` parameters.
//!
//! Design. An expression is parsed once against the type ([`Reflect::field_kind`]): every
//! member path must name a comparable member, so a bad expression fails when the filter is
//! created, with the position and text of the offending token. Parameters are kept as text
//! and parsed when set ([`Filter::set_parameters`]); a missing parameter is an error then.
//! Evaluation walks the tree over the sample's members ([`Reflect::field`]); a comparison
//! whose member is absent (an index past the end, an unset optional member) or whose operands
//! cannot be compared is false. Keywords are case-insensitive.
//!
//! A content filter is a Condition only (Annex B `FilterExpression`, [`Filter::new`]): `ORDER
//! BY` in one is refused, pointing at `ORDER`. A query condition's expression (Annex B
//! `QueryExpression ::= { Condition }{ 'ORDER BY' (FIELDNAME // ',') }`, [`Filter::new_query`])
//! may add `ORDER BY` and member paths, or be `ORDER BY ...` alone (it then selects every
//! sample): what a read or take through the condition returns is sorted by those members,
//! ascending (the grammar has no `ASC` or `DESC`), the first member first; samples equal in
//! all of them keep the reader's order. Numbers and enumerators (by value) sort numerically,
//! strings and characters lexicographically, FALSE before TRUE; a member a sample lacks sorts
//! last. Such a query selects data samples only (see `filter/order.rs`).

mod order;

pub(crate) use order::SampleQuery;

use crate::runtime::Shared;
use halyard_cdr::{FieldKind, FieldValue, PathSegment, Reflect};
use halyard_wire::discovery::{ContentFilterProperty, DDSSQL};
use halyard_wire::EntityId;
use std::cmp::Ordering;
use std::fmt;

/// A filter expression that does not parse or does not fit the type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError {
    /// Byte offset of the offending token in the expression (its length for "unexpected end").
    pub position: usize,
    /// The offending token (empty at the end of the expression).
    pub token: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.token.is_empty() {
            write!(f, "at offset {}: {}", self.position, self.message)
        } else {
            write!(
                f,
                "at offset {}, `{}`: {}",
                self.position, self.token, self.message
            )
        }
    }
}

impl std::error::Error for FilterError {}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int(i128),
    Float(f64),
    Str(String),
    Param(usize),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    pos: usize,
    text: String,
}

fn err(pos: usize, token: &str, message: impl Into<String>) -> FilterError {
    FilterError {
        position: pos,
        token: token.to_string(),
        message: message.into(),
    }
}

fn lex(src: &str) -> Result<Vec<Token>, FilterError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let tok = match c {
            b'(' => {
                i += 1;
                Tok::LParen
            }
            b')' => {
                i += 1;
                Tok::RParen
            }
            b',' => {
                i += 1;
                Tok::Comma
            }
            b'=' => {
                i += 1;
                Tok::Op("=")
            }
            b'<' | b'>' | b'!' => {
                let two = b.get(i + 1).copied();
                let (op, n) = match (c, two) {
                    (b'<', Some(b'=')) => ("<=", 2),
                    (b'<', Some(b'>')) => ("<>", 2),
                    (b'>', Some(b'=')) => (">=", 2),
                    (b'!', Some(b'=')) => ("<>", 2),
                    (b'<', _) => ("<", 1),
                    (b'>', _) => (">", 1),
                    _ => return Err(err(i, "!", "expected `!=`")),
                };
                i += n;
                Tok::Op(op)
            }
            b'\'' | b'"' | b'`' => {
                // A string, up to the matching quote (a `’`-style backquote opens one too).
                let close = if c == b'`' { b'\'' } else { c };
                let end = b[i + 1..]
                    .iter()
                    .position(|&x| x == close)
                    .ok_or_else(|| err(i, &src[i..], "unterminated string"))?;
                let s = src[i + 1..i + 1 + end].to_string();
                i += end + 2;
                Tok::Str(s)
            }
            b'%' => {
                let digits = b[i + 1..].iter().take_while(|x| x.is_ascii_digit()).count();
                if digits == 0 {
                    return Err(err(i, "%", "a parameter is `%` followed by its number"));
                }
                let n: usize = src[i + 1..i + 1 + digits]
                    .parse()
                    .map_err(|_| err(i, &src[i..i + 1 + digits], "parameter number too large"))?;
                if n > 99 {
                    return Err(err(i, &src[i..i + 1 + digits], "parameters are %0 to %99"));
                }
                i += 1 + digits;
                Tok::Param(n)
            }
            b'0'..=b'9' | b'-' | b'+' | b'.' => {
                let (tok, n) = number(&src[i..])
                    .ok_or_else(|| err(i, &src[i..(i + 1).min(src.len())], "not a number"))?;
                i += n;
                tok
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                // A name: letters, digits, `_`, member dots, `::` scopes and `[n]` indices.
                while i < b.len() {
                    let x = b[i];
                    if x.is_ascii_alphanumeric() || x == b'_' || x == b'.' || x == b'[' || x == b']'
                    {
                        i += 1;
                    } else if x == b':' && b.get(i + 1) == Some(&b':') {
                        i += 2;
                    } else {
                        break;
                    }
                }
                Tok::Ident(src[start..i].to_string())
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(err(i, &ch.to_string(), "unexpected character"));
            }
        };
        out.push(Token {
            tok,
            pos: start,
            text: src[start..i].to_string(),
        });
    }
    Ok(out)
}

/// A number at the start of `s`: its token and length.
fn number(s: &str) -> Option<(Tok, usize)> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    if b[i..].starts_with(b"0x") || b[i..].starts_with(b"0X") {
        let digits = b[i + 2..]
            .iter()
            .take_while(|x| x.is_ascii_hexdigit())
            .count();
        let v = i128::from_str_radix(&s[i + 2..i + 2 + digits], 16).ok()?;
        let v = if b[0] == b'-' { -v } else { v };
        return Some((Tok::Int(v), i + 2 + digits));
    }
    let int_digits = b[i..].iter().take_while(|x| x.is_ascii_digit()).count();
    i += int_digits;
    let mut float = false;
    if b.get(i) == Some(&b'.') {
        float = true;
        i += 1;
        i += b[i..].iter().take_while(|x| x.is_ascii_digit()).count();
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        float = true;
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let exp = b[i..].iter().take_while(|x| x.is_ascii_digit()).count();
        if exp == 0 {
            return None;
        }
        i += exp;
    }
    if int_digits == 0 && !float {
        return None;
    }
    let text = &s[..i];
    if float {
        Some((Tok::Float(text.parse().ok()?), i))
    } else {
        Some((Tok::Int(text.parse().ok()?), i))
    }
}

/// A literal operand, or a parameter's value once parsed.
#[derive(Clone, Debug, PartialEq)]
enum Lit {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    /// A bare name that is not a member: an enumerator.
    Name(String),
}

#[derive(Clone, Debug)]
struct Field {
    path: Vec<PathSegment>,
    kind: FieldKind,
}

#[derive(Clone, Debug)]
enum Operand {
    Field(Field),
    Lit(Lit),
    Param(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Like,
}

#[derive(Clone, Debug)]
enum Node {
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Cmp(Operand, Op, Operand),
    Between {
        field: Field,
        lo: Operand,
        hi: Operand,
        negated: bool,
    },
}

/// One member of an `ORDER BY`.
#[derive(Clone, Debug)]
struct OrderKey {
    /// The member path as written.
    member: String,
    path: Vec<PathSegment>,
}

/// Which part of Annex B an expression follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grammar {
    /// `FilterExpression ::= Condition` (content-filtered topics).
    Filter,
    /// `QueryExpression ::= { Condition }{ 'ORDER BY' (FIELDNAME // ',') }` (query
    /// conditions).
    Query,
}

/// A parsed filter or query, bound to a type's members.
#[derive(Clone, Debug)]
pub struct Filter {
    expression: String,
    /// The condition; `None` for a query that is only `ORDER BY` (it accepts every sample).
    root: Option<Node>,
    /// The `ORDER BY` members, first first (empty: no ORDER BY).
    order_by: Vec<OrderKey>,
    /// The highest parameter number used, if any.
    max_param: Option<usize>,
    params: Vec<Lit>,
    /// The parameters as given.
    param_text: Vec<String>,
}

/// Splits `a.b[2].c` into member and index segments.
fn path_of(name: &str, pos: usize) -> Result<Vec<PathSegment>, FilterError> {
    let mut out = Vec::new();
    for part in name.split('.') {
        let (member, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if member.is_empty() {
            return Err(err(pos, name, "malformed member name"));
        }
        out.push(PathSegment::Member(member.to_string()));
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .filter(|_| rest.starts_with('['))
                .ok_or_else(|| err(pos, name, "malformed index"))?;
            let n: usize = rest[1..close]
                .parse()
                .map_err(|_| err(pos, name, "an index is a non-negative integer"))?;
            out.push(PathSegment::Index(n));
            rest = &rest[close + 1..];
        }
    }
    Ok(out)
}

struct Parser<'a, T> {
    toks: Vec<Token>,
    at: usize,
    src: &'a str,
    max_param: Option<usize>,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T: Reflect> Parser<'_, T> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at)
    }

    fn keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Ident(s), .. }) if s.eq_ignore_ascii_case(kw))
    }

    fn end_error(&self, what: &str) -> FilterError {
        match self.peek() {
            Some(t) => err(t.pos, &t.text, what.to_string()),
            None => err(self.src.len(), "", format!("unexpected end: {what}")),
        }
    }

    fn or(&mut self) -> Result<Node, FilterError> {
        let mut n = self.and()?;
        while self.keyword("OR") {
            self.at += 1;
            n = Node::Or(Box::new(n), Box::new(self.and()?));
        }
        Ok(n)
    }

    fn and(&mut self) -> Result<Node, FilterError> {
        let mut n = self.not()?;
        while self.keyword("AND") {
            self.at += 1;
            n = Node::And(Box::new(n), Box::new(self.not()?));
        }
        Ok(n)
    }

    fn not(&mut self) -> Result<Node, FilterError> {
        if self.keyword("NOT") {
            self.at += 1;
            return Ok(Node::Not(Box::new(self.not()?)));
        }
        if matches!(
            self.peek(),
            Some(Token {
                tok: Tok::LParen,
                ..
            })
        ) {
            self.at += 1;
            let n = self.or()?;
            match self.peek() {
                Some(Token {
                    tok: Tok::RParen, ..
                }) => {
                    self.at += 1;
                    return Ok(n);
                }
                _ => return Err(self.end_error("expected `)`")),
            }
        }
        self.predicate()
    }

    /// A member path, a literal, a parameter, or a bare name that names no member (an
    /// enumerator, resolved against the other operand).
    fn operand(&mut self) -> Result<(Operand, Token), FilterError> {
        let t = self
            .peek()
            .cloned()
            .ok_or_else(|| self.end_error("expected a member, a value or a parameter"))?;
        self.at += 1;
        let op = match &t.tok {
            Tok::Int(v) => Operand::Lit(Lit::Int(*v)),
            Tok::Float(v) => Operand::Lit(Lit::Float(*v)),
            Tok::Str(s) => Operand::Lit(Lit::Str(s.clone())),
            Tok::Param(n) => {
                self.max_param = Some(self.max_param.map_or(*n, |m| m.max(*n)));
                Operand::Param(*n)
            }
            Tok::Ident(s) if s.eq_ignore_ascii_case("TRUE") => Operand::Lit(Lit::Bool(true)),
            Tok::Ident(s) if s.eq_ignore_ascii_case("FALSE") => Operand::Lit(Lit::Bool(false)),
            Tok::Ident(s) if is_keyword(s) => {
                return Err(err(
                    t.pos,
                    &t.text,
                    "expected a member, a value or a parameter",
                ))
            }
            Tok::Ident(s) => {
                let path = path_of(s, t.pos)?;
                match T::field_kind(&path) {
                    Some(kind) => Operand::Field(Field { path, kind }),
                    None => Operand::Lit(Lit::Name(s.clone())),
                }
            }
            _ => {
                return Err(err(
                    t.pos,
                    &t.text,
                    "expected a member, a value or a parameter",
                ))
            }
        };
        Ok((op, t))
    }

    fn predicate(&mut self) -> Result<Node, FilterError> {
        let (lhs, lt) = self.operand()?;
        let negated = self.keyword("NOT");
        if negated {
            self.at += 1;
            if !self.keyword("BETWEEN") {
                return Err(self.end_error("expected BETWEEN after NOT"));
            }
        }
        if self.keyword("BETWEEN") {
            self.at += 1;
            let Operand::Field(field) = lhs else {
                return Err(err(lt.pos, &lt.text, "BETWEEN needs a member on its left"));
            };
            let (lo, lo_t) = self.operand()?;
            if !self.keyword("AND") {
                return Err(self.end_error("expected AND in BETWEEN"));
            }
            self.at += 1;
            let (hi, hi_t) = self.operand()?;
            for (o, t) in [(&lo, &lo_t), (&hi, &hi_t)] {
                check_value(&field, o, t)?;
            }
            return Ok(Node::Between {
                field,
                lo,
                hi,
                negated,
            });
        }
        let op = match self.peek() {
            Some(Token {
                tok: Tok::Op(o), ..
            }) => match *o {
                "=" => Op::Eq,
                "<>" => Op::Ne,
                "<" => Op::Lt,
                "<=" => Op::Le,
                ">" => Op::Gt,
                _ => Op::Ge,
            },
            _ if self.keyword("LIKE") => Op::Like,
            _ => return Err(self.end_error("expected a comparison operator, BETWEEN or LIKE")),
        };
        self.at += 1;
        if op == Op::Like {
            let Operand::Field(f) = &lhs else {
                return Err(err(lt.pos, &lt.text, "LIKE needs a member on its left"));
            };
            if f.kind != FieldKind::Str && f.kind != FieldKind::Char {
                return Err(err(lt.pos, &lt.text, "LIKE applies to strings"));
            }
        }
        let (rhs, rt) = self.operand()?;
        match (&lhs, &rhs) {
            (Operand::Field(f), o) => check_value(f, o, &rt)?,
            (o, Operand::Field(f)) => check_value(f, o, &lt)?,
            _ => {
                let (pos, text) = match &lhs {
                    Operand::Lit(Lit::Name(_)) => (lt.pos, lt.text.clone()),
                    _ => (rt.pos, rt.text.clone()),
                };
                let msg = if matches!(lhs, Operand::Lit(Lit::Name(_)))
                    || matches!(rhs, Operand::Lit(Lit::Name(_)))
                {
                    "no such member"
                } else {
                    "a comparison needs a member on one side"
                };
                return Err(err(pos, &text, msg));
            }
        }
        Ok(Node::Cmp(lhs, op, rhs))
    }

    /// `ORDER BY member (, member)*`, the parser being at `ORDER`.
    fn order_by(&mut self) -> Result<Vec<OrderKey>, FilterError> {
        self.at += 1;
        if !self.keyword("BY") {
            return Err(self.end_error("expected BY after ORDER"));
        }
        self.at += 1;
        let mut keys = vec![self.order_key()?];
        while matches!(
            self.peek(),
            Some(Token {
                tok: Tok::Comma,
                ..
            })
        ) {
            self.at += 1;
            keys.push(self.order_key()?);
        }
        Ok(keys)
    }

    /// One member of an ORDER BY: a path to a member of a primitive, string or enumeration
    /// type (a struct or a sequence has no order).
    fn order_key(&mut self) -> Result<OrderKey, FilterError> {
        const EXPECTED: &str = "expected a member to order by";
        let t = self
            .peek()
            .cloned()
            .ok_or_else(|| self.end_error(EXPECTED))?;
        let name = match &t.tok {
            Tok::Ident(name) if !is_keyword(name) => name,
            _ => return Err(err(t.pos, &t.text, EXPECTED)),
        };
        let path = path_of(name, t.pos)?;
        if T::field_kind(&path).is_none() {
            let why = if T::has_member(&path) {
                "cannot be ordered: ORDER BY takes members of primitive, string or \
                 enumeration types, not structs or sequences"
            } else {
                "no such member"
            };
            return Err(err(t.pos, &t.text, why));
        }
        self.at += 1;
        Ok(OrderKey {
            member: name.clone(),
            path,
        })
    }
}

fn is_keyword(s: &str) -> bool {
    ["AND", "OR", "NOT", "BETWEEN", "LIKE", "ORDER", "BY"]
        .iter()
        .any(|k| s.eq_ignore_ascii_case(k))
}

/// Checks a literal against the member it is compared with (parameters are checked when
/// their values are set).
fn check_value(f: &Field, o: &Operand, t: &Token) -> Result<(), FilterError> {
    let Operand::Lit(l) = o else {
        return Ok(());
    };
    if fits(&f.kind, l) {
        Ok(())
    } else {
        let what = match l {
            Lit::Name(_) => "no such member or enumerator".to_string(),
            _ => format!(
                "cannot be compared with a member of kind {:?}",
                kind_name(&f.kind)
            ),
        };
        Err(err(t.pos, &t.text, what))
    }
}

fn kind_name(k: &FieldKind) -> &'static str {
    match k {
        FieldKind::Bool => "boolean",
        FieldKind::Int | FieldKind::UInt => "integer",
        FieldKind::Float => "float",
        FieldKind::Char => "char",
        FieldKind::Str => "string",
        FieldKind::Enum(_) => "enumeration",
    }
}

fn fits(kind: &FieldKind, l: &Lit) -> bool {
    match (kind, l) {
        (FieldKind::Bool, Lit::Bool(_)) => true,
        (FieldKind::Int | FieldKind::UInt | FieldKind::Float, Lit::Int(_) | Lit::Float(_)) => true,
        (FieldKind::Str, Lit::Str(_)) => true,
        (FieldKind::Char, Lit::Str(s)) => s.chars().count() == 1,
        (FieldKind::Enum(names), Lit::Name(n) | Lit::Str(n)) => names.contains(&enumerator(n)),
        (FieldKind::Enum(_), Lit::Int(_)) => true,
        _ => false,
    }
}

/// The enumerator of a possibly scoped name (`Color::RED` is `RED`).
fn enumerator(n: &str) -> &str {
    n.rsplit("::").next().unwrap_or(n)
}

/// A parameter's text as a literal: a quoted string, TRUE/FALSE, a number, or a name.
fn param_value(s: &str) -> Lit {
    let t = s.trim();
    let quoted = t.len() >= 2
        && ((t.starts_with('\'') && t.ends_with('\'')) || (t.starts_with('"') && t.ends_with('"')));
    if quoted {
        return Lit::Str(t[1..t.len() - 1].to_string());
    }
    if t.eq_ignore_ascii_case("TRUE") {
        return Lit::Bool(true);
    }
    if t.eq_ignore_ascii_case("FALSE") {
        return Lit::Bool(false);
    }
    if let Some((tok, _)) = number(t).filter(|(_, n)| *n == t.len()) {
        match tok {
            Tok::Int(v) => return Lit::Int(v),
            Tok::Float(v) => return Lit::Float(v),
            _ => {}
        }
    }
    // Unquoted text: a string to a string member, an enumerator to an enumeration.
    Lit::Str(t.to_string())
}

impl Filter {
    /// Parses the content filter `expression` (a Condition: DDS 1.4 Annex B
    /// `FilterExpression`; `ORDER BY` is refused) for samples of `T`, with `params` for
    /// `%0`, `%1`, ...
    pub fn new<T: Reflect>(expression: &str, params: &[String]) -> Result<Filter, FilterError> {
        Self::parse::<T>(expression, params, Grammar::Filter)
    }

    /// Parses the query expression `expression` (DDS 1.4 Annex B `QueryExpression`: a
    /// Condition, `ORDER BY` and member paths separated by commas, or both) for samples of
    /// `T`, with `params` for `%0`, `%1`, ... Each `ORDER BY` member is a path to a member
    /// of a primitive, string or enumeration type.
    pub fn new_query<T: Reflect>(
        expression: &str,
        params: &[String],
    ) -> Result<Filter, FilterError> {
        Self::parse::<T>(expression, params, Grammar::Query)
    }

    fn parse<T: Reflect>(
        expression: &str,
        params: &[String],
        grammar: Grammar,
    ) -> Result<Filter, FilterError> {
        let toks = lex(expression)?;
        if toks.is_empty() {
            return Err(err(0, "", "empty expression"));
        }
        let mut p = Parser::<T> {
            toks,
            at: 0,
            src: expression,
            max_param: None,
            _t: std::marker::PhantomData,
        };
        let root = if p.keyword("ORDER") {
            None
        } else {
            Some(p.or()?)
        };
        let mut order_by = Vec::new();
        if p.keyword("ORDER") {
            if grammar == Grammar::Filter {
                return Err(p.end_error(
                    "ORDER BY belongs in a query condition's expression, not in a filter",
                ));
            }
            order_by = p.order_by()?;
        }
        if p.peek().is_some() {
            let what = if order_by.is_empty() {
                "expected AND, OR or the end of the expression"
            } else if p.keyword("ASC") || p.keyword("DESC") {
                "ORDER BY sorts ascending: DDS 1.4 Annex B has no ASC or DESC"
            } else {
                "expected `,` or the end of the expression"
            };
            return Err(p.end_error(what));
        }
        let mut f = Filter {
            expression: expression.to_string(),
            root,
            order_by,
            max_param: p.max_param,
            params: Vec::new(),
            param_text: Vec::new(),
        };
        f.set_parameters(params)?;
        Ok(f)
    }

    /// The expression as given.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The parameters, as given.
    pub fn parameters(&self) -> &[String] {
        &self.param_text
    }

    /// The member paths of the query's `ORDER BY`, as written, first first (none without).
    pub fn order_by(&self) -> Vec<&str> {
        self.order_by.iter().map(|k| k.member.as_str()).collect()
    }

    /// Replaces the parameter values; an expression that uses `%n` needs at least n + 1.
    pub fn set_parameters(&mut self, params: &[String]) -> Result<(), FilterError> {
        if let Some(n) = self.max_param {
            if params.len() <= n {
                return Err(err(
                    self.expression.find(&format!("%{n}")).unwrap_or(0),
                    &format!("%{n}"),
                    format!("{} parameter(s) given, %{n} needs {}", params.len(), n + 1),
                ));
            }
        }
        self.params = params.iter().map(|s| param_value(s)).collect();
        self.param_text = params.to_vec();
        Ok(())
    }

    /// True if `sample` passes the filter (a query with no condition accepts every sample).
    pub fn matches<T: Reflect>(&self, sample: &T) -> bool {
        self.root
            .as_ref()
            .is_none_or(|root| self.eval(root, sample))
    }

    fn eval<T: Reflect>(&self, n: &Node, s: &T) -> bool {
        match n {
            Node::And(a, b) => self.eval(a, s) && self.eval(b, s),
            Node::Or(a, b) => self.eval(a, s) || self.eval(b, s),
            Node::Not(a) => !self.eval(a, s),
            Node::Cmp(l, op, r) => self.compare(s, l, *op, r),
            Node::Between {
                field,
                lo,
                hi,
                negated,
            } => {
                // The member is read once for both bounds.
                let (Some(v), Some(l), Some(h)) =
                    (s.field(&field.path), self.value(s, lo), self.value(s, hi))
                else {
                    return false;
                };
                let inside = holds(&field.kind, Val::Field(v.clone()), Op::Ge, l)
                    && holds(&field.kind, Val::Field(v), Op::Le, h);
                inside != *negated
            }
        }
    }

    fn value<'s, T: Reflect>(&'s self, s: &'s T, o: &'s Operand) -> Option<Val<'s>> {
        match o {
            Operand::Field(f) => s.field(&f.path).map(Val::Field),
            Operand::Lit(l) => Some(Val::Lit(l)),
            Operand::Param(n) => self.params.get(*n).map(Val::Lit),
        }
    }

    fn compare<T: Reflect>(&self, s: &T, l: &Operand, op: Op, r: &Operand) -> bool {
        let kind = match (l, r) {
            (Operand::Field(f), _) | (_, Operand::Field(f)) => &f.kind,
            _ => return false,
        };
        match (self.value(s, l), self.value(s, r)) {
            (Some(a), Some(b)) => holds(kind, a, op, b),
            _ => false,
        }
    }
}

/// `a op b`, for operands compared as members of `kind`.
fn holds(kind: &FieldKind, a: Val<'_>, op: Op, b: Val<'_>) -> bool {
    if op == Op::Like {
        return match (a.as_str(), b.as_str()) {
            (Some(text), Some(pattern)) => like(&text, &pattern),
            _ => false,
        };
    }
    let Some(ord) = order(&a, &b, kind) else {
        return false;
    };
    match op {
        Op::Eq => ord == Ordering::Equal,
        Op::Ne => ord != Ordering::Equal,
        Op::Lt => ord == Ordering::Less,
        Op::Le => ord != Ordering::Greater,
        Op::Gt => ord == Ordering::Greater,
        Op::Ge => ord != Ordering::Less,
        Op::Like => false,
    }
}

/// An operand's value during evaluation.
enum Val<'a> {
    Field(FieldValue<'a>),
    Lit(&'a Lit),
}

impl Val<'_> {
    fn as_str(&self) -> Option<String> {
        match self {
            Val::Field(FieldValue::Str(s)) => Some(s.to_string()),
            Val::Field(FieldValue::Char(c)) => Some(c.to_string()),
            Val::Lit(Lit::Str(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// As a number: (exact integer, float).
    fn number(&self) -> Option<(Option<i128>, f64)> {
        match self {
            Val::Field(FieldValue::Int(v)) => Some((Some(*v as i128), *v as f64)),
            Val::Field(FieldValue::UInt(v)) => Some((Some(*v as i128), *v as f64)),
            Val::Field(FieldValue::Float(v)) => Some((None, *v)),
            Val::Lit(Lit::Int(v)) => Some((Some(*v), *v as f64)),
            Val::Lit(Lit::Float(v)) => Some((None, *v)),
            _ => None,
        }
    }

    /// As an enumerator: its position in the declaration (`names`) or numeric value.
    fn enum_rank(&self, names: &[&str]) -> Option<i128> {
        match self {
            Val::Field(FieldValue::Enum { name, .. }) => {
                names.iter().position(|n| n == name).map(|p| p as i128)
            }
            Val::Lit(Lit::Name(n) | Lit::Str(n)) => names
                .iter()
                .position(|x| *x == enumerator(n))
                .map(|p| p as i128),
            _ => None,
        }
    }
}

fn order(a: &Val<'_>, b: &Val<'_>, kind: &FieldKind) -> Option<Ordering> {
    if let FieldKind::Enum(names) = kind {
        // By value when compared with a number, else by declaration order.
        let num = |v: &Val<'_>| match v {
            Val::Field(FieldValue::Enum { value, .. }) => Some(*value as i128),
            Val::Lit(Lit::Int(i)) => Some(*i),
            _ => None,
        };
        if let (Some(x), Some(y)) = (num(a), num(b)) {
            if matches!(a, Val::Lit(Lit::Int(_))) || matches!(b, Val::Lit(Lit::Int(_))) {
                return Some(x.cmp(&y));
            }
        }
        return Some(a.enum_rank(names)?.cmp(&b.enum_rank(names)?));
    }
    if let (Some(x), Some(y)) = (a.number(), b.number()) {
        return match (x.0, y.0) {
            (Some(i), Some(j)) => Some(i.cmp(&j)),
            _ => x.1.partial_cmp(&y.1),
        };
    }
    let boolean = |v: &Val<'_>| match v {
        Val::Field(FieldValue::Bool(b)) | Val::Lit(Lit::Bool(b)) => Some(*b),
        _ => None,
    };
    if let (Some(x), Some(y)) = (boolean(a), boolean(b)) {
        return Some(x.cmp(&y));
    }
    Some(a.as_str()?.cmp(&b.as_str()?))
}

/// SQL LIKE: `%` matches any run of characters, `_` exactly one.
fn like(text: &str, pattern: &str) -> bool {
    let t: Vec<char> = text.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    let (mut ti, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '_' || (p[pi] != '%' && p[pi] == t[ti])) {
            ti += 1;
            pi += 1;
        } else if pi < p.len() && p[pi] == '%' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '%')
}

/// A filter applied to serialized samples (decodes, then evaluates); shared by a reader and
/// the entity that owns its parameters.
pub(crate) type SampleFilter = std::sync::Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// A filter whose parameters can change while readers use it.
pub(crate) type SharedFilter = std::sync::Arc<std::sync::RwLock<Filter>>;

/// The serialized-sample test of `filter` for samples of `T`. A payload that does not
/// decode passes (the application sees the decode failure when it takes the sample).
pub(crate) fn sample_filter<T: halyard_cdr::TopicType + Reflect>(
    filter: &SharedFilter,
) -> SampleFilter {
    let f = std::sync::Arc::clone(filter);
    std::sync::Arc::new(
        move |payload: &[u8]| match halyard_cdr::deserialize::<T>(payload) {
            Ok(v) => f.read().map_or(true, |g| g.matches(&v)),
            Err(_) => true,
        },
    )
}

/// A writer's compiler of its readers' content filters for samples of `T`
/// (`halyard_core::FilterCompiler`): a DDSSQL filter whose expression parses against `T`
/// with its parameters, run on the decoded sample (a payload that does not decode passes, as
/// on the reader). Any other filter class, or an expression that does not fit `T`: none, and
/// that reader gets every sample.
pub(crate) fn writer_filter_compiler<T: halyard_cdr::TopicType>() -> halyard_core::FilterCompiler {
    std::sync::Arc::new(|p: &ContentFilterProperty| {
        if p.filter_class_name != DDSSQL {
            return None;
        }
        let f = Filter::new::<T>(&p.filter_expression, &p.expression_parameters).ok()?;
        let test: SampleFilter = std::sync::Arc::new(move |payload: &[u8]| {
            halyard_cdr::deserialize::<T>(payload).map_or(true, |v| f.matches(&v))
        });
        Some(test)
    })
}

/// How long `set_expression_parameters` (and `DataReader::set_qos`, for a new
/// TIME_BASED_FILTER) waits at most for the writers of a reader's participant peers to
/// acknowledge the new announcement.
pub(crate) const ANNOUNCEMENT_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Readers created from a content-filtered topic, by participant (to announce its new
/// parameters).
type FilteredReaders = std::sync::Mutex<Vec<(std::sync::Weak<Shared>, EntityId)>>;

/// A topic whose readers see only the samples a filter accepts (DDS 1.4 §2.2.2.3.3): create
/// it with `DomainParticipant::create_contentfilteredtopic` and readers of it with
/// `Subscriber::create_datareader_filtered`. The filter runs on the reader, and its readers
/// announce it (PID_CONTENT_FILTER_PROPERTY) so that writers that can apply it, Halyard's
/// among them, send them only what it accepts.
pub struct ContentFilteredTopic<T> {
    pub(crate) name: String,
    pub(crate) related: crate::Topic<T>,
    pub(crate) filter: SharedFilter,
    readers: FilteredReaders,
}

impl<T: halyard_cdr::TopicType + Reflect> ContentFilteredTopic<T> {
    pub(crate) fn new(
        name: &str,
        related: &crate::Topic<T>,
        expression: &str,
        params: Vec<String>,
    ) -> Result<Self, FilterError> {
        let filter = Filter::new::<T>(expression, &params)?;
        Ok(ContentFilteredTopic {
            name: name.to_string(),
            related: related.clone(),
            filter: std::sync::Arc::new(std::sync::RwLock::new(filter)),
            readers: Default::default(),
        })
    }

    /// What its readers announce: names, the DDSSQL class, expression and parameters.
    pub fn content_filter_property(&self) -> ContentFilterProperty {
        let (expression, params) = self
            .filter
            .read()
            .map(|f| (f.expression().to_string(), f.parameters().to_vec()))
            .unwrap_or_default();
        ContentFilterProperty {
            content_filtered_topic_name: self.name.clone(),
            related_topic_name: self.related.name.clone(),
            filter_class_name: DDSSQL.to_string(),
            filter_expression: expression,
            expression_parameters: params,
        }
    }

    /// Creates a reader of this topic with `create` (given what it announces) and records it,
    /// both while no parameter change is announced (`set_expression_parameters` announces to
    /// the readers recorded, with the parameters it set): a reader misses no change.
    pub(crate) fn attach(
        &self,
        shared: &std::sync::Arc<Shared>,
        create: impl FnOnce(ContentFilterProperty) -> EntityId,
    ) -> EntityId {
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        readers.retain(|(s, _)| s.strong_count() > 0);
        let id = create(self.content_filter_property());
        readers.push((std::sync::Arc::downgrade(shared), id));
        id
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The topic it filters.
    pub fn related_topic(&self) -> &crate::Topic<T> {
        &self.related
    }

    /// The filter expression.
    pub fn filter_expression(&self) -> String {
        self.filter
            .read()
            .map(|f| f.expression().to_string())
            .unwrap_or_default()
    }

    /// The current parameters.
    pub fn expression_parameters(&self) -> Vec<String> {
        self.filter
            .read()
            .map(|f| f.parameters().to_vec())
            .unwrap_or_default()
    }

    /// Replaces the parameters; readers of this topic filter with them from now on, and
    /// announce them (SEDP), so that writers filter for them with the new parameters too. It
    /// returns once the participants of the readers' matched writers acknowledged the new
    /// announcement (or after a second), so samples written after it are filtered with them.
    pub fn set_expression_parameters(&self, params: Vec<String>) -> crate::Result<()> {
        // Not held while announcing: receive threads read the filter under the participant's
        // lock.
        self.filter
            .write()
            .map_err(|_| crate::Error::BadParameter("the filter is poisoned"))?
            .set_parameters(&params)?;
        let readers: Vec<(std::sync::Arc<Shared>, EntityId)> = {
            let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
            readers.retain(|(s, _)| s.strong_count() > 0);
            readers
                .iter()
                .filter_map(|(s, id)| Some((s.upgrade()?, *id)))
                .collect()
        };
        let mut gone = Vec::new();
        for (shared, id) in &readers {
            let announced = shared.drive(|st, now| {
                // Read under the participant's lock: of two concurrent changes, the last made
                // is the last announced.
                let property = self.content_filter_property();
                st.core.set_reader_content_filter(now, *id, Some(property))
            });
            if announced.is_err() {
                gone.push(*id);
            }
        }
        // Writers that filter for these readers take the new parameters when the announcement
        // reaches them: waiting for its acknowledgment (bounded; not in a listener, whose
        // thread may be the one that would receive it) makes them apply to what is written
        // after this returns.
        for (shared, id) in &readers {
            if !shared.in_listener() {
                let id = *id;
                shared.wait_until(ANNOUNCEMENT_WAIT, |st| {
                    st.core.reader_announcement_acknowledged(id)
                });
            }
        }
        if !gone.is_empty() {
            let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
            readers.retain(|(_, id)| !gone.contains(id));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(halyard_derive::CdrType, Clone, Copy, Debug, Default, PartialEq)]
    enum Color {
        #[default]
        Red,
        Green,
        Blue,
    }

    /// Values out of declaration order.
    #[derive(halyard_derive::CdrType, Clone, Copy, Debug, Default, PartialEq)]
    enum Urgency {
        #[default]
        Now = 9,
        Later = 1,
        Soon = 4,
    }

    #[derive(halyard_derive::CdrType, Clone, Debug, Default)]
    struct Point {
        x: i32,
        y: f64,
    }

    #[derive(halyard_derive::Topic, Clone, Debug, Default)]
    struct Shape {
        #[key]
        color: String,
        size: u32,
        pos: Point,
        trail: Vec<Point>,
        hue: Color,
        visible: bool,
        tag: Option<String>,
        urgency: Urgency,
    }

    fn shape() -> Shape {
        Shape {
            color: "BLUE".into(),
            size: 30,
            pos: Point { x: 100, y: 2.5 },
            trail: vec![Point { x: 1, y: 0.0 }, Point { x: 2, y: 0.5 }],
            hue: Color::Green,
            visible: true,
            tag: None,
            urgency: Urgency::Now,
        }
    }

    fn eval(expr: &str, params: &[&str]) -> bool {
        let params: Vec<String> = params.iter().map(|s| s.to_string()).collect();
        Filter::new::<Shape>(expr, &params)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .matches(&shape())
    }

    fn error(expr: &str) -> FilterError {
        Filter::new::<Shape>(expr, &[]).expect_err(expr)
    }

    #[test]
    fn the_annex_b_grammar_evaluates() {
        assert!(eval("size > 20 AND pos.x BETWEEN 50 AND 150", &[]));
        assert!(eval("size >= 30 and size <= 30 AND NOT size <> 30", &[]));
        assert!(!eval("size NOT BETWEEN 10 AND 40", &[]));
        assert!(eval("color = 'BLUE' OR color = 'RED'", &[]));
        assert!(eval("color LIKE 'B%' AND color LIKE '_LU_'", &[]));
        assert!(!eval("color LIKE 'R%'", &[]));
        assert!(eval("pos.y < 2.6 AND pos.y > 2.4e0", &[]));
        assert!(eval("trail[1].x = 2 AND trail[1].y = 0.5", &[]));
        assert!(
            !eval("trail[5].x = 2", &[]),
            "an element past the end is false"
        );
        assert!(
            !eval("tag = 'x'", &[]),
            "an absent optional member is false"
        );
        assert!(eval("hue = Green AND hue > Red AND hue < Color::Blue", &[]));
        assert!(eval("hue = 1", &[]), "by value");
        assert!(eval("visible = TRUE", &[]));
        assert!(eval(
            "(size < 10 OR size > 20) AND (NOT visible = FALSE)",
            &[]
        ));
        assert!(eval("20 < size", &[]), "a literal on the left");
        assert!(eval("size = 0x1e", &[]));
        assert!(eval("size != 31", &[]));
    }

    #[test]
    fn parameters_are_typed_by_their_member_and_replaceable() {
        assert!(eval("color = %0 AND size > %1", &["'BLUE'", "10"]));
        assert!(eval("color = %0", &["BLUE"]));
        assert!(eval("hue = %0", &["Green"]));
        assert!(eval("pos.y BETWEEN %0 AND %1", &["2", "3.0"]));
        let mut f = Filter::new::<Shape>("size > %0", &["40".into()]).unwrap();
        assert!(!f.matches(&shape()));
        f.set_parameters(&["20".into()]).unwrap();
        assert!(f.matches(&shape()));
        let e = f.set_parameters(&[]).unwrap_err();
        assert_eq!(e.token, "%0");
        let e = Filter::new::<Shape>("size > %1", &["1".into()]).unwrap_err();
        assert_eq!((e.position, e.token.as_str()), (7, "%1"));
    }

    #[test]
    fn bad_expressions_point_at_the_offending_token() {
        let e = error("size > 10 AND colour = 'x'");
        assert_eq!((e.position, e.token.as_str()), (14, "colour"), "{e}");
        assert!(e.message.contains("no such member"), "{e}");
        let e = error("size > 'big'");
        assert_eq!((e.position, e.token.as_str()), (7, "'big'"), "{e}");
        let e = error("size >");
        assert_eq!((e.position, e.token.as_str()), (6, ""), "{e}");
        let e = error("size > 1 size < 3");
        assert_eq!(e.token, "size");
        let e = error("(size > 1");
        assert!(e.message.contains(")"), "{e}");
        let e = error("color LIKE 5");
        assert_eq!(e.token, "5");
        let e = error("size LIKE '1%'");
        assert!(e.message.contains("strings"), "{e}");
        let e = error("hue = Purple");
        assert_eq!(e.token, "Purple");
        let e = error("size # 3");
        assert_eq!((e.position, e.token.as_str()), (5, "#"));
        let e = error("color = 'open");
        assert!(e.message.contains("unterminated"), "{e}");
        let e = error("size > 1 size");
        assert_eq!((e.position, e.token.as_str()), (9, "size"), "{e}");
        assert!(error("pos = 3").message.contains("no such member"));
        assert!(error("").message.contains("empty"));
    }

    fn query(expr: &str) -> Filter {
        Filter::new_query::<Shape>(expr, &[]).unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    fn query_error(expr: &str) -> FilterError {
        Filter::new_query::<Shape>(expr, &[]).expect_err(expr)
    }

    /// `shapes` as a read through a query with `expr` returns them: those it accepts,
    /// serialized, then sorted as the reader's cache sorts them.
    fn through_query(expr: &str, shapes: &[Shape]) -> Vec<Shape> {
        let f = query(expr);
        let accepted: Vec<&Shape> = shapes.iter().filter(|s| f.matches(*s)).collect();
        let (q, _shared) = SampleQuery::new::<Shape>(f);
        let payloads: Vec<Vec<u8>> = accepted
            .iter()
            .map(|s| {
                let mut buf = Vec::new();
                halyard_cdr::serialize(*s, halyard_cdr::DataRepresentation::Xcdr2, &mut buf)
                    .unwrap();
                buf
            })
            .collect();
        assert!(payloads.iter().all(|p| q.accepts(Some(p))));
        let mut chosen: Vec<usize> = (0..payloads.len()).collect();
        q.sort(&mut chosen, |i| &payloads[i]);
        chosen.into_iter().map(|i| accepted[i].clone()).collect()
    }

    fn sized(color: &str, size: u32) -> Shape {
        Shape {
            color: color.into(),
            size,
            ..shape()
        }
    }

    #[test]
    fn order_by_follows_a_condition_or_stands_alone_in_a_query() {
        let f = query("size > 1 ORDER BY size");
        assert_eq!(f.order_by(), vec!["size"]);
        assert_eq!(f.expression(), "size > 1 ORDER BY size");
        assert!(f.matches(&shape()));
        assert!(!query("size > 40 order by size").matches(&shape()));
        let f = query("ORDER BY color");
        assert_eq!(f.order_by(), vec!["color"]);
        assert!(f.matches(&shape()), "ORDER BY alone selects every sample");
        let f = query("(hue = Green OR size < 3) ORDER BY pos.x, trail[1].y,color,hue");
        assert_eq!(f.order_by(), vec!["pos.x", "trail[1].y", "color", "hue"]);
        assert!(query("size > 1").order_by().is_empty());
        let mut f = Filter::new_query::<Shape>("size > %0 ORDER BY pos.y", &["40".into()]).unwrap();
        assert!(!f.matches(&shape()));
        f.set_parameters(&["20".into()]).unwrap();
        assert!(f.matches(&shape()));
        assert_eq!(
            f.order_by(),
            vec!["pos.y"],
            "parameters leave ORDER BY alone"
        );
    }

    #[test]
    fn order_by_sorts_ascending_keeping_ties_in_order() {
        let shapes = [
            sized("C", 30),
            sized("A", 10),
            sized("B", 30),
            sized("D", 20),
            sized("E", 10),
        ];
        let colors = |v: Vec<Shape>| v.into_iter().map(|s| s.color).collect::<Vec<_>>();
        assert_eq!(
            colors(through_query("ORDER BY size", &shapes)),
            ["A", "E", "D", "C", "B"],
            "equal sizes keep their order"
        );
        assert_eq!(
            colors(through_query("size >= 20 ORDER BY size, color", &shapes)),
            ["D", "B", "C"]
        );
        assert_eq!(
            colors(through_query("ORDER BY color", &shapes)),
            ["A", "B", "C", "D", "E"]
        );
        let nested: Vec<Shape> = [(5, 0.5), (-7, 2.0), (5, -1.0)]
            .iter()
            .zip(["P", "Q", "R"])
            .map(|(&(x, y), c)| Shape {
                pos: Point { x, y },
                ..sized(c, 1)
            })
            .collect();
        assert_eq!(
            colors(through_query("ORDER BY pos.x", &nested)),
            ["Q", "P", "R"]
        );
        assert_eq!(
            colors(through_query("ORDER BY pos.x, pos.y", &nested)),
            ["Q", "R", "P"]
        );
        assert_eq!(
            colors(through_query("ORDER BY pos.y", &nested)),
            ["R", "P", "Q"]
        );
    }

    #[test]
    fn order_by_sorts_enums_by_value_and_absent_members_last() {
        let shapes: Vec<Shape> = [
            ("a", Color::Blue, Some("x"), 1, Urgency::Now),
            ("b", Color::Red, None, 0, Urgency::Soon),
            ("c", Color::Green, Some("w"), 2, Urgency::Later),
            ("d", Color::Red, Some("v"), 3, Urgency::Now),
        ]
        .iter()
        .map(|&(c, hue, tag, n, urgency)| Shape {
            hue,
            tag: tag.map(String::from),
            trail: vec![Point::default(); n],
            urgency,
            ..sized(c, 1)
        })
        .collect();
        let colors = |v: Vec<Shape>| v.into_iter().map(|s| s.color).collect::<Vec<_>>();
        assert_eq!(
            colors(through_query("ORDER BY hue", &shapes)),
            ["b", "d", "c", "a"]
        );
        assert_eq!(
            colors(through_query("ORDER BY urgency", &shapes)),
            ["c", "b", "a", "d"],
            "by value (Later 1, Soon 4, Now 9), not declaration order"
        );
        assert_eq!(
            colors(through_query("ORDER BY tag", &shapes)),
            ["d", "c", "a", "b"]
        );
        assert_eq!(
            colors(through_query("ORDER BY trail[1].x, color", &shapes)),
            ["c", "d", "a", "b"],
            "an element past the end sorts last"
        );
    }

    #[test]
    fn bad_order_by_points_at_the_offending_token() {
        let e = query_error("size > 1 ORDER BY colour");
        assert_eq!((e.position, e.token.as_str()), (18, "colour"), "{e}");
        assert!(e.message.contains("no such member"), "{e}");
        let e = query_error("ORDER BY size, pos.z");
        assert_eq!((e.position, e.token.as_str()), (15, "pos.z"), "{e}");
        assert!(e.message.contains("no such member"), "{e}");
        for (expr, at, token) in [
            ("ORDER BY pos", 9, "pos"),
            ("ORDER BY size, trail", 15, "trail"),
            ("ORDER BY trail[0]", 9, "trail[0]"),
        ] {
            let e = query_error(expr);
            assert_eq!((e.position, e.token.as_str()), (at, token), "{e}");
            assert!(e.message.contains("cannot be ordered"), "{e}");
        }
        let e = query_error("size > 1 ORDER BY");
        assert_eq!((e.position, e.token.as_str()), (17, ""), "{e}");
        assert!(e.message.contains("member to order by"), "{e}");
        let e = query_error("ORDER BY size,");
        assert_eq!((e.position, e.token.as_str()), (14, ""), "{e}");
        let e = query_error("ORDER size");
        assert_eq!((e.position, e.token.as_str()), (6, "size"), "{e}");
        assert!(e.message.contains("BY"), "{e}");
        let e = query_error("ORDER BY size DESC");
        assert_eq!((e.position, e.token.as_str()), (14, "DESC"), "{e}");
        assert!(e.message.contains("ascending"), "{e}");
        let e = query_error("ORDER BY size asc");
        assert_eq!(e.token, "asc", "{e}");
        let e = query_error("ORDER BY size AND size > 1");
        assert_eq!((e.position, e.token.as_str()), (14, "AND"), "{e}");
        let e = query_error("ORDER BY 'size'");
        assert_eq!((e.position, e.token.as_str()), (9, "'size'"), "{e}");
        let e = query_error("size ORDER BY size");
        assert_eq!((e.position, e.token.as_str()), (5, "ORDER"), "{e}");
        assert!(query_error("size > 1 ORDER BY size, pos.x = 3")
            .message
            .contains("`,`"));
    }

    #[test]
    fn a_content_filter_refuses_order_by_at_order() {
        let e = error("size > 1 ORDER BY size");
        assert_eq!((e.position, e.token.as_str()), (9, "ORDER"), "{e}");
        assert!(e.message.contains("query condition"), "{e}");
        let e = error("ORDER BY size");
        assert_eq!((e.position, e.token.as_str()), (0, "ORDER"), "{e}");
        assert!(e.message.contains("query condition"), "{e}");
        let e = error("size > 1, size < 3");
        assert_eq!((e.position, e.token.as_str()), (8, ","), "{e}");
    }

    #[test]
    fn like_wildcards() {
        assert!(like("", "%"));
        assert!(like("abc", "a%c"));
        assert!(like("abc", "%b%"));
        assert!(!like("abc", "a_"));
        assert!(like("a_c", "a_c"));
        assert!(!like("abd", "%c"));
    }
}
