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
