//! build.rs helper.
/// Placeholder.
#[derive(Debug, Default)]
pub struct Builder;
