//! The threat-intelligence sharing node of Halyard (`halyard-cti`): organisations share STIX
//! 2.1 objects in real time over DDS, grouped into sectors by the Partition QoS, protected by
//! DDS Security according to each object's TLP marking, sanitised and reviewed before they
//! leave an organisation, kept in an embedded database and served over TAXII 2.1.
//!
//! The pure STIX logic (validation, patterns, markings, MISP conversion, sanitisation) is the
//! `halyard-stix` crate; this crate is the node around it: [`config`], [`store`] (SQLite),
//! [`node`] (the pipeline), [`dds`] (topics, QoS, security), [`http`] (TAXII 2.1 and the REST
//! API), [`community`] (CA, identities and signed documents for a whole community).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// An application reads clocks (the clock ban is for the protocol core).
#![allow(clippy::disallowed_methods)]

pub mod accounts;
pub mod community;
pub mod config;
pub mod dds;
pub mod demo;
pub mod feed;
pub mod http;
pub mod ids;
pub mod ingest;
pub mod node;
pub mod presence;
pub mod store;
