//! `#if` / `#elif` condition evaluation: `defined(X)`, `defined X`, integer literals, macros
//! that expand to them (unknown names are 0, as in C), `! ~ - +`, `* / % + - << >>`,
//! comparisons, `& ^ |`, `&& ||` and parentheses, in C precedence, on `i64` with wrapping.

use std::collections::BTreeMap;

/// How deep parentheses and macro expansions may nest in one condition.
const DEPTH_MAX: usize = 64;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i64),
    Ident(String),
    Op(&'static str),
}

/// Evaluates a condition; `Err` says why it is malformed.
pub(crate) fn eval(text: &str, macros: &BTreeMap<String, String>) -> Result<i64, &'static str> {
    let toks = tokenize(text, macros, 0)?;
    let mut p = P {
        toks,
        pos: 0,
        depth: 0,
    };
    let v = p.binary(0)?;
    if p.pos != p.toks.len() {
        return Err("unexpected text after the condition");
    }
    Ok(v)
}

const OPS: [&str; 22] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "!", "~", "-", "+", "*", "/", "%",
    "<", ">", "&", "^", "|",
];

fn tokenize(
    text: &str,
    macros: &BTreeMap<String, String>,
    depth: usize,
) -> Result<Vec<Tok>, &'static str> {
    if depth > DEPTH_MAX {
        return Err("macros expand too deeply");
    }
    let mut toks = Vec::new();
    let mut rest = text.trim_start();
    while let Some(c) = rest.chars().next() {
        let word_len = rest
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(rest.len());
        if c.is_ascii_digit() {
            let word = rest[..word_len].trim_end_matches(['u', 'U', 'l', 'L']);
            let value = match word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
                Some(hex) => i64::from_str_radix(hex, 16),
                None if word.len() > 1 && word.starts_with('0') => {
                    i64::from_str_radix(&word[1..], 8)
                }
                None => word.parse(),
            };
            toks.push(Tok::Num(value.map_err(|_| "malformed integer")?));
            rest = &rest[word_len..];
        } else if c.is_ascii_alphabetic() || c == '_' {
            let word = &rest[..word_len];
            rest = &rest[word_len..];
            if word == "defined" {
                let (name, after) = defined_operand(rest)?;
                toks.push(Tok::Num(macros.contains_key(name) as i64));
                rest = after;
            } else if let Some(value) = macros.get(word) {
                toks.extend(tokenize(value, macros, depth + 1)?);
            } else {
                toks.push(Tok::Ident(word.to_string()));
            }
        } else if let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) {
            toks.push(Tok::Op(op));
            rest = &rest[op.len()..];
        } else {
            return Err("unexpected character in condition");
        }
        rest = rest.trim_start();
    }
    Ok(toks)
}

struct P {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

/// Binary operators by precedence level, loosest first.
const LEVELS: [&[&str]; 10] = [
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl P {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn binary(&mut self, level: usize) -> Result<i64, &'static str> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        while let Some(op) = self.peek_op().filter(|op| LEVELS[level].contains(op)) {
            self.pos += 1;
            let right = self.binary(level + 1)?;
            left = apply(op, left, right)?;
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<i64, &'static str> {
        self.depth += 1;
        if self.depth > DEPTH_MAX {
            return Err("condition nests too deeply");
        }
        let tok = self
            .toks
            .get(self.pos)
            .cloned()
            .ok_or("condition ends too early")?;
        self.pos += 1;
        let v = match tok {
            Tok::Num(n) => n,
            Tok::Op("!") => (self.unary()? == 0) as i64,
            Tok::Op("~") => !self.unary()?,
            Tok::Op("-") => self.unary()?.wrapping_neg(),
            Tok::Op("+") => self.unary()?,
            Tok::Op("(") => {
                let v = self.binary(0)?;
                self.expect(")")?;
                v
            }
            Tok::Ident(_) => 0,
            Tok::Op(_) => return Err("expected a value"),
        };
        self.depth -= 1;
        Ok(v)
    }

    fn expect(&mut self, op: &'static str) -> Result<(), &'static str> {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            Ok(())
        } else {
            Err("expected `)`")
        }
    }
}

fn apply(op: &str, a: i64, b: i64) -> Result<i64, &'static str> {
    Ok(match op {
        "||" => (a != 0 || b != 0) as i64,
        "&&" => (a != 0 && b != 0) as i64,
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => (a == b) as i64,
        "!=" => (a != b) as i64,
        "<" => (a < b) as i64,
        ">" => (a > b) as i64,
        "<=" => (a <= b) as i64,
        ">=" => (a >= b) as i64,
        "<<" => a.wrapping_shl(b as u32),
        ">>" => a.wrapping_shr(b as u32),
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" | "%" if b == 0 => return Err("division by zero"),
        "/" => a.wrapping_div(b),
        _ => a.wrapping_rem(b),
    })
}

/// The macro name after `defined`, with or without parentheses, and the text after it.
fn defined_operand(rest: &str) -> Result<(&str, &str), &'static str> {
    let rest = rest.trim_start();
    let (paren, rest) = match rest.strip_prefix('(') {
        Some(r) => (true, r.trim_start()),
        None => (false, rest),
    };
    let len = rest
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(rest.len());
    if len == 0 {
        return Err("`defined` needs a macro name");
    }
    let (name, mut after) = rest.split_at(len);
    if paren {
        after = after
            .trim_start()
            .strip_prefix(')')
            .ok_or("expected `)` after `defined(NAME`")?;
    }
    Ok((name, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_with(text: &str, defs: &[(&str, &str)]) -> Result<i64, &'static str> {
        let macros = defs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        eval(text, &macros)
    }

    #[test]
    fn c_precedence_and_defined() {
        assert_eq!(eval_with("1 + 2 * 3 == 7 && !defined(X) || 0", &[]), Ok(1));
        assert_eq!(eval_with("defined X && X >= 2", &[("X", "1 + 1")]), Ok(1));
        assert_eq!(eval_with("(0x10 >> 2) | 010", &[]), Ok(12));
        assert_eq!(eval_with("UNKNOWN", &[]), Ok(0));
        assert_eq!(
            eval_with("-1 < 0 ? 1 : 0", &[]),
            Err("unexpected character in condition")
        );
        assert_eq!(eval_with("1 / 0", &[]), Err("division by zero"));
        assert_eq!(
            eval_with("A", &[("A", "B"), ("B", "A")]),
            Err("macros expand too deeply")
        );
    }
}
