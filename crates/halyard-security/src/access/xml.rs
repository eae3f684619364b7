//! Small helpers over `roxmltree` shared by the governance and permissions readers: element
//! lookup (case-insensitive, as Cyclone DDS compares element names), text values, and errors
//! that carry the line and column of the element at fault.

use roxmltree::{Document, Node};

use super::{AccessError, DomainSet};

/// Parses XML text; a syntax error becomes [`AccessError::Xml`] at its line and column.
pub(super) fn parse(text: &str) -> Result<Document<'_>, AccessError> {
    Document::parse(text).map_err(|e| {
        let pos = e.pos();
        AccessError::Xml {
            line: pos.row,
            column: pos.col,
            message: e.to_string(),
        }
    })
}

/// An [`AccessError::Xml`] at `node`'s start.
pub(super) fn error(node: Node, message: String) -> AccessError {
    let pos = node.document().text_pos_at(node.range().start);
    AccessError::Xml {
        line: pos.row,
        column: pos.col,
        message,
    }
}

/// The line of `node`'s start.
pub(super) fn line(node: Node) -> u32 {
    node.document().text_pos_at(node.range().start).row
}

/// Whether `node` is the element `name` (ASCII case-insensitive).
pub(super) fn is(node: Node, name: &str) -> bool {
    node.is_element() && node.tag_name().name().eq_ignore_ascii_case(name)
}

/// The element children of `node`.
pub(super) fn elements<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(|c| c.is_element())
}

/// The first child element `name`, if any.
pub(super) fn find<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    elements(node).find(|c| is(*c, name))
}

/// The child element `name`, which the schema requires.
pub(super) fn required<'a, 'i>(
    node: Node<'a, 'i>,
    name: &str,
) -> Result<Node<'a, 'i>, AccessError> {
    find(node, name).ok_or_else(|| {
        error(
            node,
            format!("<{}> lacks the required <{name}>", node.tag_name().name()),
        )
    })
}

/// An element the schema does not allow at this place.
pub(super) fn unexpected(node: Node, parent: &str) -> AccessError {
    error(
        node,
        format!(
            "unexpected element <{}> in <{parent}>",
            node.tag_name().name()
        ),
    )
}

/// The element's text, trimmed.
pub(super) fn text<'a>(node: Node<'a, '_>) -> &'a str {
    node.text().unwrap_or("").trim()
}

/// A boolean: `true`/`false` (any case), `1`/`0`.
pub(super) fn boolean(node: Node) -> Result<bool, AccessError> {
    match text(node) {
        t if t.eq_ignore_ascii_case("true") || t == "1" => Ok(true),
        t if t.eq_ignore_ascii_case("false") || t == "0" => Ok(false),
        t => Err(error(
            node,
            format!(
                "<{}> must be true or false, not {t:?}",
                node.tag_name().name()
            ),
        )),
    }
}

/// The required boolean child `name`.
pub(super) fn bool_child(node: Node, name: &str) -> Result<bool, AccessError> {
    boolean(required(node, name)?)
}

/// A `<domains>` element (§9.4.1.2.5.1): `<id>` and `<id_range><min/><max/></id_range>` items.
pub(super) fn domains(node: Node) -> Result<DomainSet, AccessError> {
    let mut ranges = Vec::new();
    for item in elements(node) {
        if is(item, "id") {
            let id = number(item)?;
            ranges.push((id, id));
        } else if is(item, "id_range") {
            let min = find(item, "min").map(number).transpose()?;
            let max = find(item, "max").map(number).transpose()?;
            if min.is_none() && max.is_none() {
                return Err(error(item, "<id_range> needs <min>, <max> or both".into()));
            }
            let (lo, hi) = (min.unwrap_or(0), max.unwrap_or(super::MAX_DOMAIN_ID));
            if lo > hi {
                return Err(error(
                    item,
                    format!("<id_range> min {lo} is above max {hi}"),
                ));
            }
            ranges.push((lo, hi));
        } else {
            return Err(unexpected(item, "domains"));
        }
    }
    if ranges.is_empty() {
        return Err(error(node, "<domains> names no domain".into()));
    }
    Ok(DomainSet { ranges })
}

fn number(node: Node) -> Result<u32, AccessError> {
    let id = text(node)
        .parse::<u32>()
        .ok()
        .filter(|&id| id <= super::MAX_DOMAIN_ID);
    id.ok_or_else(|| {
        error(
            node,
            format!(
                "<{}> must be a domain id from 0 to 230, not {:?}",
                node.tag_name().name(),
                text(node)
            ),
        )
    })
}

/// An XML Schema dateTime as Cyclone DDS accepts it (`DDS_Security_parse_xml_date`):
/// `YYYY-MM-DDTHH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]` (no zone means UTC), as seconds since the
/// Unix epoch (the fraction is dropped). A date without a time, which Cyclone treats as already expired,
/// is an error here.
pub(super) fn date(node: Node) -> Result<i64, AccessError> {
    let t = text(node);
    parse_date(t).ok_or_else(|| {
        error(
            node,
            format!(
                "<{}> {t:?} is not a date and time like 2035-01-01T00:00:00Z ",
                node.tag_name().name()
            ),
        )
    })
}

/// See [`date`].
pub(crate) fn parse_date(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = b.get(r)?;
        if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    let sep = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return None;
    }
    let (y, mo, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (h, mi, s) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let mut i = 19;
    if sep(i, b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let offset = match b.get(i) {
        None => 0,
        Some(b'Z') if b.len() == i + 1 => 0,
        Some(&c @ (b'+' | b'-')) if b.len() == i + 6 && sep(i + 3, b':') => {
            let o = digits(i + 1..i + 3)? * 3600 + digits(i + 4..i + 6)? * 60;
            if c == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub(crate) fn format_date(unix: i64) -> String {
    let days = unix.div_euclid(86400);
    let secs = unix.rem_euclid(86400);
    // Inverse of days_from_civil.
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The document's root element, which must be `<dds>`.
pub(super) fn dds_root<'a, 'i>(doc: &'a Document<'i>) -> Result<Node<'a, 'i>, AccessError> {
    let root = doc.root_element();
    if !is(root, "dds") {
        return Err(error(
            root,
            format!(
                "the root element is <{}>, not <dds>",
                root.tag_name().name()
            ),
        ));
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_cyclone_form() {
        assert_eq!(parse_date("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_date("2035-01-01T00:00:00Z"), Some(2_051_222_400));
        assert_eq!(parse_date("2035-01-01T01:00:00+01:00"), Some(2_051_222_400));
        assert_eq!(parse_date("2034-12-31T23:00:00-01:00"), Some(2_051_222_400));
        assert_eq!(parse_date("2035-01-01T00:00:00.250Z"), Some(2_051_222_400));
        assert_eq!(parse_date("2035-01-01"), None, "a date alone");
        assert_eq!(
            parse_date("2035-01-01T00:00:00"),
            Some(2_051_222_400),
            "UTC"
        );
        assert_eq!(parse_date("2035-13-01T00:00:00Z"), None);
        for t in [0, 2_051_222_400, 1_790_000_123, 951_782_400] {
            assert_eq!(parse_date(&format_date(t)), Some(t), "{}", format_date(t));
        }
        assert_eq!(format_date(951_782_400), "2000-02-29T00:00:00Z");
    }
}
