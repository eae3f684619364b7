//! The DDS SQL grammar (DDS 1.4 Annex B) parsed to a tree bound to a type's members.
//!
//! Design. A recursive descent over the tokens: `Condition` is OR of ANDs of NOTs of
//! predicates or parenthesized conditions; a predicate is a comparison (`=`, `<>`, `<`,
//! `<=`, `>`, `>=`, `LIKE`, `NOT LIKE`) or `[NOT] BETWEEN` a range. Every member path is
//! looked up in the [`FilterSchema`] as it is read: a path that names a comparable member
//! becomes a field with its kind, one whose first name is no member is kept as a name (an
//! enumerator, checked against the member it is compared with), and anything else is an
//! error there. Literals are checked against the member they meet, parameters when their
//! values are set. A query may end with (or be only) `ORDER BY` member paths. Nesting is
//! bounded ([`MAX_DEPTH`]): expressions arrive from remote peers too.

use super::error::{err, FilterError};
use super::lexer::{lex, Tok, Token};
use super::schema::{enumerator, FieldRef, FilterSchema, MemberKind};
use halyard_cdr::PathSegment;

/// Deepest nesting of parentheses and NOTs.
pub const MAX_DEPTH: usize = 64;

/// A literal operand, or a parameter's value once parsed.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Lit {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    /// A bare name that is not a member: an enumerator.
    Name(String),
}

/// A comparable member: its path and kind.
#[derive(Clone, Debug)]
pub(super) struct Field {
    pub(super) path: Vec<PathSegment>,
    pub(super) kind: MemberKind,
}

#[derive(Clone, Debug)]
pub(super) enum Operand {
    Field(Field),
    Lit(Lit),
    Param(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Like,
    NotLike,
}

/// A condition.
#[derive(Clone, Debug)]
pub(super) enum Node {
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
pub(super) struct OrderKey {
    /// The member path as written.
    pub(super) member: String,
    pub(super) path: Vec<PathSegment>,
}

/// Which part of Annex B an expression follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Grammar {
    /// `FilterExpression ::= Condition` (content-filtered topics).
    Filter,
    /// `QueryExpression ::= { Condition }{ 'ORDER BY' (FIELDNAME // ',') }` (query
    /// conditions).
    Query,
}

/// A parsed expression.
#[derive(Clone, Debug)]
pub(super) struct Parsed {
    /// The condition; `None` for a query that is only `ORDER BY`.
    pub(super) root: Option<Node>,
    /// The `ORDER BY` members, first first.
    pub(super) order_by: Vec<OrderKey>,
    /// The highest parameter number used, if any.
    pub(super) max_param: Option<usize>,
}

/// Parses `expression` against `schema`.
pub(super) fn parse(
    expression: &str,
    schema: &dyn FilterSchema,
    grammar: Grammar,
) -> Result<Parsed, FilterError> {
    let toks = lex(expression)?;
    if toks.is_empty() {
        return Err(err(0, "", "empty expression"));
    }
    let mut p = Parser {
        toks,
        at: 0,
        src: expression,
        max_param: None,
        schema,
    };
    let root = if p.keyword("ORDER") {
        None
    } else {
        Some(p.or(0)?)
    };
    let mut order_by = Vec::new();
    if p.keyword("ORDER") {
        if grammar == Grammar::Filter {
            return Err(
                p.end_error("ORDER BY belongs in a query condition's expression, not in a filter")
            );
        }
        order_by = p.order_by()?;
    }
    if p.peek().is_some() {
        let what = if order_by.is_empty() {
            "unexpected token: expected AND, OR or the end of the expression"
        } else if p.keyword("ASC") || p.keyword("DESC") {
            "ORDER BY sorts ascending: DDS 1.4 Annex B has no ASC or DESC"
        } else {
            "expected `,` or the end of the expression"
        };
        return Err(p.end_error(what));
    }
    Ok(Parsed {
        root,
        order_by,
        max_param: p.max_param,
    })
}

struct Parser<'a> {
    toks: Vec<Token>,
    at: usize,
    src: &'a str,
    max_param: Option<usize>,
    schema: &'a dyn FilterSchema,
}

