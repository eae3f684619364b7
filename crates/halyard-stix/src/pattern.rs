//! The STIX 2.1 Patterning language (STIX 2.1 §9): a lexer and a recursive-descent parser.
//!
//! Precedence follows the grammar of §9: inside brackets `AND` binds tighter than `OR`;
//! between observations `AND` binds tighter than `OR`, which binds tighter than
//! `FOLLOWEDBY`; qualifiers (`WITHIN`, `REPEATS`, `START`/`STOP`) are postfix on one
//! observation or one parenthesised group. Keywords are upper case, booleans lower case.
//!
//! Chains of the same operator are kept flat (`And(vec![..])`) rather than as binary trees,
//! so the depth of the tree, and of the parser's recursion, grows only with parentheses and
//! brackets; that nesting is limited to [`MAX_NESTING`] and refused with an error beyond.
//! Nothing here panics on any input: every position is read with `get`, and each failure
//! carries the byte offset where the parser stopped and what it expected there.

use crate::time;
use std::fmt;

/// The deepest nesting of parentheses and brackets a pattern may have.
pub const MAX_NESTING: usize = 64;

/// A parsed pattern: one observation expression (STIX 2.1 §9.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// The top-level observation expression.
    pub root: ObservationExpr,
}

/// An observation expression (STIX 2.1 §9.4), with operator chains kept flat.
#[derive(Clone, Debug, PartialEq)]
pub enum ObservationExpr {
    /// `[ comparison expression ]`: one observation.
    Observation(ComparisonExpr),
    /// `A AND B AND ...`: all observations match.
    And(Vec<ObservationExpr>),
    /// `A OR B OR ...`: at least one observation matches.
    Or(Vec<ObservationExpr>),
    /// `A FOLLOWEDBY B ...`: the observations match in this order in time.
    FollowedBy(Vec<ObservationExpr>),
    /// An observation or parenthesised group followed by qualifiers, in order.
    Qualified {
        /// The expression qualified.
        expr: Box<ObservationExpr>,
        /// The qualifiers, in the order written.
        qualifiers: Vec<Qualifier>,
    },
}

/// A pattern qualifier (STIX 2.1 §9.5).
#[derive(Clone, Debug, PartialEq)]
pub enum Qualifier {
    /// `WITHIN n SECONDS` (positive, integer or decimal).
    Within(f64),
    /// `REPEATS n TIMES` (positive integer).
    Repeats(u64),
    /// `START t'..' STOP t'..'`, the timestamps as written.
    StartStop {
        /// The start timestamp (inclusive).
        start: String,
        /// The stop timestamp (exclusive).
        stop: String,
    },
}

/// A comparison expression inside one observation (STIX 2.1 §9.3).
#[derive(Clone, Debug, PartialEq)]
pub enum ComparisonExpr {
    /// `a AND b AND ...`.
    And(Vec<ComparisonExpr>),
    /// `a OR b OR ...`.
    Or(Vec<ComparisonExpr>),
    /// `EXISTS object:path`.
    Exists(ObjectPath),
    /// `object:path [NOT] op value`.
    Compare(Comparison),
}

/// One comparison: an object path, an operator and a literal.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The left-hand object path.
    pub path: ObjectPath,
    /// Whether `NOT` precedes the operator.
    pub negated: bool,
    /// The operator.
    pub operator: Operator,
    /// The right-hand literal (a [`Literal::Set`] for `IN`).
    pub value: Literal,
}

/// A comparison operator (STIX 2.1 §9.3, table of comparison operators).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `=` (or `==`).
    Eq,
    /// `!=` (or `<>`).
    Ne,
    /// `>`.
    Gt,
    /// `<`.
    Lt,
    /// `>=`.
    Ge,
    /// `<=`.
    Le,
    /// `IN ( ... )`.
    In,
    /// `LIKE` (SQL-style wildcards).
    Like,
    /// `MATCHES` (PCRE regular expression).
    Matches,
    /// `ISSUBSET` (CIDR containment).
    IsSubset,
    /// `ISSUPERSET` (CIDR containment).
    IsSuperset,
}

