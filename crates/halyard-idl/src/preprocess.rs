//! The preprocessor: runs before the parser and turns one or more IDL files into one flat text
//! plus a [`SourceMap`] back to the original files.
//!
//! It does what DDS IDL files need from the C preprocessor, line by line:
//! comments are blanked out (columns keep their place, so locations stay exact);
//! `#include "f"` / `#include <f>` are searched beside the including file and then on the
//! caller's include path, with a depth limit that also stops include cycles (`#pragma once`
//! and include guards work); object-like `#define NAME value` macros replace identifiers
//! outside literals, recursively but never inside their own expansion; `#undef`,
//! `#ifdef`, `#ifndef`, `#if`, `#elif`, `#else`, `#endif` with `defined(X)`, integer
//! arithmetic and comparisons; `#line N "file"` renames what follows; `#error` fails;
//! `#pragma` lines are handed to the parser as [`RawPragma`] values and never fail here.
//! Function-like macros are refused with an error, not guessed at.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Errors};
use crate::source::{LineOrigin, Location, Segment, SourceMap};
use crate::ParseOptions;

/// How deep a macro may expand into other macros.
const MACRO_DEPTH_MAX: usize = 32;

/// A `#pragma` line as found: where it sits in the flat text and its text after `pragma`.
#[derive(Clone, Debug)]
pub(crate) struct RawPragma {
    pub offset: usize,
    pub text: String,
    pub location: Location,
}

/// The preprocessor's output.
pub(crate) struct Preprocessed {
    pub text: String,
    pub map: SourceMap,
    pub pragmas: Vec<RawPragma>,
}

/// Where the root text comes from.
pub(crate) enum Root<'a> {
    File(&'a Path),
    Text { name: &'a str, text: &'a str },
}

/// Preprocesses `root` with the include path and predefined macros of `opts`.
pub(crate) fn preprocess(root: Root<'_>, opts: &ParseOptions) -> Result<Preprocessed, Errors> {
    let mut pp = Pp {
        opts,
        macros: opts.defines.iter().cloned().collect(),
        out: String::new(),
        map: SourceMap::default(),
        pragmas: Vec::new(),
        chain: Vec::new(),
        once: BTreeSet::new(),
        errors: Vec::new(),
    };
    match root {
        Root::File(path) => match std::fs::read_to_string(path) {
            Ok(text) => pp.run_file(path.display().to_string(), Some(path), &text),
            Err(e) => {
                let name: Arc<str> = Arc::from(path.display().to_string());
                let loc = Location {
                    file: name,
                    line: 1,
                    column: 1,
                };
                let kind = ErrorKind::Io {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                };
                pp.errors.push(Error::new(loc, kind));
            }
        },
        Root::Text { name, text } => pp.run_file(name.to_string(), None, text),
    }
    if !pp.errors.is_empty() {
        return Err(Errors(pp.errors));
    }
    pp.map.set_text_len(pp.out.len());
    Ok(Preprocessed {
        text: pp.out,
        map: pp.map,
        pragmas: pp.pragmas,
    })
}

struct Pp<'o> {
    opts: &'o ParseOptions,
    macros: BTreeMap<String, String>,
    out: String,
    map: SourceMap,
    pragmas: Vec<RawPragma>,
    /// The include chain, outermost first.
    chain: Vec<String>,
    /// Canonical paths of files that said `#pragma once`.
    once: BTreeSet<PathBuf>,
    errors: Vec<Error>,
}

/// One open `#if` group.
struct Cond {
    /// Lines of the current branch are kept.
    active: bool,
    /// Some branch of the group was taken already.
    taken: bool,
    /// The group itself is inside kept text.
    parent_active: bool,
    else_seen: bool,
    location: Location,
}

/// The state of one file being read.
struct FileState<'f> {
    /// The name locations report (`#line` may change it).
    name: Arc<str>,
    /// The file's path, if it is a file.
    path: Option<&'f Path>,
    /// The directory searched first for its includes.
    dir: Option<&'f Path>,
    /// Added to the 1-based line index to get the reported line (`#line`).
    line_delta: i64,
    conds: Vec<Cond>,
}

impl FileState<'_> {
    fn active(&self) -> bool {
        self.conds.last().is_none_or(|c| c.active)
    }

    fn loc(&self, index: usize, column: usize) -> Location {
        let line = (index as i64 + 1 + self.line_delta).clamp(1, u32::MAX as i64) as u32;
        Location {
            file: self.name.clone(),
            line,
            column: column as u32 + 1,
        }
    }
}

