//! Python exceptions: `DDSError` and one subclass per kind of failure, with the Rust error's
//! message (what and why), so that callers can catch what they can handle.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    halyard,
    DDSError,
    PyException,
    "Base of every Halyard error."
);
create_exception!(
    halyard,
    BadParameterError,
    DDSError,
    "An argument is invalid."
);
create_exception!(
    halyard,
    QosError,
    DDSError,
    "A QoS policy value is invalid, inconsistent or immutable; the message names the policy."
);
create_exception!(
    halyard,
    UnsupportedError,
    DDSError,
    "A valid request Halyard does not implement."
);
create_exception!(
    halyard,
    DDSTimeoutError,
    DDSError,
    "A blocking operation ran out of time."
);
create_exception!(
    halyard,
    PreconditionNotMetError,
    DDSError,
    "The call is not allowed in the entity's state."
);
create_exception!(
    halyard,
    OutOfResourcesError,
    DDSError,
    "A configured resource limit was reached."
);
create_exception!(
    halyard,
    AlreadyDeletedError,
    DDSError,
    "The entity was closed or deleted."
);
create_exception!(
    halyard,
    SerializationError,
    DDSError,
    "A sample could not be serialized or deserialized."
);
create_exception!(
    halyard,
    SampleTypeError,
    DDSError,
    "A sample does not match the topic's type (wrong class, member or value)."
);
create_exception!(
    halyard,
    TransportError,
    DDSError,
    "The network could not be set up."
);

/// Maps a Halyard error to its Python exception.
pub fn to_py(e: halyard::Error) -> PyErr {
    use halyard::Error as E;
    let msg = e.to_string();
    match e {
        E::BadQos { .. } | E::ImmutablePolicy { .. } => QosError::new_err(msg),
        E::Unsupported { .. } => UnsupportedError::new_err(msg),
        E::Timeout => DDSTimeoutError::new_err(msg),
        E::PreconditionNotMet(_) | E::NotEnabled => PreconditionNotMetError::new_err(msg),
        E::OutOfResources(_) => OutOfResourcesError::new_err(msg),
        E::AlreadyDeleted => AlreadyDeletedError::new_err(msg),
        E::Serialization(_) => SerializationError::new_err(msg),
        E::BadParameter(_) | E::BadTopicName(_) | E::BadFilter(_) | E::BadProfile { .. } => {
            BadParameterError::new_err(msg)
        }
        E::Transport(_) | E::Interface(_) => TransportError::new_err(msg),
        _ => DDSError::new_err(msg),
    }
}

/// Registers the exceptions in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DDSError", py.get_type_bound::<DDSError>())?;
    m.add(
        "BadParameterError",
        py.get_type_bound::<BadParameterError>(),
    )?;
    m.add("QosError", py.get_type_bound::<QosError>())?;
    m.add("UnsupportedError", py.get_type_bound::<UnsupportedError>())?;
    m.add("DDSTimeoutError", py.get_type_bound::<DDSTimeoutError>())?;
    m.add(
        "PreconditionNotMetError",
        py.get_type_bound::<PreconditionNotMetError>(),
    )?;
    m.add(
        "OutOfResourcesError",
        py.get_type_bound::<OutOfResourcesError>(),
    )?;
    m.add(
        "AlreadyDeletedError",
        py.get_type_bound::<AlreadyDeletedError>(),
    )?;
    m.add(
        "SerializationError",
        py.get_type_bound::<SerializationError>(),
    )?;
    m.add("SampleTypeError", py.get_type_bound::<SampleTypeError>())?;
    m.add("TransportError", py.get_type_bound::<TransportError>())?;
    Ok(())
}