/// An object path (STIX 2.1 §9.3.1): `type:property`, then `.property`, `[n]` or `[*]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectPath {
    /// The SCO type (`file`, `network-traffic`, `x-custom` ...).
    pub object_type: String,
    /// The property steps after the colon, the first always a property.
    pub steps: Vec<PathStep>,
}

/// One step of an object path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// A property or dictionary key (`hashes`, `'SHA-256'`).
    Property(String),
    /// A list index, `[n]`, from zero.
    Index(u64),
    /// Any list element, `[*]`.
    AnyIndex,
}

/// A literal value (STIX 2.1 §9.3, literal types).
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `'text'`, escapes resolved.
    String(String),
    /// An integer.
    Int(i64),
    /// A decimal number.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `t'2016-01-01T00:00:00Z'`, the timestamp as written.
    Timestamp(String),
    /// `h'ff00'`, decoded.
    Hex(Vec<u8>),
    /// `b'base64'`, the base64 text as written.
    Binary(String),
    /// `( a, b, ... )` for `IN`.
    Set(Vec<Literal>),
}

/// Why a pattern was refused: where (byte offset) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError {
    /// Byte offset into the pattern where the problem was found.
    pub offset: usize,
    /// What is wrong or what was expected there.
    pub message: String,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at offset {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for PatternError {}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, PatternError> {
    Err(PatternError {
        offset,
        message: message.into(),
    })
}

/// Parses a STIX 2.1 pattern.
pub fn parse(pattern: &str) -> Result<Pattern, PatternError> {
    let tokens = lex(pattern)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let root = parser.followed_by()?;
    match parser.peek() {
        Tok::Eof => Ok(Pattern { root }),
        other => err(
            parser.offset(),
            format!("expected AND, OR, FOLLOWEDBY, a qualifier or the end, found {other}"),
        ),
    }
}

/// Every string literal of the pattern (inside sets too), in order.
pub fn string_literals(p: &Pattern) -> Vec<&str> {
    let mut out = Vec::new();
    for c in p.comparisons() {
        collect_strings(&c.value, &mut out);
    }
    out
}

fn collect_strings<'a>(lit: &'a Literal, out: &mut Vec<&'a str>) {
    match lit {
        Literal::String(s) => out.push(s),
        Literal::Set(items) => items.iter().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}

impl Pattern {
    /// Every comparison of the pattern (not `EXISTS` tests), in order.
    pub fn comparisons(&self) -> Vec<&Comparison> {
        let mut out = Vec::new();
        self.walk(&mut |c| {
            if let ComparisonExpr::Compare(cmp) = c {
                out.push(cmp);
            }
        });
        out
    }

    /// The object types the pattern refers to, each once, in order of appearance.
    pub fn object_types(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        self.walk(&mut |c| {
            let path = match c {
                ComparisonExpr::Compare(cmp) => &cmp.path,
                ComparisonExpr::Exists(path) => path,
                _ => return,
            };
            if !out.contains(&path.object_type.as_str()) {
                out.push(&path.object_type);
            }
        });
        out
    }

    /// Calls `f` on every leaf comparison expression (`Compare` and `Exists`).
    fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a ComparisonExpr)) {
        walk_observation(&self.root, f);
    }
}

fn walk_observation<'a>(o: &'a ObservationExpr, f: &mut dyn FnMut(&'a ComparisonExpr)) {
    match o {
        ObservationExpr::Observation(c) => walk_comparison(c, f),
        ObservationExpr::And(v) | ObservationExpr::Or(v) | ObservationExpr::FollowedBy(v) => {
            v.iter().for_each(|o| walk_observation(o, f))
        }
        ObservationExpr::Qualified { expr, .. } => walk_observation(expr, f),
    }
}

fn walk_comparison<'a>(c: &'a ComparisonExpr, f: &mut dyn FnMut(&'a ComparisonExpr)) {
    match c {
        ComparisonExpr::And(v) | ComparisonExpr::Or(v) => {
            v.iter().for_each(|c| walk_comparison(c, f))
        }
        leaf => f(leaf),
    }
}

