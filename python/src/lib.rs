//! `halyard._native`: the native half of the `halyard` Python package (PyO3). The Python
//! modules (`python/halyard/*.py`) give the public API; this module holds what must be fast
//! or must touch Halyard: the type support (XTypes types of IDL classes, sample
//! (de)serialization walking the Python objects), the DCPS entities over Halyard's untyped
//! endpoints, listeners, conditions and WaitSets, and the exceptions.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// pyo3 0.22's #[pymethods] expansion converts PyErr into PyErr; newer clippy flags it.
#![allow(clippy::useless_conversion)]

mod entities;
mod errors;
mod fast;
mod keyscan;
mod listeners;
mod qos;
mod shape;
mod types;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<types::TypeSupport>()?;
    m.add_function(wrap_pyfunction!(types::idl_type_objects, m)?)?;
    m.add_class::<entities::Participant>()?;
    m.add_class::<entities::NativeTopic>()?;
    m.add_class::<entities::NativePublisher>()?;
    m.add_class::<entities::NativeSubscriber>()?;
    m.add_class::<entities::NativeWriter>()?;
    m.add_class::<entities::NativeReader>()?;
    m.add_class::<entities::PySampleInfo>()?;
    m.add_class::<listeners::NativeReadCondition>()?;
    m.add_class::<listeners::NativeStatusCondition>()?;
    m.add_class::<listeners::NativeGuardCondition>()?;
    m.add_class::<listeners::NativeWaitSet>()?;
    Ok(())
}
