//! Literals and constant expressions (IDL 4.2 §7.4.1.4.3, precedence loosest first:
//! `|`, `^`, `&`, `<< >>`, `+ -`, `* / %`, unary `- + ~`).

use winnow::combinator::fail;
use winnow::error::{StrContext, StrContextValue};
use winnow::prelude::*;

use super::{advance, at, fatal, here, nested, next_word, offset, scoped_name, ws, Input, PResult};
use crate::ast::{BinaryOp, ConstExpr, Expr, UnaryOp};
use crate::error::ErrorKind;

/// Binary operators by precedence level, loosest first (no operator is a prefix of
/// another, so the first match is the operator).
const LEVELS: [&[(&str, BinaryOp)]; 6] = [
    &[("|", BinaryOp::Or)],
    &[("^", BinaryOp::Xor)],
    &[("&", BinaryOp::And)],
    &[("<<", BinaryOp::Shl), (">>", BinaryOp::Shr)],
    &[("+", BinaryOp::Add), ("-", BinaryOp::Sub)],
    &[
        ("*", BinaryOp::Mul),
        ("/", BinaryOp::Div),
        ("%", BinaryOp::Rem),
    ],
];

/// Parses a constant expression (backtracks if none starts here).
pub(super) fn const_expr(i: &mut Input<'_>) -> PResult<ConstExpr> {
    nested(i, |i| binary(i, 0))
}

/// Parses a constant expression in a template argument list (`sequence<T, N>`), where a
/// `>>` outside parentheses closes two lists.
pub(crate) fn const_expr_in_template(i: &mut Input<'_>) -> PResult<ConstExpr> {
    let outer = i.state.in_template.replace(true);
    let r = const_expr(i);
    i.state.in_template.set(outer);
    r
}

/// How many operators one chain may have per level of [`crate::ParseOptions::max_nesting_depth`].
const CHAIN_PER_DEPTH: usize = 4;

/// The binary operator at the input with its precedence level (0 is the loosest).
fn peek_op(i: &Input<'_>) -> Option<(&'static str, BinaryOp, usize)> {
    LEVELS.iter().enumerate().find_map(|(level, ops)| {
        ops.iter()
            .find(|(s, _)| at(i, s))
            .map(|&(s, op)| (s, op, level))
    })
}

/// Precedence climbing: operands joined by operators of level `min_level` or tighter, left
/// associative. One stack frame per operator level in use, not per level that exists.
fn binary(i: &mut Input<'_>, min_level: usize) -> PResult<ConstExpr> {
    let mut left = unary(i)?;
    // A chain `a + b + c ...` builds a tree as deep as it is long, which later passes walk
    // recursively: bound it too.
    let mut chain = 0;
    while let Some((sym, op, level)) = peek_op(i).filter(|&(_, _, l)| l >= min_level) {
        chain += 1;
        if chain > CHAIN_PER_DEPTH * i.state.depth_max {
            let limit = i.state.depth_max;
            return fatal(i, offset(i), ErrorKind::NestingTooDeep { limit });
        }
        if op == BinaryOp::Shr && i.state.in_template.get() {
            break;
        }
        // An operator without an operand after it ends the expression there.
        let checkpoint = i.input;
        advance(i, sym.len())?;
        let right = match nested(i, |i| binary(i, level + 1)) {
            Ok(right) => right,
            Err(winnow::error::ErrMode::Backtrack(_)) => {
                i.input = checkpoint;
                break;
            }
            Err(e) => return Err(e),
        };
        let location = left.location.clone();
        let expr = Expr::Binary(op, Box::new(left), Box::new(right));
        left = ConstExpr {
            expr,
            location,
            value: None,
        };
    }
    Ok(left)
}

fn unary(i: &mut Input<'_>) -> PResult<ConstExpr> {
    let location = here(i);
    let op = match i.input.chars().next() {
        Some('-') => Some(UnaryOp::Neg),
        Some('+') => Some(UnaryOp::Plus),
        Some('~') => Some(UnaryOp::Not),
        _ => None,
    };
    let Some(op) = op else { return primary(i) };
    advance(i, 1)?;
    let operand = nested(i, unary)?;
    Ok(ConstExpr {
        expr: Expr::Unary(op, Box::new(operand)),
        location,
        value: None,
    })
}

fn primary(i: &mut Input<'_>) -> PResult<ConstExpr> {
    let location = here(i);
    let expr = match i.input.chars().next() {
        Some('(') => {
            advance(i, 1)?;
            let outer = i.state.in_template.replace(false);
            let inner = nested(i, |i| binary(i, 0));
            i.state.in_template.set(outer);
            let inner = inner?;
            super::expect_sym(i, ")")?;
            return Ok(ConstExpr { location, ..inner });
        }
        Some('0'..='9') | Some('.') => number(i)?,
        Some('"') => Expr::Str(string_lit(i)?),
        Some('\'') => Expr::Char(char_lit(i)?),
        Some('L') if at(i, "L\"") => {
            advance(i, 1)?;
            Expr::Str(string_lit(i)?)
        }
        Some('L') if at(i, "L'") => {
            advance(i, 1)?;
            Expr::Char(char_lit(i)?)
        }
        _ => match next_word(i) {
            "TRUE" => {
                advance(i, 4)?;
                Expr::Bool(true)
            }
            "FALSE" => {
                advance(i, 5)?;
                Expr::Bool(false)
            }
            _ if at(i, "::") || !next_word(i).is_empty() => Expr::Name(scoped_name(i)?),
            _ => {
                let ctx =
                    StrContext::Expected(StrContextValue::Description("a constant expression"));
                return fail.context(ctx).parse_next(i);
            }
        },
    };
    Ok(ConstExpr {
        expr,
        location,
        value: None,
    })
}