const EXPECTED_OPERAND: &str = "expected a member, a value or a parameter";

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at)
    }

    fn keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Ident(s), .. }) if s.eq_ignore_ascii_case(kw))
    }

    fn is(&self, tok: &Tok) -> bool {
        self.peek().is_some_and(|t| t.tok == *tok)
    }

    /// The error at the current token, or at the end.
    fn end_error(&self, what: &str) -> FilterError {
        match self.peek() {
            Some(t) => err(t.pos, &t.text, what.to_string()),
            None => err(self.src.len(), "", format!("unexpected end: {what}")),
        }
    }

    fn or(&mut self, depth: usize) -> Result<Node, FilterError> {
        let mut n = self.and(depth)?;
        while self.keyword("OR") {
            self.at += 1;
            n = Node::Or(Box::new(n), Box::new(self.and(depth)?));
        }
        Ok(n)
    }

    fn and(&mut self, depth: usize) -> Result<Node, FilterError> {
        let mut n = self.not(depth)?;
        while self.keyword("AND") {
            self.at += 1;
            n = Node::And(Box::new(n), Box::new(self.not(depth)?));
        }
        Ok(n)
    }

    fn not(&mut self, depth: usize) -> Result<Node, FilterError> {
        if depth > MAX_DEPTH {
            return Err(self.end_error("nested too deeply"));
        }
        if self.keyword("NOT") {
            self.at += 1;
            return Ok(Node::Not(Box::new(self.not(depth + 1)?)));
        }
        if self.is(&Tok::LParen) {
            self.at += 1;
            let n = self.or(depth + 1)?;
            if !self.is(&Tok::RParen) {
                return Err(self.end_error("expected `)`"));
            }
            self.at += 1;
            return Ok(n);
        }
        self.predicate()
    }

    /// A member path, a literal, a parameter, or a bare name that names no member (an
    /// enumerator, resolved against the other operand).
    fn operand(&mut self) -> Result<(Operand, Token), FilterError> {
        let t = self
            .peek()
            .cloned()
            .ok_or_else(|| self.end_error(EXPECTED_OPERAND))?;
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
            Tok::Ident(s) if !is_keyword(s) => self.member_operand(s, &t)?,
            _ => return Err(err(t.pos, &t.text, EXPECTED_OPERAND)),
        };
        self.at += 1;
        Ok((op, t))
    }

    /// What the name `s` (token `t`) is as an operand: a comparable member, or an
    /// enumerator when its first name is no member.
    fn member_operand(&self, s: &str, t: &Token) -> Result<Operand, FilterError> {
        let path = path_of(s, t.pos)?;
        match self.schema.member(&path) {
            FieldRef::Comparable(kind) => Ok(Operand::Field(Field { path, kind })),
            FieldRef::Missing { found: 0 } => Ok(Operand::Lit(Lit::Name(s.to_string()))),
            FieldRef::Missing { found } => Err(err(t.pos, &t.text, missing(&path, found))),
            FieldRef::Composite => Err(err(
                t.pos,
                &t.text,
                "no such member to compare: not a comparable member (a struct, collection or \
                 union)",
            )),
        }
    }

    fn predicate(&mut self) -> Result<Node, FilterError> {
        let (lhs, lt) = self.operand()?;
        let negated = self.keyword("NOT");
        if negated {
            self.at += 1;
            if !self.keyword("BETWEEN") && !self.keyword("LIKE") {
                return Err(self.end_error("expected BETWEEN or LIKE after NOT"));
            }
        }
        if self.keyword("BETWEEN") {
            self.at += 1;
            return self.between(lhs, &lt, negated);
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
            _ if self.keyword("LIKE") => {
                if negated {
                    Op::NotLike
                } else {
                    Op::Like
                }
            }
            _ => return Err(self.end_error("expected a comparison operator, BETWEEN or LIKE")),
        };
        self.at += 1;
        if matches!(op, Op::Like | Op::NotLike) {
            let Operand::Field(f) = &lhs else {
                return Err(err(lt.pos, &lt.text, "LIKE needs a member on its left"));
            };
            if f.kind != MemberKind::Str && f.kind != MemberKind::Char {
                return Err(err(lt.pos, &lt.text, "LIKE applies to strings"));
            }
        }
        let (rhs, rt) = self.operand()?;
        match (&lhs, &rhs) {
            (Operand::Field(f), o) => check_value(f, o, &rt)?,
            (o, Operand::Field(f)) => check_value(f, o, &lt)?,
            _ => return Err(no_member(&lhs, &lt, &rhs, &rt)),
        }
        Ok(Node::Cmp(lhs, op, rhs))
    }

    /// The rest of `lhs [NOT] BETWEEN lo AND hi`, the parser being after BETWEEN.
    fn between(&mut self, lhs: Operand, lt: &Token, negated: bool) -> Result<Node, FilterError> {
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
        Ok(Node::Between {
            field,
            lo,
            hi,
            negated,
        })
    }

    /// `ORDER BY member (, member)*`, the parser being at `ORDER`.
    fn order_by(&mut self) -> Result<Vec<OrderKey>, FilterError> {
        self.at += 1;
        if !self.keyword("BY") {
            return Err(self.end_error("expected BY after ORDER"));
        }
        self.at += 1;
        let mut keys = vec![self.order_key()?];
        while self.is(&Tok::Comma) {
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
        match self.schema.member(&path) {
            FieldRef::Comparable(_) => {}
            FieldRef::Composite => {
                return Err(err(
                    t.pos,
                    &t.text,
                    "cannot be ordered: ORDER BY takes members of primitive, string or \
                     enumeration types, not structs or sequences",
                ))
            }
            FieldRef::Missing { found } => return Err(err(t.pos, &t.text, missing(&path, found))),
        }
        self.at += 1;
        Ok(OrderKey {
            member: name.clone(),
            path,
        })
    }
}

