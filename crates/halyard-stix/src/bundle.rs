//! (stub until the real module lands: the agreed API only)
use crate::object::StixObject;
use crate::validate::{Limits, ValidationError};
/// A bundle, envelope or single object, all or nothing.
pub fn parse(_bytes: &[u8], _limits: &Limits) -> Result<Vec<StixObject>, ValidationError> {
    Err(ValidationError {
        index: None,
        id: None,
        property: String::new(),
        reason: "stub".into(),
    })
}
