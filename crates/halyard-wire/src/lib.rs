//! RTPS 2.5 wire format: message and submessage views, parameter lists and discovery data.
//!
//! Parsing follows smoltcp's discipline: every length is checked once when a view is built, and
//! after that no accessor can panic. Every malformed input becomes a [`WireError`] that the
//! receiver counts and drops (RTPS 2.5 §8.3.4.1 "rules followed by the message receiver").
//! Emission always writes little-endian.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod discovery;
pub mod error;
pub mod message;
pub mod param;
pub mod qos;
pub mod types;

pub use error::WireError;
pub use message::*;
pub use types::*;
