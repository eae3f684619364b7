//! `halyard sub --filter`: the DDS SQL condition grammar (DDS 1.4 Annex B, as content filters
//! use it) evaluated on a decoded sample's JSON form.
//!
//! Why not `halyard::filter`: that parser checks member paths through `Reflect::field_kind`,
//! a function of a Rust type, which a type learnt at run time does not have. This one checks
//! paths against the [`DynamicType`] when the expression is parsed (so a bad expression fails
//! before subscribing, naming the token) and evaluates on the JSON form of each sample.
//!
//! Supported: `=`, `<>`, `!=`, `<`, `<=`, `>`, `>=`, `LIKE` (`%` any run, `_` one character),
//! `[NOT] BETWEEN a AND b`, `AND`, `OR`, `NOT`, parentheses; member paths (`pos.x`,
//! `items[2].y`), integer, float, 'string', TRUE/FALSE and enumerator literals (enumerators
//! compare by value). No `%n` parameters (a command line has no separate parameter list).
//! A comparison whose member is absent (index past the end, unset optional) is false.

use halyard::xtypes::dynamic::{EnumDesc, TypeNode};
use halyard::xtypes::{DynamicType, PrimitiveKind};
use serde_json::Value;
use std::cmp::Ordering;

/// Longest expression accepted.
const MAX_LEN: usize = 4096;
/// Deepest nesting of parentheses and NOTs.
const MAX_DEPTH: usize = 64;

/// A parsed filter.
#[derive(Debug, Clone)]
pub struct Expr(Node);

