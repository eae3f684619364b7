//! Tokens of the DDS SQL filter grammar (DDS 1.4 Annex B).
//!
//! Design. The expression is cut into tokens once, each with its byte offset and its text
//! (what an error quotes). A member path (`pos.x`, `trail[2].y`, `Color::RED`) is one name
//! token: the parser splits it, and the schema says what it names. Strings open with `'`,
//! `"` or a backquote (closed by `'`, the form some tools print), numbers may carry a sign,
//! a fraction, an exponent or a `0x` prefix, and `%n` is parameter n (0 to 99). Keywords are
//! names here; the parser compares them case-insensitively. An expression longer than
//! [`MAX_LEN`] is refused before it is read: content filters arrive from remote peers too.

use super::error::{err, FilterError};

/// Longest expression accepted, in bytes.
pub const MAX_LEN: usize = 4096;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    /// A name: a member path, a keyword, TRUE/FALSE or an enumerator.
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

/// A token, where it starts and its text.
#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) pos: usize,
    pub(super) text: String,
}

/// The tokens of `src`.
pub(super) fn lex(src: &str) -> Result<Vec<Token>, FilterError> {
    if src.len() > MAX_LEN {
        return Err(err(MAX_LEN, "", format!("longer than {MAX_LEN} bytes")));
    }
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let (tok, len) = token(src, i)?;
        i += len;
        out.push(Token {
            tok,
            pos: start,
            text: src[start..i].to_string(),
        });
    }
    Ok(out)
}

/// The token starting at byte `i` of `src` (not whitespace) and its length.
fn token(src: &str, i: usize) -> Result<(Tok, usize), FilterError> {
    let b = src.as_bytes();
    let c = b[i];
    Ok(match c {
        b'(' => (Tok::LParen, 1),
        b')' => (Tok::RParen, 1),
        b',' => (Tok::Comma, 1),
        b'=' => (Tok::Op("="), 1),
        b'<' | b'>' | b'!' => match (c, b.get(i + 1).copied()) {
            (b'<', Some(b'=')) => (Tok::Op("<="), 2),
            (b'<', Some(b'>')) => (Tok::Op("<>"), 2),
            (b'>', Some(b'=')) => (Tok::Op(">="), 2),
            (b'!', Some(b'=')) => (Tok::Op("<>"), 2),
            (b'<', _) => (Tok::Op("<"), 1),
            (b'>', _) => (Tok::Op(">"), 1),
            _ => return Err(err(i, "!", "expected `!=`")),
        },
        b'\'' | b'"' | b'`' => {
            // A string, up to the matching quote (a backquote is closed by `'`).
            let close = if c == b'`' { b'\'' } else { c };
            let end = b[i + 1..]
                .iter()
                .position(|&x| x == close)
                .ok_or_else(|| err(i, &src[i..], "unterminated string"))?;
            (Tok::Str(src[i + 1..i + 1 + end].to_string()), end + 2)
        }
        b'%' => {
            let digits = b[i + 1..].iter().take_while(|x| x.is_ascii_digit()).count();
            if digits == 0 {
                return Err(err(i, "%", "a parameter is `%` followed by its number"));
            }
            let text = &src[i..i + 1 + digits];
            let n: usize = text[1..]
                .parse()
                .map_err(|_| err(i, text, "parameter number too large"))?;
            if n > 99 {
                return Err(err(i, text, "parameters are %0 to %99"));
            }
            (Tok::Param(n), 1 + digits)
        }
        b'0'..=b'9' | b'-' | b'+' | b'.' => {
            number(&src[i..]).ok_or_else(|| err(i, &src[i..i + 1], "not a number"))?
        }
        c if c.is_ascii_alphabetic() || c == b'_' => {
            // A name: letters, digits, `_`, member dots, `::` scopes and `[n]` indices.
            let mut n = 0;
            while let Some(&x) = b.get(i + n) {
                if x.is_ascii_alphanumeric() || matches!(x, b'_' | b'.' | b'[' | b']') {
                    n += 1;
                } else if x == b':' && b.get(i + n + 1) == Some(&b':') {
                    n += 2;
                } else {
                    break;
                }
            }
            (Tok::Ident(src[i..i + n].to_string()), n)
        }
        _ => {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(err(i, &ch.to_string(), "unexpected character"));
        }
    })
}

/// A number at the start of `s`: its token and length.
pub(super) fn number(s: &str) -> Option<(Tok, usize)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_strings_and_names() {
        let toks: Vec<Tok> = lex("a.b[2] >= -0x1F AND c <> 'x y' OR d != 2.5e1 %3")
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect();
        assert_eq!(
            toks,
            [
                Tok::Ident("a.b[2]".into()),
                Tok::Op(">="),
                Tok::Int(-31),
                Tok::Ident("AND".into()),
                Tok::Ident("c".into()),
                Tok::Op("<>"),
                Tok::Str("x y".into()),
                Tok::Ident("OR".into()),
                Tok::Ident("d".into()),
                Tok::Op("<>"),
                Tok::Float(25.0),
                Tok::Param(3),
            ]
        );
    }

    #[test]
    fn bad_tokens_say_where() {
        let e = lex("a = %100").unwrap_err();
        assert_eq!((e.position, e.token.as_str()), (4, "%100"));
        let e = lex("a ! 1").unwrap_err();
        assert_eq!((e.position, e.token.as_str()), (2, "!"));
        let e = lex("a = 1e").unwrap_err();
        assert_eq!((e.position, e.token.as_str()), (4, "1"));
        let e = lex("a = é").unwrap_err();
        assert_eq!((e.position, e.token.as_str()), (4, "é"));
        let long = "a".repeat(MAX_LEN + 1);
        assert!(lex(&long).unwrap_err().message.contains("longer than"));
    }
}