impl Pp<'_> {
    fn run_file(&mut self, name: String, path: Option<&Path>, text: &str) {
        self.chain.push(name.clone());
        let mut fs = FileState {
            name: Arc::from(name),
            path,
            dir: path.and_then(Path::parent),
            line_delta: 0,
            conds: Vec::new(),
        };
        let lines = match strip_comments(text) {
            Ok(lines) => lines,
            Err((line, col)) => {
                self.errors.push(Error::new(
                    fs.loc(line, col),
                    ErrorKind::UnterminatedComment,
                ));
                self.chain.pop();
                return;
            }
        };
        let mut index = 0;
        while index < lines.len() {
            let line = &lines[index];
            let trimmed = line.trim_start();
            if let Some(rest) = trimmed.strip_prefix('#') {
                let hash_col = line.len() - trimmed.len();
                // A directive continues on the next line after a trailing backslash.
                let mut full = rest.to_string();
                let start = index;
                while full.ends_with('\\') && index + 1 < lines.len() {
                    full.pop();
                    index += 1;
                    full.push(' ');
                    full.push_str(&lines[index]);
                }
                self.directive(&mut fs, start, hash_col + 1, &full);
            } else if fs.active() {
                self.emit_line(&fs, index, line);
            }
            index += 1;
        }
        if let Some(c) = fs.conds.last() {
            self.errors.push(Error::new(
                c.location.clone(),
                ErrorKind::UnterminatedConditional,
            ));
        }
        self.chain.pop();
    }

    fn emit_line(&mut self, fs: &FileState<'_>, index: usize, line: &str) {
        let loc = fs.loc(index, 0);
        let start = self.out.len();
        let mut segments = Vec::new();
        let expanded = self.expand(line, &mut segments);
        self.map.push_line(
            start,
            LineOrigin {
                file: loc.file,
                line: loc.line,
                segments,
            },
        );
        self.out.push_str(&expanded);
        self.out.push('\n');
    }

    /// Replaces macro names in `line`, recording column segments when anything changed.
    fn expand(&self, line: &str, segments: &mut Vec<Segment>) -> String {
        let mut out = String::with_capacity(line.len());
        let mut active = Vec::new();
        for piece in Pieces::new(line) {
            match piece {
                Piece::Ident(start, ident) if self.macros.contains_key(ident) => {
                    if segments.is_empty() {
                        segments.push(Segment {
                            out: 0,
                            orig: 0,
                            from_macro: false,
                        });
                    }
                    segments.push(Segment {
                        out: out.len() as u32,
                        orig: start as u32,
                        from_macro: true,
                    });
                    self.expand_macro(ident, &mut active, &mut out, 0);
                    let end = (start + ident.len()) as u32;
                    segments.push(Segment {
                        out: out.len() as u32,
                        orig: end,
                        from_macro: false,
                    });
                }
                Piece::Ident(_, text) | Piece::Other(text) => out.push_str(text),
            }
        }
        out
    }

    fn expand_macro(&self, name: &str, active: &mut Vec<String>, out: &mut String, depth: usize) {
        let Some(value) = self.macros.get(name) else {
            return;
        };
        if depth > MACRO_DEPTH_MAX || active.iter().any(|a| a == name) {
            out.push_str(name);
            return;
        }
        active.push(name.to_string());
        for piece in Pieces::new(value) {
            match piece {
                Piece::Ident(_, ident) if self.macros.contains_key(ident) => {
                    self.expand_macro(ident, active, out, depth + 1)
                }
                Piece::Ident(_, text) | Piece::Other(text) => out.push_str(text),
            }
        }
        active.pop();
    }

    fn directive(&mut self, fs: &mut FileState<'_>, index: usize, col: usize, rest: &str) {
        let body = rest.trim_start();
        let name_len = body
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(body.len());
        let name = &body[..name_len];
        let arg = body[name_len..].trim();
        let arg_col = col
            + (rest.len() - body.len())
            + name_len
            + (body[name_len..].len() - body[name_len..].trim_start().len());
        let loc = fs.loc(index, col - 1);
        let bad = |reason| ErrorKind::BadDirective {
            directive: name.to_string(),
            reason,
        };
        match name {
            "ifdef" | "ifndef" | "if" => {
                let parent_active = fs.active();
                let active = parent_active && self.condition(name, arg, &fs.loc(index, arg_col));
                fs.conds.push(Cond {
                    active,
                    taken: active,
                    parent_active,
                    else_seen: false,
                    location: loc,
                });
            }
            "elif" | "else" | "endif" => self.close_or_switch(fs, name, arg, loc, index, arg_col),
            _ if !fs.active() => {}
            "" => {} // A lone `#` is the null directive.
            "define" => self.define(arg, loc),
            "undef" => {
                if is_ident(arg) {
                    self.macros.remove(arg);
                } else {
                    self.errors
                        .push(Error::new(loc, bad("expected one macro name")));
                }
            }
            "include" => self.include(fs, arg, fs.loc(index, arg_col)),
            "pragma" => self.pragma(fs, arg, loc),
            "line" => self.line(fs, index, arg, loc),
            "error" => self.errors.push(Error::new(
                loc,
                ErrorKind::UserError {
                    text: arg.to_string(),
                },
            )),
            "warning" | "ident" => {}
            _ => self
                .errors
                .push(Error::new(loc, bad("unknown preprocessor directive"))),
        }
    }

    fn close_or_switch(
        &mut self,
        fs: &mut FileState<'_>,
        name: &str,
        arg: &str,
        loc: Location,
        index: usize,
        arg_col: usize,
    ) {
        let Some(mut cond) = fs.conds.pop() else {
            let kind = ErrorKind::UnmatchedConditional {
                directive: name.to_string(),
            };
            self.errors.push(Error::new(loc, kind));
            return;
        };
        if name == "endif" {
            return;
        }
        if cond.else_seen {
            let reason = "comes after `#else` of the same `#if`";
            self.errors.push(Error::new(
                loc,
                ErrorKind::BadDirective {
                    directive: name.to_string(),
                    reason,
                },
            ));
        }
        if name == "else" {
            cond.active = cond.parent_active && !cond.taken;
            cond.else_seen = true;
        } else {
            let wanted = cond.parent_active && !cond.taken;
            cond.active = wanted && self.condition("if", arg, &fs.loc(index, arg_col));
        }
        cond.taken |= cond.active;
        fs.conds.push(cond);
    }

    /// Evaluates the condition of `#ifdef X`, `#ifndef X` or `#if expr`.
    fn condition(&mut self, name: &str, arg: &str, loc: &Location) -> bool {
        match name {
            "ifdef" | "ifndef" => {
                if !is_ident(arg) {
                    let kind = ErrorKind::BadDirective {
                        directive: name.into(),
                        reason: "expected one macro name",
                    };
                    self.errors.push(Error::new(loc.clone(), kind));
                    return false;
                }
                self.macros.contains_key(arg) == (name == "ifdef")
            }
            _ => match crate::ppexpr::eval(arg, &self.macros) {
                Ok(v) => v != 0,
                Err(reason) => {
                    let kind = ErrorKind::BadDirective {
                        directive: "if".into(),
                        reason,
                    };
                    self.errors.push(Error::new(loc.clone(), kind));
                    false
                }
            },
        }
    }

    fn define(&mut self, arg: &str, loc: Location) {
        let name_len = arg
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(arg.len());
        let name = &arg[..name_len];
        let bad = |reason| ErrorKind::BadDirective {
            directive: "define".into(),
            reason,
        };
        if !is_ident(name) {
            self.errors
                .push(Error::new(loc, bad("expected a macro name")));
        } else if arg[name_len..].starts_with('(') {
            self.errors.push(Error::new(
                loc,
                bad("function-like macros are not supported"),
            ));
        } else {
            self.macros
                .insert(name.to_string(), arg[name_len..].trim().to_string());
        }
    }

    fn include(&mut self, fs: &FileState<'_>, arg: &str, loc: Location) {
        let bad = |reason| ErrorKind::BadDirective {
            directive: "include".into(),
            reason,
        };
        let name = match (arg.chars().next(), arg.chars().last()) {
            (Some('"'), Some('"')) | (Some('<'), Some('>')) if arg.len() >= 2 => {
                &arg[1..arg.len() - 1]
            }
            _ => {
                self.errors
                    .push(Error::new(loc, bad("expected \"file\" or <file>")));
                return;
            }
        };
        let candidates = fs
            .dir
            .into_iter()
            .map(Path::to_path_buf)
            .chain(self.opts.include_paths.iter().cloned());
        let Some(path) = candidates.map(|d| d.join(name)).find(|p| p.is_file()) else {
            self.errors.push(Error::new(
                loc,
                ErrorKind::IncludeNotFound {
                    name: name.to_string(),
                },
            ));
            return;
        };
        if self.chain.len() >= self.opts.max_include_depth.min(crate::INCLUDE_DEPTH_MAX) {
            let mut chain = self.chain.clone();
            chain.push(path.display().to_string());
            let kind = ErrorKind::IncludeTooDeep {
                limit: self.opts.max_include_depth.min(crate::INCLUDE_DEPTH_MAX),
                chain,
            };
            self.errors.push(Error::new(loc, kind));
            return;
        }
        if let Ok(canonical) = path.canonicalize() {
            if self.once.contains(&canonical) {
                return;
            }
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => self.run_file(path.display().to_string(), Some(&path), &text),
            Err(e) => {
                let kind = ErrorKind::Io {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                };
                self.errors.push(Error::new(loc, kind));
            }
        }
    }

    fn pragma(&mut self, fs: &FileState<'_>, arg: &str, loc: Location) {
        if arg == "once" {
            if let Some(Ok(canonical)) = fs.path.map(Path::canonicalize) {
                self.once.insert(canonical);
            }
            return;
        }
        self.pragmas.push(RawPragma {
            offset: self.out.len(),
            text: arg.to_string(),
            location: loc,
        });
    }

    fn line(&mut self, fs: &mut FileState<'_>, index: usize, arg: &str, loc: Location) {
        let mut parts = arg.splitn(2, char::is_whitespace);
        let number = parts.next().and_then(|n| n.parse::<u32>().ok());
        let Some(number) = number else {
            let kind = ErrorKind::BadDirective {
                directive: "line".into(),
                reason: "expected a line number",
            };
            self.errors.push(Error::new(loc, kind));
            return;
        };
        // The line after the directive (index + 1, 0-based) becomes line `number`.
        fs.line_delta = number as i64 - (index as i64 + 2);
        if let Some(file) = parts.next().map(str::trim) {
            if file.len() >= 2 && file.starts_with('"') && file.ends_with('"') {
                fs.name = Arc::from(&file[1..file.len() - 1]);
            }
        }
    }
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits `text` into lines with comments blanked out: `//` comments are dropped, `/* */`
/// comments become spaces (newlines kept). Literals are left alone. On an unterminated block
/// comment, returns its (0-based line, 0-based column).
fn strip_comments(text: &str) -> Result<Vec<String>, (usize, usize)> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if c == '\n' {
            lines.push(std::mem::take(&mut cur).trim_end_matches('\r').to_string());
            quote = None;
            continue;
        }
        if let Some(q) = quote {
            cur.push(c);
            if c == '\\' {
                if let Some(&n) = chars.peek() {
                    if n != '\n' {
                        cur.push(n);
                        chars.next();
                    }
                }
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"' | '\'', _) => {
                quote = Some(c);
                cur.push(c);
            }
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                let start = (lines.len(), cur.len());
                chars.next();
                cur.push_str("  ");
                let mut closed = false;
                while let Some(n) = chars.next() {
                    if n == '*' && chars.peek() == Some(&'/') {
                        chars.next();
                        cur.push_str("  ");
                        closed = true;
                        break;
                    }
                    if n == '\n' {
                        lines.push(std::mem::take(&mut cur));
                    } else {
                        cur.extend(std::iter::repeat_n(' ', n.len_utf8()));
                    }
                }
                if !closed {
                    return Err(start);
                }
            }
            _ => cur.push(c),
        }
    }
    lines.push(cur.trim_end_matches('\r').to_string());
    Ok(lines)
}