#[derive(Debug, Clone)]
enum Node {
    Or(Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Cmp(Operand, &'static str, Operand),
    Between(Operand, Operand, Operand),
    Like(Operand, String),
}

#[derive(Debug, Clone)]
enum Seg {
    Name(String),
    Index(usize),
}

/// The kind of a member a path names.
#[derive(Debug, Clone)]
enum Kind {
    Number,
    Text,
    Bool,
    Enum(EnumDesc),
}

#[derive(Debug, Clone)]
enum Operand {
    Path(Vec<Seg>, Kind),
    Num(f64),
    Str(String),
    Bool(bool),
    /// An identifier that names no member: an enumerator, resolved against the other side.
    Symbol(String, usize),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(f64),
    Str(String),
    Op(&'static str),
    LParen,
    RParen,
}

/// A scalar value for comparing.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Num(f64),
    Str(String),
    Bool(bool),
}

fn tokens(s: &str) -> Result<Vec<(Tok, usize)>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let start = i;
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'(' => {
                out.push((Tok::LParen, start));
                i += 1
            }
            b')' => {
                out.push((Tok::RParen, start));
                i += 1
            }
            b'\'' | b'`' => {
                let close = if c == b'`' { b'\'' } else { c };
                let end = s[i + 1..]
                    .find(close as char)
                    .ok_or_else(|| format!("at offset {start}: unterminated string"))?;
                out.push((Tok::Str(s[i + 1..i + 1 + end].to_string()), start));
                i += end + 2;
            }
            b'<' | b'>' | b'=' | b'!' => {
                let two = s.get(i..i + 2).unwrap_or("");
                let op = match two {
                    "<=" => "<=",
                    ">=" => ">=",
                    "<>" | "!=" => "<>",
                    _ => match c {
                        b'<' => "<",
                        b'>' => ">",
                        b'=' => "=",
                        _ => return Err(format!("at offset {start}: unexpected `!`")),
                    },
                };
                out.push((Tok::Op(op), start));
                i += if op.len() == 2 || two == "!=" { 2 } else { 1 };
            }
            b'0'..=b'9' | b'-' | b'+' | b'.' => {
                i += 1;
                while b.get(i).is_some_and(|x| {
                    x.is_ascii_alphanumeric()
                        || *x == b'.'
                        || *x == b'+'
                        || *x == b'-' && matches!(b.get(i - 1), Some(b'e' | b'E'))
                }) {
                    i += 1;
                }
                let text = &s[start..i];
                let n = if let Some(h) = text.strip_prefix("0x").or(text.strip_prefix("0X")) {
                    i64::from_str_radix(h, 16).ok().map(|x| x as f64)
                } else {
                    text.parse::<f64>().ok()
                };
                out.push((
                    Tok::Num(
                        n.ok_or_else(|| format!("at offset {start}, `{text}`: not a number"))?,
                    ),
                    start,
                ));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while b.get(i).is_some_and(|x| {
                    x.is_ascii_alphanumeric() || matches!(x, b'_' | b'.' | b'[' | b']' | b':')
                }) {
                    i += 1;
                }
                out.push((Tok::Ident(s[start..i].to_string()), start));
            }
            _ => {
                return Err(format!(
                    "at offset {start}, `{}`: unexpected character",
                    s[start..].chars().next().unwrap_or('?')
                ))
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    ty: &'a DynamicType,
    len: usize,
}

fn keyword(t: Option<&Tok>, k: &str) -> bool {
    matches!(t, Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(k))
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn offset(&self) -> usize {
        self.toks.get(self.pos).map_or(self.len, |t| t.1)
    }

    fn err(&self, msg: &str) -> String {
        match self.toks.get(self.pos) {
            Some((t, at)) => format!("at offset {at}, `{}`: {msg}", show(t)),
            None => format!("at offset {}: {msg}", self.len),
        }
    }

    fn or(&mut self, depth: usize) -> Result<Node, String> {
        let mut n = self.and(depth)?;
        while keyword(self.peek(), "OR") {
            self.pos += 1;
            n = Node::Or(Box::new(n), Box::new(self.and(depth)?));
        }
        Ok(n)
    }

    fn and(&mut self, depth: usize) -> Result<Node, String> {
        let mut n = self.not(depth)?;
        while keyword(self.peek(), "AND") {
            self.pos += 1;
            n = Node::And(Box::new(n), Box::new(self.not(depth)?));
        }
        Ok(n)
    }

    fn not(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        if keyword(self.peek(), "NOT") {
            self.pos += 1;
            return Ok(Node::Not(Box::new(self.not(depth + 1)?)));
        }
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let n = self.or(depth + 1)?;
            if self.peek() != Some(&Tok::RParen) {
                return Err(self.err("expected `)`"));
            }
            self.pos += 1;
            return Ok(n);
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Node, String> {
        let left = self.operand()?;
        let negate = keyword(self.peek(), "NOT");
        if negate {
            self.pos += 1;
        }
        let n = if keyword(self.peek(), "BETWEEN") {
            self.pos += 1;
            let lo = self.operand()?;
            if !keyword(self.peek(), "AND") {
                return Err(self.err("expected AND of BETWEEN"));
            }
            self.pos += 1;
            let hi = self.operand()?;
            let (left, lo) = resolve(left, lo)?;
            let (left, hi) = resolve(left, hi)?;
            Node::Between(left, lo, hi)
        } else if keyword(self.peek(), "LIKE") {
            self.pos += 1;
            let at = self.offset();
            match self.operand()? {
                Operand::Str(p) if matches!(left, Operand::Path(_, Kind::Text)) => {
                    Node::Like(left, p)
                }
                _ => {
                    return Err(format!(
                        "at offset {at}: LIKE compares a string member with a 'pattern'"
                    ))
                }
            }
        } else if negate {
            return Err(self.err("expected BETWEEN or LIKE after NOT"));
        } else {
            let op = match self.peek() {
                Some(Tok::Op(op)) => *op,
                _ => return Err(self.err("expected a comparison operator")),
            };
            self.pos += 1;
            let right = self.operand()?;
            if !matches!(left, Operand::Path(..)) && !matches!(right, Operand::Path(..)) {
                if let Operand::Symbol(name, at) = match (&left, &right) {
                    (Operand::Symbol(..), _) => &left,
                    _ => &right,
                } {
                    return Err(format!("at offset {at}, `{name}`: no such member"));
                }
                return Err(self.err("a comparison needs a member on one side"));
            }
            let (left, right) = resolve(left, right)?;
            Node::Cmp(left, op, right)
        };
        Ok(if negate { Node::Not(Box::new(n)) } else { n })
    }

    fn operand(&mut self) -> Result<Operand, String> {
        let at = self.offset();
        let t = self
            .peek()
            .cloned()
            .ok_or_else(|| self.err("unexpected end"))?;
        self.pos += 1;
        Ok(match t {
            Tok::Num(n) => Operand::Num(n),
            Tok::Str(s) => Operand::Str(s),
            Tok::Ident(s) if s.eq_ignore_ascii_case("TRUE") => Operand::Bool(true),
            Tok::Ident(s) if s.eq_ignore_ascii_case("FALSE") => Operand::Bool(false),
            Tok::Ident(s) => match path(&s, self.ty, at)? {
                Some(p) => p,
                None => Operand::Symbol(s, at),
            },
            other => {
                self.pos -= 1;
                return Err(format!(
                    "at offset {at}, `{}`: expected a member or a value",
                    show(&other)
                ));
            }
        })
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => s.clone(),
        Tok::Num(n) => n.to_string(),
        Tok::Str(s) => format!("'{s}'"),
        Tok::Op(o) => (*o).to_string(),
        Tok::LParen => "(".into(),
        Tok::RParen => ")".into(),
    }
}

/// Resolves an enumerator symbol against an enum member on the other side.
fn resolve(a: Operand, b: Operand) -> Result<(Operand, Operand), String> {
    let fix = |sym: &Operand, other: &Operand| -> Result<Option<Operand>, String> {
        let Operand::Symbol(name, at) = sym else {
            return Ok(None);
        };
        match other {
            Operand::Path(_, Kind::Enum(e)) => {
                let short = name.rsplit("::").next().unwrap_or(name);
                e.by_name(short)
                    .map(|l| Some(Operand::Num(f64::from(l.value))))
                    .ok_or_else(|| format!("at offset {at}, `{name}`: no enumerator of {}", e.name))
            }
            _ => Err(format!("at offset {at}, `{name}`: no such member")),
        }
    };
    let a2 = fix(&a, &b)?.unwrap_or(a);
    let b2 = fix(&b, &a2)?.unwrap_or(b);
    Ok((a2, b2))
}

/// The member path `text` names in `ty`: `None` if its first name is no member (a symbol).
fn path(text: &str, ty: &DynamicType, at: usize) -> Result<Option<Operand>, String> {
    let mut segs = Vec::new();
    for part in text.split('.') {
        let (name, rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if name.is_empty() {
            return Err(format!("at offset {at}, `{text}`: bad member path"));
        }
        segs.push(Seg::Name(name.to_string()));
        let mut rest = rest;
        while !rest.is_empty() {
            let (idx, after) = rest
                .split_once(']')
                .ok_or_else(|| format!("at offset {at}, `{text}`: missing `]`"))?;
            let i = idx
                .parse()
                .map_err(|_| format!("at offset {at}, `{text}`: bad index `{idx}`"))?;
            segs.push(Seg::Index(i));
            rest = after.strip_prefix('[').unwrap_or(after);
            if !after.is_empty() && !after.starts_with('[') {
                return Err(format!("at offset {at}, `{text}`: bad member path"));
            }
        }
    }
    let mut t = ty.resolved().clone();
    for (n, seg) in segs.iter().enumerate() {
        let next = match (seg, t.resolved().node()) {
            (Seg::Name(name), TypeNode::Struct(s)) => match s.member(name) {
                Some((_, m)) => m.ty.clone(),
                None if n == 0 => return Ok(None),
                None => {
                    return Err(format!(
                        "at offset {at}, `{text}`: {} has no member {name}",
                        s.name
                    ))
                }
            },
            (Seg::Index(_), TypeNode::Sequence { element, .. })
            | (Seg::Index(_), TypeNode::Array { element, .. }) => element.clone(),
            _ if n == 0 => return Ok(None),
            _ => return Err(format!("at offset {at}, `{text}`: no such member")),
        };
        t = next.resolved().clone();
    }
    let kind = match t.resolved().node() {
        TypeNode::Primitive(PrimitiveKind::Boolean) => Kind::Bool,
        TypeNode::Primitive(PrimitiveKind::Char8 | PrimitiveKind::Char16) => Kind::Text,
        TypeNode::Primitive(_) => Kind::Number,
        TypeNode::String8 { .. } | TypeNode::String16 { .. } => Kind::Text,
        TypeNode::Enum(e) => Kind::Enum(e.clone()),
        _ => {
            return Err(format!(
                "at offset {at}, `{text}`: not a comparable member (a struct, collection or union)"
            ))
        }
    };
    Ok(Some(Operand::Path(segs, kind)))
}

impl Expr {
    /// Parses `text` against `ty`; the error names the offending token and its offset.
    pub fn parse(text: &str, ty: &DynamicType) -> Result<Expr, String> {
        if text.len() > MAX_LEN {
            return Err(format!("longer than {MAX_LEN} bytes"));
        }
        let mut p = Parser {
            toks: tokens(text)?,
            pos: 0,
            ty,
            len: text.len(),
        };
        if p.toks.is_empty() {
            return Err("empty expression".into());
        }
        let n = p.or(0)?;
        if p.pos < p.toks.len() {
            return Err(p.err("unexpected token"));
        }
        Ok(Expr(n))
    }

    /// True when the sample (its JSON form) satisfies the expression.
    pub fn matches(&self, sample: &Value) -> bool {
        eval(&self.0, sample)
    }
}

fn eval(n: &Node, v: &Value) -> bool {
    match n {
        Node::Or(a, b) => eval(a, v) || eval(b, v),
        Node::And(a, b) => eval(a, v) && eval(b, v),
        Node::Not(a) => !eval(a, v),
        Node::Cmp(a, op, b) => match compare(value(a, v), value(b, v)) {
            Some(o) => match *op {
                "=" => o == Ordering::Equal,
                "<>" => o != Ordering::Equal,
                "<" => o == Ordering::Less,
                "<=" => o != Ordering::Greater,
                ">" => o == Ordering::Greater,
                ">=" => o != Ordering::Less,
                _ => false,
            },
            None => false,
        },
        Node::Between(x, lo, hi) => {
            let x = value(x, v);
            compare(x.clone(), value(lo, v)).is_some_and(|o| o != Ordering::Less)
                && compare(x, value(hi, v)).is_some_and(|o| o != Ordering::Greater)
        }
        Node::Like(x, pattern) => match value(x, v) {
            Some(Scalar::Str(s)) => like(pattern, &s),
            _ => false,
        },
    }
}

fn value(o: &Operand, sample: &Value) -> Option<Scalar> {
    match o {
        Operand::Num(n) => Some(Scalar::Num(*n)),
        Operand::Str(s) => Some(Scalar::Str(s.clone())),
        Operand::Bool(b) => Some(Scalar::Bool(*b)),
        Operand::Symbol(..) => None,
        Operand::Path(segs, kind) => {
            let mut j = sample;
            for s in segs {
                j = match s {
                    Seg::Name(n) => j.get(n)?,
                    Seg::Index(i) => j.get(*i)?,
                };
            }
            match (kind, j) {
                (Kind::Enum(e), Value::String(name)) => {
                    e.by_name(name).map(|l| Scalar::Num(f64::from(l.value)))
                }
                (_, Value::Number(n)) => n.as_f64().map(Scalar::Num),
                (_, Value::String(s)) => Some(Scalar::Str(s.clone())),
                (_, Value::Bool(b)) => Some(Scalar::Bool(*b)),
                _ => None,
            }
        }
    }
}

fn compare(a: Option<Scalar>, b: Option<Scalar>) -> Option<Ordering> {
    match (a?, b?) {
        (Scalar::Num(x), Scalar::Num(y)) => x.partial_cmp(&y),
        (Scalar::Str(x), Scalar::Str(y)) => Some(x.cmp(&y)),
        (Scalar::Bool(x), Scalar::Bool(y)) => Some(x.cmp(&y)),
        _ => None,
    }
}

/// SQL LIKE: `%` any run of characters, `_` exactly one.
fn like(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        match p.get(i) {
            Some('%') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '_' || Some(&c) == t.get(j) => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p.get(i..).unwrap_or_default().iter().all(|&c| c == '%')
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard::cdr::Extensibility;
    use halyard::xtypes::dynamic::{EnumLiteralDesc, MemberDesc, StructDesc};
    use serde_json::json;

    fn member(name: &str, ty: TypeNode) -> MemberDesc {
        MemberDesc {
            name: name.into(),
            id: 0,
            ty: DynamicType::new(ty),
            key: false,
            optional: false,
            must_understand: false,
            external: false,
        }
    }

    fn ty() -> DynamicType {
        let color = TypeNode::Enum(EnumDesc {
            name: "M::Color".into(),
            bit_bound: 32,
            literals: ["RED", "GREEN", "BLUE"]
                .iter()
                .enumerate()
                .map(|(i, n)| EnumLiteralDesc {
                    name: (*n).into(),
                    value: i as i32,
                    default: i == 0,
                })
                .collect(),
        });
        let inner = TypeNode::Struct(StructDesc {
            name: "M::P".into(),
            extensibility: Extensibility::Final,
            base: None,
            own_start: 0,
            names_known: true,
            members: vec![member("x", TypeNode::Primitive(PrimitiveKind::Int32))],
            nested: true,
        });
        DynamicType::new(TypeNode::Struct(StructDesc {
            name: "M::T".into(),
            extensibility: Extensibility::Final,
            base: None,
            own_start: 0,
            names_known: true,
            members: vec![
                member("id", TypeNode::Primitive(PrimitiveKind::Int32)),
                member("name", TypeNode::String8 { bound: 0 }),
                member("color", color),
                member("pos", inner.clone()),
                member(
                    "pts",
                    TypeNode::Sequence {
                        element: DynamicType::new(inner),
                        bound: 0,
                    },
                ),
            ],
            nested: false,
        }))
    }

    #[test]
    fn evaluates_on_json_samples() {
        let t = ty();
        let s = json!({"id": 5, "name": "alpha", "color": "BLUE", "pos": {"x": -2}, "pts": [{"x": 1}, {"x": 9}]});
        let yes = [
            "id = 5",
            "id > 4 AND name LIKE 'al%'",
            "color = BLUE",
            "color > GREEN",
            "pos.x < 0",
            "pts[1].x BETWEEN 5 AND 10",
            "NOT (id <> 5)",
            "name LIKE '_lph_'",
            "id = 1 OR name = 'alpha'",
            "id NOT BETWEEN 6 AND 9",
        ];
        for e in yes {
            assert!(Expr::parse(e, &t).unwrap().matches(&s), "{e}");
        }
        let no = ["id < 5", "pts[2].x = 1", "name LIKE 'b%'", "color = RED"];
        for e in no {
            assert!(!Expr::parse(e, &t).unwrap().matches(&s), "{e}");
        }
    }

    #[test]
    fn bad_expressions_name_the_problem() {
        let t = ty();
        for (e, needle) in [
            ("nosuch = 1", "no such member"),
            ("pos.y = 1", "no member y"),
            ("pos = 1", "not a comparable member"),
            ("id = ", "unexpected end"),
            ("id 5", "comparison operator"),
            ("color = PURPLE", "no enumerator"),
            ("(id = 1", "expected `)`"),
            ("name = 'x", "unterminated"),
            ("id = 1 id", "unexpected token"),
        ] {
            let err = Expr::parse(e, &t).unwrap_err();
            assert!(err.contains(needle), "{e}: {err}");
        }
    }
}
