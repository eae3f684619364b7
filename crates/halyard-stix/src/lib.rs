//! STIX 2.1 for Halyard's threat-intelligence sharing node (`halyard-cti`).
//!
//! No I/O and no DDS here: JSON in, checked values out. [`bundle`] parses a bundle whole or
//! refuses it with the reason and the property; [`validate`] checks one object against the
//! STIX 2.1 specification; [`pattern`] parses the STIX patterning language of indicators;
//! [`time`] reads and writes STIX timestamps;
//! [`marking`] knows the TLP 2.0 (and TLP 1.0) marking definitions and statement markings;
//! [`misp`] converts MISP events to STIX; [`sanitize`] removes or generalises personal and
//! internal data and records each change.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bundle;
pub mod marking;
pub mod misp;
pub mod object;
pub mod pattern;
mod rules;
pub mod sanitize;
mod schema;
pub mod time;
pub mod validate;
