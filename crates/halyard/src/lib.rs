//! Halyard: a Data Distribution Service (OMG DDS 1.4 DCPS) over RTPS 2.5/UDP.
//!
//! ```no_run
//! use halyard::{DomainParticipant, GroupQos, qos::EndpointQos, Topic};
//!
//! #[derive(halyard::Topic, Clone, Debug, Default)]
//! struct Reading { #[key] sensor: u32, value: f64 }
//!
//! let dp = DomainParticipant::new(0)?;
//! let topic: Topic<Reading> = dp.create_topic("Readings")?;
//! let writer = dp.create_publisher(GroupQos::default()).create_datawriter(&topic, EndpointQos::writer_default())?;
//! writer.write(&Reading { sensor: 1, value: 21.5 })?;
//! # Ok::<(), halyard::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// Lets `#[derive(Topic)]`'s `::halyard::cdr` paths resolve inside this crate too.
extern crate self as halyard;

#[cfg(test)]
mod api_tests;
pub mod builtin;
mod clock;
pub mod condition;
pub mod durability;
mod dynamic_key;
pub mod error;
pub mod filter;
mod from_env;
mod group;
mod history;
pub mod listener;
pub mod location;
mod participant;
pub mod qos;
pub mod qos_profile;
mod reader;
mod runtime;
mod security_warning;
pub mod status;
mod topic_name;
mod untyped;
mod writer;

pub use builtin::{
    BuiltinReader, BuiltinTopic, EndpointTypeInformation, ParticipantBuiltinTopicData,
    PublicationBuiltinTopicData, SubscriptionBuiltinTopicData,
};
pub use clock::wall_clock;
pub use condition::{
    Condition, GuardCondition, QueryCondition, ReadCondition, StatusCondition, WaitSet,
};
pub use dynamic_key::DynamicKeySupport;
pub use error::{Error, Result, SecurityError};
pub use filter::{ContentFilteredTopic, Filter, FilterError};
pub use from_env::INTERFACE_ENV;
pub use halyard_cdr as cdr;
pub use halyard_cdr::{CdrType, Topic as TopicDerive};
pub use halyard_core::xtypes;
pub use halyard_core::{Event, QosPolicyId, ReaderDelivery, Reception};
pub use halyard_derive::Topic;
pub use halyard_net::{FaultConfig, FaultStats};
pub use halyard_wire::{Guid, GuidPrefix, SequenceNumber, Time};
pub use history::MAX_CACHED_SAMPLES_DEFAULT;
pub use listener::{DataReaderListener, DataWriterListener, StatusMask};
pub use participant::{
    DomainParticipant, ParticipantOptions, Publisher, Subscriber, Topic, SECURITY_ENV,
};
pub use qos::GroupQos;
pub use qos_profile::QosProvider;
pub use reader::{DataReader, Sample, Selector};
pub use status::{
    DeadlineMissedStatus, IncompatibleQosStatus, InstanceHandle, InstanceState,
    LivelinessChangedStatus, LivelinessLostStatus, MatchedStatus, ReaderStats, SampleInfo,
    SampleState, StateMask, ViewState, WriterStats,
};
pub use topic_name::{check_topic_name, TopicNameError, MAX_TOPIC_NAME_LEN};
pub use untyped::{
    KeySupport, OwnedTypeDescription, Untyped, UntypedDataReader, UntypedDataWriter, UntypedTopic,
    UntypedType,
};
pub use writer::{Batching, DataWriter};

/// The Rust examples of the repository's README, compiled (and run, unless marked `no_run`) as
/// doctests so that they keep matching the API.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of the user guide's QoS page, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/qos.md")]
pub struct GuideQosDoctests;

/// The Rust examples of the user guide's types and IDL page, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/types-and-idl.md")]
pub struct GuideTypesDoctests;