/// An integer (decimal, `0x` hex, `0` octal) or floating-point literal.
fn number(i: &mut Input<'_>) -> PResult<Expr> {
    let start = offset(i);
    let s: &str = i.input;
    let mut len = s
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '.')
        .unwrap_or(s.len());
    // An exponent sign belongs to the literal: `1e-5`.
    let lower = s[..len].to_ascii_lowercase();
    if !lower.starts_with("0x") && (lower.ends_with('e')) && s[len..].starts_with(['+', '-']) {
        len += 1;
        len += s[len..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(s.len() - len);
    }
    let text = &s[..len];
    let value = parse_number(text);
    let Some(value) = value else {
        return fatal(
            i,
            start,
            ErrorKind::BadLiteral {
                text: text.to_string(),
            },
        );
    };
    advance(i, len)?;
    Ok(value)
}

fn parse_number(text: &str) -> Option<Expr> {
    let lower = text.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return u128::from_str_radix(hex, 16).ok().map(Expr::Int);
    }
    if lower.contains(['.', 'e']) || lower.ends_with('d') {
        let trimmed = lower.trim_end_matches('d');
        return trimmed
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Expr::Float);
    }
    if lower.len() > 1 && lower.starts_with('0') {
        return u128::from_str_radix(&lower[1..], 8).ok().map(Expr::Int);
    }
    lower.parse::<u128>().ok().map(Expr::Int)
}

/// A string literal; adjacent literals are concatenated (IDL 4.2 §7.2.6.3).
fn string_lit(i: &mut Input<'_>) -> PResult<String> {
    let mut out = String::new();
    loop {
        let start = offset(i);
        let (value, len) = match quoted(i.input, '"') {
            Some(v) => v,
            None => return fatal(i, start, bad_literal(i.input)),
        };
        out.push_str(&value);
        winnow::token::take(len).void().parse_next(i)?;
        ws(i)?;
        if !at(i, "\"") {
            return Ok(out);
        }
    }
}

fn char_lit(i: &mut Input<'_>) -> PResult<char> {
    let start = offset(i);
    let parsed = quoted(i.input, '\'').filter(|(v, _)| v.chars().count() == 1);
    let Some((value, len)) = parsed else {
        return fatal(i, start, bad_literal(i.input));
    };
    advance(i, len)?;
    Ok(value.chars().next().unwrap_or_default())
}

fn bad_literal(rest: &str) -> ErrorKind {
    let end = rest.find('\n').unwrap_or(rest.len()).min(40);
    let mut end_char = end;
    while !rest.is_char_boundary(end_char) {
        end_char -= 1;
    }
    ErrorKind::BadLiteral {
        text: rest[..end_char].trim_end().to_string(),
    }
}

/// Decodes the literal quoted by `q` at the start of `s`: its value and byte length.
fn quoted(s: &str, q: char) -> Option<(String, usize)> {
    let mut chars = s.char_indices();
    chars.next().filter(|&(_, c)| c == q)?;
    let mut out = String::new();
    while let Some((idx, c)) = chars.next() {
        match c {
            '\n' => return None,
            c if c == q => return Some((out, idx + 1)),
            '\\' => out.push(escape(&mut chars)?),
            c => out.push(c),
        }
    }
    None
}

/// Decodes one escape sequence after its backslash (IDL 4.2 Table 7-9).
fn escape(chars: &mut std::str::CharIndices<'_>) -> Option<char> {
    let (_, c) = chars.next()?;
    let simple = match c {
        'n' => '\n',
        't' => '\t',
        'v' => '\u{b}',
        'b' => '\u{8}',
        'r' => '\r',
        'f' => '\u{c}',
        'a' => '\u{7}',
        '\\' | '?' | '\'' | '"' => c,
        'x' | 'u' => {
            let max = if c == 'x' { 2 } else { 4 };
            let digits: String = chars
                .clone()
                .map(|(_, c)| c)
                .take(max)
                .take_while(char::is_ascii_hexdigit)
                .collect();
            for _ in 0..digits.len() {
                chars.next();
            }
            return u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32);
        }
        '0'..='7' => {
            let mut value = c.to_digit(8)?;
            for _ in 0..2 {
                match chars.clone().next() {
                    Some((_, d @ '0'..='7')) => {
                        value = value * 8 + d.to_digit(8)?;
                        chars.next();
                    }
                    _ => break,
                }
            }
            return char::from_u32(value);
        }
        _ => return None,
    };
    Some(simple)
}