// ---------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    LBrack,
    RBrack,
    LParen,
    RParen,
    Colon,
    Dot,
    Comma,
    Star,
    Op(Operator),
    Word(String),
    Str(String),
    Ts(String),
    Hex(Vec<u8>),
    Bin(String),
    Int(i64),
    Float(f64),
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::LBrack => f.write_str("'['"),
            Tok::RBrack => f.write_str("']'"),
            Tok::LParen => f.write_str("'('"),
            Tok::RParen => f.write_str("')'"),
            Tok::Colon => f.write_str("':'"),
            Tok::Dot => f.write_str("'.'"),
            Tok::Comma => f.write_str("','"),
            Tok::Star => f.write_str("'*'"),
            Tok::Op(op) => write!(f, "operator {op:?}"),
            Tok::Word(w) => write!(f, "'{w}'"),
            Tok::Str(_) => f.write_str("a string literal"),
            Tok::Ts(_) => f.write_str("a timestamp literal"),
            Tok::Hex(_) => f.write_str("a hex literal"),
            Tok::Bin(_) => f.write_str("a binary literal"),
            Tok::Int(_) | Tok::Float(_) => f.write_str("a number"),
            Tok::Eof => f.write_str("the end of the pattern"),
        }
    }
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    at: usize,
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, PatternError> {
    let mut lx = Lexer {
        src,
        bytes: src.as_bytes(),
        at: 0,
    };
    let mut out = Vec::new();
    loop {
        while lx.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            lx.at += 1;
        }
        let start = lx.at;
        let tok = lx.token()?;
        let end = tok == Tok::Eof;
        out.push((tok, start));
        if end {
            return Ok(out);
        }
    }
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.at + ahead).copied()
    }

    fn token(&mut self) -> Result<Tok, PatternError> {
        let Some(b) = self.peek() else {
            return Ok(Tok::Eof);
        };
        let single = match b {
            b'[' => Some(Tok::LBrack),
            b']' => Some(Tok::RBrack),
            b'(' => Some(Tok::LParen),
            b')' => Some(Tok::RParen),
            b':' => Some(Tok::Colon),
            b',' => Some(Tok::Comma),
            b'*' => Some(Tok::Star),
            _ => None,
        };
        if let Some(tok) = single {
            self.at += 1;
            return Ok(tok);
        }
        match b {
            b'=' | b'!' | b'<' | b'>' => self.operator(),
            b'\'' => self.string().map(Tok::Str),
            b'.' if !self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) => {
                self.at += 1;
                Ok(Tok::Dot)
            }
            b'0'..=b'9' | b'.' | b'-' | b'+' => self.number(),
            b't' | b'h' | b'b' if self.peek_at(1) == Some(b'\'') => self.prefixed(b),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => Ok(self.word()),
            _ => {
                let shown = self.src.get(self.at..).and_then(|s| s.chars().next());
                err(
                    self.at,
                    format!("unexpected character {:?}", shown.unwrap_or('?')),
                )
            }
        }
    }

    fn operator(&mut self) -> Result<Tok, PatternError> {
        let two = (self.peek(), self.peek_at(1));
        let (op, len) = match two {
            (Some(b'='), Some(b'=')) => (Operator::Eq, 2),
            (Some(b'='), _) => (Operator::Eq, 1),
            (Some(b'!'), Some(b'=')) => (Operator::Ne, 2),
            (Some(b'<'), Some(b'>')) => (Operator::Ne, 2),
            (Some(b'<'), Some(b'=')) => (Operator::Le, 2),
            (Some(b'<'), _) => (Operator::Lt, 1),
            (Some(b'>'), Some(b'=')) => (Operator::Ge, 2),
            (Some(b'>'), _) => (Operator::Gt, 1),
            _ => return err(self.at, "expected '!=' after '!'"),
        };
        self.at += len;
        Ok(Tok::Op(op))
    }

    fn word(&mut self) -> Tok {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        {
            self.at += 1;
        }
        Tok::Word(self.src.get(start..self.at).unwrap_or_default().to_string())
    }

    /// A quoted string after `'`: only `\'` and `\\` are escapes (STIX 2.1 §9.3).
    fn string(&mut self) -> Result<String, PatternError> {
        let open = self.at;
        self.at += 1;
        let mut out = String::new();
        let mut run = self.at;
        loop {
            match self.peek() {
                None => return err(open, "unterminated string literal"),
                Some(b'\'') => {
                    out.push_str(self.src.get(run..self.at).unwrap_or_default());
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(self.src.get(run..self.at).unwrap_or_default());
                    match self.peek_at(1) {
                        Some(c @ (b'\'' | b'\\')) => out.push(char::from(c)),
                        _ => {
                            return err(
                                self.at,
                                "invalid escape in string literal: only \\' and \\\\ are allowed",
                            )
                        }
                    }
                    self.at += 2;
                    run = self.at;
                }
                Some(_) => self.at += 1,
            }
        }
    }

    fn prefixed(&mut self, prefix: u8) -> Result<Tok, PatternError> {
        let start = self.at;
        self.at += 1;
        let body = self.string()?;
        match prefix {
            b't' if time::is_stix_timestamp(&body) => Ok(Tok::Ts(body)),
            b't' => err(
                start,
                format!("timestamp literal {body:?} is not of the form YYYY-MM-DDTHH:MM:SS[.s+]Z"),
            ),
            b'h' => decode_hex(&body).map(Tok::Hex).ok_or(PatternError {
                offset: start,
                message: "hex literal must hold an even number of hex digits".into(),
            }),
            _ if is_base64(&body) => Ok(Tok::Bin(body)),
            _ => err(start, "binary literal is not valid base64"),
        }
    }

    fn number(&mut self) -> Result<Tok, PatternError> {
        let start = self.at;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.at += 1;
        }
        let int_start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let int_digits = self.at - int_start;
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.at += 1;
            let frac_start = self.at;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.at += 1;
            }
            if self.at == frac_start {
                return err(self.at, "expected digits after the decimal point");
            }
            is_float = true;
        } else if int_digits == 0 {
            return err(start, "expected a number after the sign");
        }
        let text = self.src.get(start..self.at).unwrap_or_default();
        let text = text.strip_prefix('+').unwrap_or(text);
        if is_float {
            text.parse().map(Tok::Float).map_err(|_| PatternError {
                offset: start,
                message: "invalid number".into(),
            })
        } else {
            text.parse().map(Tok::Int).map_err(|_| PatternError {
                offset: start,
                message: "integer out of the 64-bit range".into(),
            })
        }
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|pair| {
            let hi = char::from(*pair.first()?).to_digit(16)?;
            let lo = char::from(*pair.get(1)?).to_digit(16)?;
            u8::try_from(hi * 16 + lo).ok()
        })
        .collect()
}

