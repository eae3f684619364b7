//! (stub until the real module lands: the agreed API only)
/// Rules.
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize, PartialEq)]
pub struct Rules {}
/// Compiled rules.
pub struct Sanitizer;
/// A bad rule.
#[derive(Debug)]
pub struct RuleError;
impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("rule")
    }
}
impl Sanitizer {
    /// Compiles.
    pub fn new(_rules: &Rules) -> Result<Sanitizer, RuleError> {
        Ok(Sanitizer)
    }
}
/// One change.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Change {
    /// JSON pointer.
    pub path: String,
    /// Rule.
    pub rule: String,
    /// Before.
    pub before: String,
    /// After.
    pub after: String,
}
impl Sanitizer {
    /// Sanitises in place.
    pub fn sanitize(&self, _obj: &mut serde_json::Map<String, serde_json::Value>) -> Vec<Change> {
        Vec::new()
    }
}
