//! Python back end.

use halyard_idl::Spec;

use crate::{Error, TypeSet};

/// Generates Python modules (not written yet: returns an error saying so).
pub fn generate(_spec: &Spec, _types: &TypeSet) -> Result<Vec<(String, String)>, Error> {
    Err(Error::Config("the Python back end is not implemented yet"))
}