/// Whether `s` is standard base64 with padding (RFC 4648 §4).
pub(crate) fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(4) {
        return false;
    }
    let body = s.trim_end_matches('=');
    let pad = b.len() - body.len();
    pad <= 2
        && body
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/')
}

// ---------------------------------------------------------------------------------------
// Parser

struct Parser {
    tokens: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

const QUALIFIERS: [&str; 3] = ["WITHIN", "REPEATS", "START"];

impl Parser {
    fn peek(&self) -> &Tok {
        self.tokens
            .get(self.pos)
            .map(|(t, _)| t)
            .unwrap_or(&Tok::Eof)
    }

    fn offset(&self) -> usize {
        self.tokens
            .get(self.pos)
            .or(self.tokens.last())
            .map_or(0, |(_, o)| *o)
    }

    fn next(&mut self) -> Tok {
        let tok = self.peek().clone();
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        tok
    }

    fn at_word(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Word(w) if w == word)
    }

    fn expect(&mut self, want: Tok, what: &str) -> Result<(), PatternError> {
        if *self.peek() == want {
            self.pos += 1;
            return Ok(());
        }
        err(
            self.offset(),
            format!("expected {what}, found {}", self.peek()),
        )
    }

    fn expect_word(&mut self, word: &str) -> Result<(), PatternError> {
        if self.at_word(word) {
            self.pos += 1;
            return Ok(());
        }
        err(
            self.offset(),
            format!("expected {word}, found {}", self.peek()),
        )
    }

