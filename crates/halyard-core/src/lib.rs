//! The sans-I/O RTPS 2.5 protocol core of Halyard.
//!
//! It never touches a socket, a thread, the clock or an OS random source: the driver passes
//! `now` and received bytes in ([`Participant::handle_datagram`], [`Participant::handle_timeout`],
//! [`Participant::write`]) and takes datagrams, events and samples out
//! ([`Participant::poll_transmit`], [`Participant::poll_event`], [`Participant::poll_sample`],
//! [`Participant::poll_timeout`]). The same core runs over UDP and over the simulated network.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
mod discovery;
pub mod event;
pub mod matching;
mod outbox;
mod participant;
mod reader;
mod reassembly;
pub mod time;
mod writer;

pub use config::ParticipantConfig;
pub use event::{ChangeKind, Event, QosPolicyId, ReceivedSample};
pub use halyard_wire as wire;
pub use outbox::Transmit;
pub use participant::{Participant, Stats, MAX_QUEUED_EVENTS};
pub use reader::ReaderSpec;
pub use time::Instant;
pub use writer::{BatchPolicy, NewChange, WriteError, WriterSpec};