/// The error of a comparison with no member on either side, at the name that is no
/// member if there is one.
fn no_member(lhs: &Operand, lt: &Token, rhs: &Operand, rt: &Token) -> FilterError {
    let is_name = |o: &Operand| matches!(o, Operand::Lit(Lit::Name(_)));
    let t = if is_name(lhs) { lt } else { rt };
    let msg = if is_name(lhs) || is_name(rhs) {
        "no such member"
    } else {
        "a comparison needs a member on one side"
    };
    err(t.pos, &t.text, msg)
}

/// Why a path whose first `found` segments exist names no member.
fn missing(path: &[PathSegment], found: usize) -> String {
    let Some(seg) = path.get(found) else {
        return "no such member".into();
    };
    if found == 0 {
        return "no such member".into();
    }
    let prefix = show_path(&path[..found]);
    match seg {
        PathSegment::Member(m) => format!("no such member: {prefix} has no member {m}"),
        PathSegment::Index(i) => format!("no such member: {prefix} has no element [{i}]"),
    }
}

/// `a.b[2]` from its segments.
fn show_path(path: &[PathSegment]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            PathSegment::Member(m) if s.is_empty() => s.push_str(m),
            PathSegment::Member(m) => {
                s.push('.');
                s.push_str(m);
            }
            PathSegment::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn is_keyword(s: &str) -> bool {
    ["AND", "OR", "NOT", "BETWEEN", "LIKE", "ORDER", "BY"]
        .iter()
        .any(|k| s.eq_ignore_ascii_case(k))
}

/// Splits `a.b[2].c` into member and index segments.
pub(super) fn path_of(name: &str, pos: usize) -> Result<Vec<PathSegment>, FilterError> {
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

/// Checks a literal against the member it is compared with (parameters are checked when
/// their values are set).
fn check_value(f: &Field, o: &Operand, t: &Token) -> Result<(), FilterError> {
    let Operand::Lit(l) = o else {
        return Ok(());
    };
    if fits(&f.kind, l) {
        return Ok(());
    }
    let what = match (l, &f.kind) {
        (Lit::Name(n), MemberKind::Enum(e)) if e.name.is_empty() => {
            format!(
                "no enumerator {} in the enumeration, and no such member",
                enumerator(n)
            )
        }
        (Lit::Name(n), MemberKind::Enum(e)) => {
            format!(
                "no enumerator {} of {}, and no such member",
                enumerator(n),
                e.name
            )
        }
        (Lit::Name(_), _) => "no such member or enumerator".to_string(),
        _ => format!(
            "cannot be compared with a member of kind {:?}",
            kind_name(&f.kind)
        ),
    };
    Err(err(t.pos, &t.text, what))
}

fn kind_name(k: &MemberKind) -> &'static str {
    match k {
        MemberKind::Bool => "boolean",
        MemberKind::Int | MemberKind::UInt => "integer",
        MemberKind::Float => "float",
        MemberKind::Char => "char",
        MemberKind::Str => "string",
        MemberKind::Enum(_) => "enumeration",
    }
}

/// True if the literal `l` can be compared with a member of `kind`: the pairs Fast DDS's
/// DDSSQL accepts (a boolean and an integer compare as 0 or 1 with it; a character and a
/// string as strings), the others being refused when the filter is created.
fn fits(kind: &MemberKind, l: &Lit) -> bool {
    match (kind, l) {
        (MemberKind::Bool, Lit::Bool(_) | Lit::Int(_)) => true,
        (MemberKind::Int | MemberKind::UInt, Lit::Int(_) | Lit::Float(_) | Lit::Bool(_)) => true,
        (MemberKind::Float, Lit::Int(_) | Lit::Float(_)) => true,
        (MemberKind::Str | MemberKind::Char, Lit::Str(_)) => true,
        (MemberKind::Enum(e), Lit::Name(n) | Lit::Str(n)) => e.rank(n).is_some(),
        (MemberKind::Enum(_), Lit::Int(_)) => true,
        _ => false,
    }
}
