//! (stub until the real module lands: the agreed API only)
/// Nanoseconds since the epoch of a STIX timestamp.
pub fn parse_rfc3339(_s: &str) -> Option<i128> {
    None
}
/// `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub fn format_rfc3339_millis(_unix_millis: i64) -> String {
    String::new()
}
