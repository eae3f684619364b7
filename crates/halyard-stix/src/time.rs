//! STIX timestamps (STIX 2.1 §3.2): RFC 3339 in UTC, `YYYY-MM-DDTHH:MM:SS[.s+]Z`.
//!
//! Written by hand so the crate needs no date library: a calendar date maps to a count of
//! days since 1970-01-01 with the proleptic Gregorian "days from civil" arithmetic (eras of
//! 400 years, March-based years so the leap day falls last), and back again. Parsing is
//! strict: only the `Z` offset, no leap second (`:60`), no `24:00`, and the day must exist
//! in its month. Fractions beyond nanoseconds are accepted and truncated.

const NANOS_PER_SECOND: i128 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;

/// Days since 1970-01-01 of a proleptic Gregorian date (`month` 1..=12, `day` 1..=31).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let m = i64::from(month);
    let day_of_year = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date (`year`, `month`, `day`) of a count of days since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // `day` is in 1..=31 and `month` in 1..=12 by construction.
    (year, month as u32, day as u32)
}

fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Formats milliseconds since the Unix epoch as a STIX timestamp with millisecond precision,
/// e.g. `2024-05-01T12:00:00.000Z`.
pub fn format_rfc3339_millis(unix_millis: i64) -> String {
    let millis = unix_millis.rem_euclid(1000);
    let seconds = unix_millis.div_euclid(1000);
    let days = seconds.div_euclid(SECONDS_PER_DAY);
    let second_of_day = seconds.rem_euclid(SECONDS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

/// Reads `n` ASCII digits of `bytes` at `at` as a number.
fn digits(bytes: &[u8], at: usize, n: usize) -> Option<u32> {
    let field = bytes.get(at..at + n)?;
    field.iter().try_fold(0u32, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

/// Parses a STIX timestamp (`YYYY-MM-DDTHH:MM:SS[.s+]Z`) into nanoseconds since the Unix
/// epoch. `None` for any other form: another offset than `Z`, a missing field, a day that
/// does not exist (February 30), `24:00`, a leap second, or an empty fraction.
pub fn parse_rfc3339(s: &str) -> Option<i128> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = i64::from(digits(b, 0, 4)?);
    let month = digits(b, 5, 2)?;
    let day = digits(b, 8, 2)?;
    let (hour, minute, second) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if year == 0 || !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let nanos = fraction_nanos(b.get(19..)?)?;
    let days = days_from_civil(year, month, day);
    let seconds = days * SECONDS_PER_DAY + i64::from(hour * 3600 + minute * 60 + second);
    Some(i128::from(seconds) * NANOS_PER_SECOND + nanos)
}

/// The fraction and the closing `Z` of a timestamp: `Z` or `.d+Z`, as nanoseconds.
fn fraction_nanos(rest: &[u8]) -> Option<i128> {
    match rest {
        [b'Z'] => Some(0),
        [b'.', digits @ .., b'Z'] if !digits.is_empty() => {
            let mut nanos: i128 = 0;
            for (i, &d) in digits.iter().enumerate() {
                if !d.is_ascii_digit() {
                    return None;
                }
                if i < 9 {
                    nanos = nanos * 10 + i128::from(d - b'0');
                }
            }
            let scale = 9usize.saturating_sub(digits.len());
            Some(nanos * 10i128.pow(scale as u32))
        }
        _ => None,
    }
}

/// Whether `s` is a STIX timestamp that [`parse_rfc3339`] accepts.
pub fn is_stix_timestamp(s: &str) -> bool {
    parse_rfc3339(s).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_epoch_and_a_known_instant() {
        assert_eq!(format_rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_rfc3339_millis(1_714_564_800_000),
            "2024-05-01T12:00:00.000Z"
        );
        assert_eq!(format_rfc3339_millis(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn parse_and_format_agree_over_many_days() {
        let mut millis: i64 = -5_000_000_000_000;
        while millis < 5_000_000_000_000 {
            let text = format_rfc3339_millis(millis);
            assert_eq!(
                parse_rfc3339(&text),
                Some(i128::from(millis) * 1_000_000),
                "{text}"
            );
            millis += 7_654_321_987;
        }
    }

    #[test]
    fn accepts_the_stix_forms() {
        assert_eq!(
            parse_rfc3339("1970-01-01T00:00:01Z"),
            Some(NANOS_PER_SECOND)
        );
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00.5Z"), Some(500_000_000));
        assert_eq!(
            parse_rfc3339("1970-01-01T00:00:00.123456789123Z"),
            Some(123_456_789)
        );
        assert!(is_stix_timestamp("2000-02-29T23:59:59.999Z"));
        assert!(is_stix_timestamp("2024-02-29T00:00:00Z"));
    }

    #[test]
    fn refuses_what_is_not_a_stix_timestamp() {
        for bad in [
            "",
            "2016-05-12",
            "2016-05-12T08:17:27",
            "2016-05-12T08:17:27+00:00",
            "2016-05-12T08:17:27.Z",
            "2016-05-12t08:17:27Z",
            "2016-05-12T08:17:27z",
            "2016-02-30T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2016-13-01T00:00:00Z",
            "2016-00-01T00:00:00Z",
            "2016-01-00T00:00:00Z",
            "2016-04-31T00:00:00Z",
            "2016-05-12T24:00:00Z",
            "2016-05-12T23:60:00Z",
            "2016-05-12T23:59:60Z",
            "0000-01-01T00:00:00Z",
            "2016-05-12T08:17:27.1a2Z",
            "+016-05-12T08:17:27Z",
            "2016-05-12T08:17:27ZZ",
            "２016-05-12T08:17:27Z",
        ] {
            assert!(!is_stix_timestamp(bad), "{bad:?}");
        }
    }
}