/// A piece of a line for macro replacement: an identifier, or anything else (numbers and
/// literals stay whole so nothing inside them is replaced).
enum Piece<'a> {
    Ident(usize, &'a str),
    Other(&'a str),
}

struct Pieces<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Pieces<'a> {
    fn new(text: &'a str) -> Self {
        Pieces { text, pos: 0 }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        let rest = &self.text[self.pos..];
        let first = rest.chars().next()?;
        let start = self.pos;
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let len = if first.is_ascii_alphabetic() || first == '_' {
            rest.find(|c| !word(c)).unwrap_or(rest.len())
        } else if first.is_ascii_digit() {
            rest.find(|c: char| !word(c) && c != '.')
                .unwrap_or(rest.len())
        } else if first == '"' || first == '\'' {
            literal_len(rest, first)
        } else {
            first.len_utf8()
        };
        self.pos += len;
        let text = &rest[..len];
        Some(if first.is_ascii_alphabetic() || first == '_' {
            Piece::Ident(start, text)
        } else {
            Piece::Other(text)
        })
    }
}

/// The byte length of the string or char literal at the start of `rest` (to the end of the
/// text if it is not closed).
fn literal_len(rest: &str, quote: char) -> usize {
    let mut escaped = false;
    for (i, c) in rest.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return i + 1;
        }
    }
    rest.len()
}
