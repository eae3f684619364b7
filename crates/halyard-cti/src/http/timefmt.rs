//! RFC 3339 timestamps as TAXII 2.1 writes them (§2.1 "timestamp": UTC, `Z`, the store's
//! microsecond precision), to and from microseconds since the Unix epoch.
//!
//! Parsing accepts what clients send in `added_after` and the REST API's `since`/`until`:
//! a date, `T` (or `t`, or a space), a time with optional fraction (extra digits past the
//! microsecond are truncated), and `Z` or a numeric offset.

/// Microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn format_us(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// An RFC 3339 timestamp as microseconds since the epoch; `None` if it is not one.
pub fn parse_us(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b.len() > 40 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 {
        return None;
    }
    // A leap second is read as the last second of its minute.
    if sec > 60 {
        return None;
    }
    let sec = sec.min(59);
    let mut i = 19;
    let mut frac_us = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 6 {
                frac_us = frac_us * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..6 {
            frac_us *= 10;
        }
    }
    let offset_secs = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            if oh > 23 || om > 59 {
                return None;
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_secs;
    Some(secs * 1_000_000 + frac_us)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_at_microsecond_precision() {
        assert_eq!(format_us(0), "1970-01-01T00:00:00.000000Z");
        let us = parse_us("2016-11-01T03:04:05.123456Z").unwrap();
        assert_eq!(format_us(us), "2016-11-01T03:04:05.123456Z");
        assert_eq!(parse_us("2016-11-01T03:04:05Z"), Some(us - 123_456));
        assert_eq!(parse_us("2016-11-01T03:04:05.1234569Z"), Some(us));
        assert_eq!(parse_us("2016-11-01T04:04:05.123456+01:00"), Some(us));
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
            "+016-11-01T00:00:00Z",
        ] {
            assert_eq!(parse_us(bad), None, "{bad}");
        }
    }
}
