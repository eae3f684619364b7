//! (stub until the real module lands: the agreed API only)
/// Limits.
#[derive(Clone, Debug)]
pub struct Limits {
    /// bytes
    pub max_bytes: usize,
    /// objects
    pub max_objects: usize,
    /// depth
    pub max_depth: usize,
    /// string bytes
    pub max_string_bytes: usize,
    /// properties
    pub max_properties: usize,
}
/// Why an object or bundle is refused.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidationError {
    /// Position in the bundle.
    pub index: Option<usize>,
    /// The object's id, when known.
    pub id: Option<String>,
    /// The property.
    pub property: String,
    /// Why.
    pub reason: String,
}
impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "property `{}`: {}", self.property, self.reason)
    }
}
impl std::error::Error for ValidationError {}
/// One object.
pub fn object(_v: &serde_json::Value) -> Result<crate::object::StixObject, ValidationError> {
    Err(ValidationError {
        index: None,
        id: None,
        property: String::new(),
        reason: "stub".into(),
    })
}