    fn enter(&mut self) -> Result<(), PatternError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return err(
                self.offset(),
                format!("brackets and parentheses nested deeper than {MAX_NESTING}"),
            );
        }
        Ok(())
    }

    fn followed_by(&mut self) -> Result<ObservationExpr, PatternError> {
        let first = self.obs_or()?;
        let mut items = vec![first];
        while self.at_word("FOLLOWEDBY") {
            self.pos += 1;
            items.push(self.obs_or()?);
        }
        Ok(flatten(items, ObservationExpr::FollowedBy))
    }

    fn obs_or(&mut self) -> Result<ObservationExpr, PatternError> {
        let mut items = vec![self.obs_and()?];
        while self.at_word("OR") {
            self.pos += 1;
            items.push(self.obs_and()?);
        }
        Ok(flatten(items, ObservationExpr::Or))
    }

    fn obs_and(&mut self) -> Result<ObservationExpr, PatternError> {
        let mut items = vec![self.obs_qualified()?];
        while self.at_word("AND") {
            self.pos += 1;
            items.push(self.obs_qualified()?);
        }
        Ok(flatten(items, ObservationExpr::And))
    }

    fn obs_qualified(&mut self) -> Result<ObservationExpr, PatternError> {
        let expr = self.obs_primary()?;
        let mut qualifiers = Vec::new();
        while QUALIFIERS.iter().any(|q| self.at_word(q)) {
            qualifiers.push(self.qualifier()?);
        }
        if qualifiers.is_empty() {
            return Ok(expr);
        }
        Ok(ObservationExpr::Qualified {
            expr: Box::new(expr),
            qualifiers,
        })
    }

    fn obs_primary(&mut self) -> Result<ObservationExpr, PatternError> {
        match self.peek() {
            Tok::LBrack => {
                self.enter()?;
                self.pos += 1;
                let inner = self.cmp_or()?;
                self.expect(Tok::RBrack, "']' closing the observation")?;
                self.depth -= 1;
                Ok(ObservationExpr::Observation(inner))
            }
            Tok::LParen => {
                self.enter()?;
                self.pos += 1;
                let inner = self.followed_by()?;
                self.expect(Tok::RParen, "')' closing the observation group")?;
                self.depth -= 1;
                Ok(inner)
            }
            other => err(
                self.offset(),
                format!("expected '[' or '(' to start an observation, found {other}"),
            ),
        }
    }

    fn qualifier(&mut self) -> Result<Qualifier, PatternError> {
        let offset = self.offset();
        match self.next() {
            Tok::Word(w) if w == "WITHIN" => {
                let seconds = match self.next() {
                    Tok::Int(n) if n > 0 => n as f64,
                    Tok::Float(x) if x > 0.0 && x.is_finite() => x,
                    _ => return err(offset, "WITHIN needs a positive number of seconds"),
                };
                self.expect_word("SECONDS")?;
                Ok(Qualifier::Within(seconds))
            }
            Tok::Word(w) if w == "REPEATS" => {
                let times = match self.next() {
                    Tok::Int(n) if n > 0 => n as u64,
                    _ => return err(offset, "REPEATS needs a positive integer"),
                };
                self.expect_word("TIMES")?;
                Ok(Qualifier::Repeats(times))
            }
            _ => {
                let start = self.timestamp("START")?;
                self.expect_word("STOP")?;
                let stop = self.timestamp("STOP")?;
                Ok(Qualifier::StartStop { start, stop })
            }
        }
    }

    fn timestamp(&mut self, after: &str) -> Result<String, PatternError> {
        let offset = self.offset();
        match self.next() {
            Tok::Ts(t) => Ok(t),
            other => err(
                offset,
                format!("expected a timestamp literal t'...' after {after}, found {other}"),
            ),
        }
    }

    fn cmp_or(&mut self) -> Result<ComparisonExpr, PatternError> {
        let mut items = vec![self.cmp_and()?];
        while self.at_word("OR") {
            self.pos += 1;
            items.push(self.cmp_and()?);
        }
        Ok(flatten(items, ComparisonExpr::Or))
    }

    fn cmp_and(&mut self) -> Result<ComparisonExpr, PatternError> {
        let mut items = vec![self.cmp_test()?];
        while self.at_word("AND") {
            self.pos += 1;
            items.push(self.cmp_test()?);
        }
        Ok(flatten(items, ComparisonExpr::And))
    }

    fn cmp_test(&mut self) -> Result<ComparisonExpr, PatternError> {
        if *self.peek() == Tok::LParen {
            self.enter()?;
            self.pos += 1;
            let inner = self.cmp_or()?;
            self.expect(Tok::RParen, "')' closing the comparison group")?;
            self.depth -= 1;
            return Ok(inner);
        }
        if self.at_word("EXISTS") {
            self.pos += 1;
            return Ok(ComparisonExpr::Exists(self.object_path()?));
        }
        let path = self.object_path()?;
        let negated = self.at_word("NOT");
        if negated {
            self.pos += 1;
        }
        let operator = self.operator()?;
        let value = self.operand(operator)?;
        Ok(ComparisonExpr::Compare(Comparison {
            path,
            negated,
            operator,
            value,
        }))
    }

    fn operator(&mut self) -> Result<Operator, PatternError> {
        let offset = self.offset();
        let op = match self.next() {
            Tok::Op(op) => op,
            Tok::Word(w) => match w.as_str() {
                "IN" => Operator::In,
                "LIKE" => Operator::Like,
                "MATCHES" => Operator::Matches,
                "ISSUBSET" => Operator::IsSubset,
                "ISSUPERSET" => Operator::IsSuperset,
                _ => {
                    return err(
                        offset,
                        format!("expected a comparison operator, found '{w}'"),
                    )
                }
            },
            other => {
                return err(
                    offset,
                    format!("expected a comparison operator, found {other}"),
                )
            }
        };
        Ok(op)
    }

    /// The right-hand side, of the literal kinds the grammar allows for `op`.
    fn operand(&mut self, op: Operator) -> Result<Literal, PatternError> {
        let offset = self.offset();
        match op {
            Operator::In => self.set(),
            Operator::Like | Operator::Matches | Operator::IsSubset | Operator::IsSuperset => {
                match self.next() {
                    Tok::Str(s) => Ok(Literal::String(s)),
                    other => err(
                        offset,
                        format!("expected a string literal after {op:?}, found {other}"),
                    ),
                }
            }
            Operator::Eq | Operator::Ne => self.literal(true),
            Operator::Gt | Operator::Lt | Operator::Ge | Operator::Le => self.literal(false),
        }
    }

    fn literal(&mut self, allow_bool: bool) -> Result<Literal, PatternError> {
        let offset = self.offset();
        let lit = match self.next() {
            Tok::Str(s) => Literal::String(s),
            Tok::Int(n) => Literal::Int(n),
            Tok::Float(x) => Literal::Float(x),
            Tok::Ts(t) => Literal::Timestamp(t),
            Tok::Hex(h) => Literal::Hex(h),
            Tok::Bin(b) => Literal::Binary(b),
            Tok::Word(w) if allow_bool && (w == "true" || w == "false") => {
                Literal::Bool(w == "true")
            }
            other => return err(offset, format!("expected a literal value, found {other}")),
        };
        Ok(lit)
    }

    fn set(&mut self) -> Result<Literal, PatternError> {
        self.expect(Tok::LParen, "'(' opening the IN list")?;
        let mut items = Vec::new();
        if *self.peek() != Tok::RParen {
            loop {
                items.push(self.literal(true)?);
                if *self.peek() != Tok::Comma {
                    break;
                }
                self.pos += 1;
            }
        }
        self.expect(Tok::RParen, "',' or ')' in the IN list")?;
        Ok(Literal::Set(items))
    }

    fn object_path(&mut self) -> Result<ObjectPath, PatternError> {
        let offset = self.offset();
        let object_type = match self.next() {
            Tok::Word(w) if is_object_type(&w) => w,
            other => return err(offset, format!("expected an object type, found {other}")),
        };
        self.expect(Tok::Colon, "':' after the object type")?;
        let mut steps = vec![PathStep::Property(self.property()?)];
        loop {
            match self.peek() {
                Tok::Dot => {
                    self.pos += 1;
                    steps.push(PathStep::Property(self.property()?));
                }
                Tok::LBrack => {
                    self.pos += 1;
                    steps.push(self.index()?);
                }
                _ => return Ok(ObjectPath { object_type, steps }),
            }
        }
    }

    fn property(&mut self) -> Result<String, PatternError> {
        let offset = self.offset();
        match self.next() {
            Tok::Word(w) if !w.contains('-') => Ok(w),
            Tok::Word(w) => err(
                offset,
                format!("property name '{w}' contains '-': quote it ('{w}')"),
            ),
            Tok::Str(s) => Ok(s),
            other => err(offset, format!("expected a property name, found {other}")),
        }
    }

    fn index(&mut self) -> Result<PathStep, PatternError> {
        let offset = self.offset();
        let step = match self.next() {
            Tok::Star => PathStep::AnyIndex,
            Tok::Int(n) if n >= 0 => PathStep::Index(n.unsigned_abs()),
            other => {
                return err(
                    offset,
                    format!("expected a list index or '*', found {other}"),
                )
            }
        };
        self.expect(Tok::RBrack, "']' closing the list index")?;
        Ok(step)
    }
}

