//! The sans-I/O RTPS 2.5 protocol core of Halyard.
//!
//! It never touches a socket, a thread, the clock or an OS random source: the driver passes
//! `now` and received bytes in ([`Participant::handle_datagram`], [`Participant::handle_timeout`],
//! [`Participant::write`]) and takes datagrams, events and samples out
//! ([`Participant::poll_transmit`], [`Participant::poll_event`], [`Participant::poll_sample`],
//! [`Participant::poll_timeout`]). The same core runs over UDP and over the simulated network.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod admission;
mod buffers;
mod coherent;
pub mod config;
mod deadline;
mod discovery;
mod endpoint_security;
pub mod event;
mod group_access;
mod group_coherent;
mod liveliness;
pub mod matching;
mod outbox;
pub mod pacing;
mod participant;
mod reader;
mod reassembly;
mod relay;
pub mod security;
pub mod time;
mod unmatched_data;
mod writer;

pub use admission::KeyFn;
pub use config::{ParticipantConfig, MAX_QUEUED_EVENTS};
pub use discovery::typelookup::assign::{
    TypeRefusal, MAX_CACHED_VERDICTS, MAX_PENDING_PER_REMOTE, MAX_PENDING_TYPE_DECISIONS,
    MAX_TYPE_REFUSALS, TYPE_LOOKUP_RETRY, TYPE_LOOKUP_TIMEOUT,
};
pub use discovery::typelookup::{
    msg as typelookup_msg, TypeClosure, TypeLookupError, TypeRegistrationError, MAX_CACHED_OBJECTS,
    MAX_IDS_PER_REQUEST, MAX_OBJECTS_PER_TYPE, MAX_OUTSTANDING_REQUESTS, MAX_REGISTERED_TYPES,
};
pub use discovery::QosChangeError;
pub use event::{ChangeKind, Event, QosPolicyId, ReceivedSample};
pub use group_coherent::{
    GroupMark, GROUP_MEMBER_DISCOVERY_WAIT, MAX_GROUP_MEMBERS, MAX_PENDING_GROUP_SETS,
};
pub use halyard_wire as wire;
pub use halyard_xtypes as xtypes;
pub use outbox::Transmit;
pub use participant::{Participant, Stats, WriteDue};
pub use reader::ReaderSpec;
pub use relay::{
    is_service_endpoint, ServiceReader, RELAY_WRITER_NAME, SCOPED_SERVICE_READER_NAME,
    SERVICE_READER_NAME,
};
pub use time::Instant;
pub use writer::delivery::{ReaderDelivery, Reception, MAX_DEPARTED_READERS};
pub use writer::{BatchPolicy, FilterCompiler, NewChange, SampleFilter, WriteError, WriterSpec};

/// A hash map hashed with a seed the caller chooses ([`ParticipantConfig::hash_seed`]), never
/// one drawn from the OS: its iteration order is the same in every run with the same seed, so
/// a simulation replays exactly. Build one with [`seeded_map`].
#[allow(clippy::disallowed_types)] // the one place the std map is named: with a fixed hasher
pub type SeededMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// An empty [`SeededMap`] whose hasher is seeded with `seed`.
pub fn seeded_map<K, V>(seed: u64) -> SeededMap<K, V> {
    SeededMap::with_hasher(foldhash::fast::FixedState::with_seed(seed))
}
