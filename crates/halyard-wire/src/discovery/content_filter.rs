//! PID_CONTENT_FILTER_PROPERTY (0x0035): the filter a content-filtered reader announces in its
//! SEDP subscription, so that writers can filter for it (RTPS 2.5 §9.6.3, Table 9.13).
//!
//! Layout (CDR in the parameter list's byte order, alignment relative to the value start), as
//! Fast DDS (`ParameterSerializer<ContentFilterProperty>`), RustDDS and Connext put it on the
//! wire:
//!
//! ```text
//! string<256>      contentFilteredTopicName   u32 length (NUL included), bytes, NUL, pad to 4
//! string<256>      relatedTopicName
//! string<256>      filterClassName            "DDSSQL" for the DDS 1.4 Annex B grammar
//! string           filterExpression
//! sequence<string> expressionParameters       u32 count, then that many strings
//! ```
//!
//! Parsing is strict about structure (lengths, UTF-8, at most [`MAX_EXPRESSION_PARAMETERS`]
//! parameters, names of at most [`MAX_FILTER_NAME_LEN`] bytes): a malformed value rejects its
//! whole SEDP sample, like any other malformed discovery parameter. Empty strings are kept as
//! they are (Fast DDS reads an empty name as "no filter"; a writer just finds it cannot apply
//! such a filter and sends everything).

use crate::error::WireError;
use crate::param::{pad4, put_string, ValueReader};

/// The filter class of the DDS SQL filter grammar (DDS 1.4 Annex B), the one every
/// implementation must offer.
pub const DDSSQL: &str = "DDSSQL";

/// Expression parameters a filter may carry at most (DDS 1.4 §2.2.2.3.3: 100).
pub const MAX_EXPRESSION_PARAMETERS: usize = 100;

/// Longest content-filtered topic, related topic and filter class name, in bytes
/// (`string<256>`).
pub const MAX_FILTER_NAME_LEN: usize = 256;

/// Longest encoded value: a parameter's length field is 16 bits, padded to 4.
const MAX_VALUE_LEN: usize = 0xfffc;

/// ContentFilterProperty_t (RTPS 2.5 §9.6.3): what a writer needs to filter for a reader of
/// a content-filtered topic.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ContentFilterProperty {
    /// Name of the reader's content-filtered topic.
    pub content_filtered_topic_name: String,
    /// Name of the topic it filters (the reader's topic).
    pub related_topic_name: String,
    /// The grammar of `filter_expression`: [`DDSSQL`] for DDS SQL.
    pub filter_class_name: String,
    /// The filter expression.
    pub filter_expression: String,
    /// Values of `%0`, `%1`, ... in the expression.
    pub expression_parameters: Vec<String>,
}

/// A `string<256>`: at most [`MAX_FILTER_NAME_LEN`] bytes.
fn name(r: &mut ValueReader<'_>) -> Result<String, WireError> {
    let s = r.string()?;
    if s.len() > MAX_FILTER_NAME_LEN {
        return Err(WireError::InvalidField("content filter name longer than 256"));
    }
    Ok(s.to_owned())
}

impl ContentFilterProperty {
    /// Parses the value of a PID_CONTENT_FILTER_PROPERTY parameter.
    pub fn parse(r: &mut ValueReader<'_>) -> Result<ContentFilterProperty, WireError> {
        let content_filtered_topic_name = name(r)?;
        let related_topic_name = name(r)?;
        let filter_class_name = name(r)?;
        let filter_expression = r.string()?.to_owned();
        let n = r.u32()? as usize;
        if n > MAX_EXPRESSION_PARAMETERS {
            return Err(WireError::InvalidField("more than 100 filter parameters"));
        }
        let mut expression_parameters = Vec::with_capacity(n);
        for _ in 0..n {
            expression_parameters.push(r.string()?.to_owned());
        }
        let p = ContentFilterProperty {
            content_filtered_topic_name,
            related_topic_name,
            filter_class_name,
            filter_expression,
            expression_parameters,
        };
        // What parses must emit again (strings without their NUL come back longer).
        if p.encoded_len() > MAX_VALUE_LEN {
            return Err(WireError::InvalidField("content filter property too long"));
        }
        Ok(p)
    }

    /// Appends the value (little-endian, padded to 4), aligned relative to `start`, the value's
    /// first byte.
    pub fn emit(&self, buf: &mut Vec<u8>, start: usize) {
        let names = [
            &self.content_filtered_topic_name,
            &self.related_topic_name,
            &self.filter_class_name,
            &self.filter_expression,
        ];
        for s in names {
            put_string(buf, start, s);
        }
        pad4(buf, start);
        buf.extend_from_slice(&(self.expression_parameters.len() as u32).to_le_bytes());
        for s in &self.expression_parameters {
            put_string(buf, start, s);
        }
        pad4(buf, start);
    }

    /// Bytes [`ContentFilterProperty::emit`] writes, padded to 4.
    pub fn encoded_len(&self) -> usize {
        let string = |s: &String| 4 + (s.len() + 1).div_ceil(4) * 4;
        let names = [
            &self.content_filtered_topic_name,
            &self.related_topic_name,
            &self.filter_class_name,
            &self.filter_expression,
        ];
        names.into_iter().map(string).sum::<usize>()
            + 4
            + self.expression_parameters.iter().map(string).sum::<usize>()
    }
}