/// An object type as §9.3.1 allows it: letters, digits, `_` and `-`, not a keyword.
fn is_object_type(w: &str) -> bool {
    !matches!(
        w,
        "AND" | "OR" | "NOT" | "FOLLOWEDBY" | "EXISTS" | "IN" | "LIKE" | "MATCHES"
    ) && !w.ends_with('-')
}

fn flatten<T>(mut items: Vec<T>, wrap: fn(Vec<T>) -> T) -> T {
    match items.len() {
        1 => items.remove(0),
        _ => wrap(items),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_simple_comparison_parses_into_the_expected_tree() {
        let p = parse("[file:hashes.'SHA-256' = 'abc']").expect("valid");
        let ObservationExpr::Observation(ComparisonExpr::Compare(c)) = &p.root else {
            panic!("unexpected tree {p:?}");
        };
        assert_eq!(c.path.object_type, "file");
        assert_eq!(
            c.path.steps,
            vec![
                PathStep::Property("hashes".into()),
                PathStep::Property("SHA-256".into())
            ]
        );
        assert_eq!(c.value, Literal::String("abc".into()));
    }

    #[test]
    fn precedence_and_binds_tighter_than_or_then_followedby() {
        let p = parse("[a:b = 1] AND [a:b = 2] OR [a:b = 3] FOLLOWEDBY [a:b = 4]").expect("ok");
        let ObservationExpr::FollowedBy(parts) = &p.root else {
            panic!("{p:?}");
        };
        assert!(
            matches!(&parts[0], ObservationExpr::Or(v) if matches!(v[0], ObservationExpr::And(_)))
        );
    }

    #[test]
    fn escapes_are_resolved_and_literals_collected() {
        let p = parse(r"[a:b = 'it\'s' OR a:c IN ('x\\y', 2, true)]").expect("ok");
        assert_eq!(string_literals(&p), vec!["it's", r"x\y"]);
    }

    #[test]
    fn errors_carry_the_offset() {
        let e = parse("[file:name = 'x'").expect_err("unclosed");
        assert_eq!(e.offset, 16);
        assert!(e.message.contains("']'"), "{e}");
        let e = parse("[file:name = 'x'] WITHIN 0 SECONDS").expect_err("zero");
        assert_eq!(e.offset, 18);
    }

    #[test]
    fn deep_nesting_is_refused_with_a_clear_error() {
        let deep = format!("{}[a:b = 1]{}", "(".repeat(200), ")".repeat(200));
        let e = parse(&deep).expect_err("too deep");
        assert!(e.message.contains("nested deeper"), "{e}");
    }
}
