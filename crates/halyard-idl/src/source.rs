//! Source locations: where each byte of the preprocessed text came from.
//!
//! The preprocessor writes one flat text for the parser. For every line of that text it records
//! the original file and line, and the column segments that macro substitution shifted, so a
//! byte offset in the flat text maps back to (file, line, column) of the text the user wrote.

use std::fmt;
use std::sync::Arc;

/// A position in an original IDL source file: file name, 1-based line and 1-based column
/// (columns count bytes).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The file name as it was given or found (include search path joined with the name).
    pub file: Arc<str>,
    /// 1-based line number in `file`.
    pub line: u32,
    /// 1-based column (byte) in that line.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One column segment of an output line: output columns from `out` on come from original
/// column `orig` on; a segment produced by macro expansion maps every column to `orig`.
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    pub out: u32,
    pub orig: u32,
    pub from_macro: bool,
}

/// Where one line of preprocessed text came from.
#[derive(Clone, Debug)]
pub(crate) struct LineOrigin {
    pub file: Arc<str>,
    pub line: u32,
    /// Sorted by `out`; empty means columns map one to one.
    pub segments: Vec<Segment>,
}

/// Maps byte offsets of the preprocessed text back to original locations.
#[derive(Clone, Debug, Default)]
pub(crate) struct SourceMap {
    line_starts: Vec<usize>,
    lines: Vec<LineOrigin>,
    text_len: usize,
}

impl SourceMap {
    /// Records that the next output line starts at `start` and came from `origin`.
    pub fn push_line(&mut self, start: usize, origin: LineOrigin) {
        debug_assert!(self.line_starts.last().is_none_or(|&s| s <= start));
        self.line_starts.push(start);
        self.lines.push(origin);
    }

    /// Sets the length of the whole preprocessed text (offsets past it map to its end).
    pub fn set_text_len(&mut self, len: usize) {
        self.text_len = len;
    }

    /// The original location of byte `offset` of the preprocessed text.
    pub fn locate(&self, offset: usize) -> Location {
        let offset = offset.min(self.text_len);
        let index = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(0) => 0,
            Err(i) => i - 1,
        };
        let Some(origin) = self.lines.get(index) else {
            return Location {
                file: Arc::from("<input>"),
                line: 1,
                column: 1,
            };
        };
        // Each line ends with a newline; the end of input counts as the end of the last line.
        let next_start = self
            .line_starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.text_len);
        let line_len = next_start.saturating_sub(self.line_starts[index] + 1);
        let out_col = (offset - self.line_starts[index]).min(line_len) as u32;
        let column = match origin.segments.iter().rev().find(|s| s.out <= out_col) {
            None => out_col,
            Some(seg) if seg.from_macro => seg.orig,
            Some(seg) => seg.orig + (out_col - seg.out),
        };
        Location {
            file: origin.file.clone(),
            line: origin.line,
            column: column + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_through_macro_segments() {
        let mut map = SourceMap::default();
        let file: Arc<str> = Arc::from("f.idl");
        // Output "long x;\n" came from "T x;" where T expanded to "long".
        let segments = vec![
            Segment {
                out: 0,
                orig: 0,
                from_macro: false,
            },
            Segment {
                out: 0,
                orig: 0,
                from_macro: true,
            },
            Segment {
                out: 4,
                orig: 1,
                from_macro: false,
            },
        ];
        map.push_line(
            0,
            LineOrigin {
                file: file.clone(),
                line: 3,
                segments,
            },
        );
        map.push_line(
            8,
            LineOrigin {
                file,
                line: 4,
                segments: Vec::new(),
            },
        );
        map.set_text_len(12);
        let at = |o| {
            let l = map.locate(o);
            (l.line, l.column)
        };
        assert_eq!(at(2), (3, 1), "inside the expansion: the macro's column");
        assert_eq!(at(5), (3, 3), "after it: shifted back");
        assert_eq!(at(9), (4, 2));
        assert_eq!(at(100), (4, 4), "end of input: end of the last line");
    }
}
