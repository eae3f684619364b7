//! A JSON value and its printer, for the `--json` output of `halyard ls` and `halyard ps`
//! (the commands emit JSON and never parse it, so no JSON library is needed). Object members
//! keep the order they were built in, so documents are stable for scripts and diffs.

use std::fmt::Write;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number (non-finite values print as `null`).
    Num(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, members in order.
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    /// A string value.
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// A string, or `null` for `None`.
    pub fn opt_str(s: Option<impl Into<String>>) -> Json {
        s.map_or(Json::Null, |s| Json::Str(s.into()))
    }

    /// An array of strings.
    pub fn strs<S: AsRef<str>>(items: &[S]) -> Json {
        Json::Arr(items.iter().map(|s| Json::str(s.as_ref())).collect())
    }

    /// The document on one line.
    pub fn compact(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None, 0);
        out
    }

    /// The document indented by two spaces a level.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(2), 0);
        out
    }

    fn write(&self, out: &mut String, indent: Option<usize>, level: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::Num(n) if n.is_finite() => {
                let _ = write!(out, "{n}");
            }
            Json::Num(_) => out.push_str("null"),
            Json::Str(s) => write_string(out, s),
            Json::Arr(items) => {
                let items = items.iter().map(|v| (None, v));
                write_container(out, ('[', ']'), items, indent, level);
            }
            Json::Obj(members) => {
                let items = members.iter().map(|(k, v)| (Some(*k), v));
                write_container(out, ('{', '}'), items, indent, level);
            }
        }
    }
}

fn write_container<'a>(
    out: &mut String,
    (open, close): (char, char),
    items: impl ExactSizeIterator<Item = (Option<&'a str>, &'a Json)>,
    indent: Option<usize>,
    level: usize,
) {
    out.push(open);
    let empty = items.len() == 0;
    for (i, (key, value)) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, indent, level + 1);
        if let Some(k) = key {
            write_string(out, k);
            out.push(':');
            if indent.is_some() {
                out.push(' ');
            }
        }
        value.write(out, indent, level + 1);
    }
    if !empty {
        newline(out, indent, level);
    }
    out.push(close);
}

fn newline(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(n) = indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', n * level));
    }
}

/// A JSON string literal (RFC 8259 §7): quotes, backslashes and control characters escaped.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_nests() {
        let v = Json::Obj(vec![
            ("a", Json::str("q\"\\\n\u{1}é")),
            (
                "b",
                Json::Arr(vec![Json::Int(-3), Json::Num(0.5), Json::Null]),
            ),
            ("c", Json::Obj(vec![])),
            ("d", Json::Num(f64::INFINITY)),
        ]);
        assert_eq!(
            v.compact(),
            r#"{"a":"q\"\\\n\u0001é","b":[-3,0.5,null],"c":{},"d":null}"#
        );
        assert_eq!(
            Json::Obj(vec![("x", Json::Arr(vec![Json::Bool(true)]))]).pretty(),
            "{\n  \"x\": [\n    true\n  ]\n}"
        );
    }
}
