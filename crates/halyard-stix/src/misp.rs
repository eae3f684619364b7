//! (stub until the real module lands: the agreed API only)
/// A MISP event that cannot be converted.
#[derive(Debug)]
pub struct MispError(pub String);
impl std::fmt::Display for MispError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
/// MISP event → STIX objects.
pub fn event_to_stix(
    _event: &serde_json::Value,
    _now_millis: i64,
) -> Result<Vec<serde_json::Value>, MispError> {
    Err(MispError("stub".into()))
}
