//! TAXII 2.1 timestamps (§2.1 "timestamp": RFC 3339 in UTC with `Z`) at the store's
//! microsecond precision, to and from microseconds since the Unix epoch. The calendar
//! arithmetic is `halyard_stix::time`'s; this adds only the sixth digit of the fraction.

use halyard_stix::time::{format_rfc3339_millis, parse_rfc3339};

/// Microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn format_us(us: i64) -> String {
    let millis = format_rfc3339_millis(us.div_euclid(1000));
    // `YYYY-MM-DDTHH:MM:SS` is the first 19 characters of the millisecond form.
    format!("{}.{:06}Z", &millis[..19], us.rem_euclid(1_000_000))
}

/// A TAXII timestamp as microseconds since the epoch (digits past the microsecond are
/// dropped); `None` if it is not one.
pub fn parse_us(s: &str) -> Option<i64> {
    let ns = parse_rfc3339(s)?;
    i64::try_from(ns.div_euclid(1000)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_at_microsecond_precision() {
        assert_eq!(format_us(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(format_us(-1), "1969-12-31T23:59:59.999999Z");
        let us = parse_us("2016-11-01T03:04:05.123456Z").unwrap();
        assert_eq!(format_us(us), "2016-11-01T03:04:05.123456Z");
        assert_eq!(parse_us("2016-11-01T03:04:05Z"), Some(us - 123_456));
        assert_eq!(parse_us("2016-11-01T03:04:05.1234569Z"), Some(us));
        assert_eq!(
            format_us(parse_us("2024-02-29T23:59:59.5Z").unwrap()),
            "2024-02-29T23:59:59.500000Z"
        );
    }

    #[test]
    fn what_is_not_a_timestamp_is_refused() {
        for bad in [
            "",
            "yesterday",
            "2016-11-01",
            "2016-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2016-11-01T00:00:00",
            "2016-11-01T00:00:00.Z",
            "2016-11-01T00:00:00Zjunk",
        ] {
            assert_eq!(parse_us(bad), None, "{bad}");
        }
    }
}
