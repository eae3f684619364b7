//! Halyard: a Data Distribution Service (OMG DDS 1.4 DCPS) over RTPS 2.5/UDP.
//!
//! This crate is the DCPS API. Applications publish typed samples on named topics and
//! subscribe to them; participants in the same domain find each other by themselves (no
//! broker) and QoS policies govern what is delivered and how. The user guide
//! (`docs/guide/` in the repository) covers each subject at length; this page is the map.
//!
//! # Entities
//!
//! - [`DomainParticipant`]: membership of a domain (a number); owns the sockets and threads.
//! - [`Topic`](struct@Topic): a name and a type, made with [`#[derive(halyard::Topic)]`](derive@Topic);
//!   `#[key]` members make instances.
//! - [`Publisher`] / [`Subscriber`]: groups of writers / readers (partitions, presentation).
//! - [`DataWriter`] writes samples; [`DataReader`] receives them into its cache, from which
//!   [`DataReader::take`] or [`DataReader::read`] return [`Sample`]s (data and [`SampleInfo`]).
//!
//! A writer and a reader of the same topic name, type and compatible QoS are matched:
//!
//! ```no_run
//! use halyard::{DataReaderQos, DataWriterQos, DomainParticipant, PublisherQos, SubscriberQos};
//! use std::time::Duration;
//!
//! #[derive(halyard::Topic, Clone, Debug, Default)]
//! struct Reading {
//!     #[key]
//!     sensor: u32,
//!     value: f64,
//! }
//!
//! let dp = DomainParticipant::new(0)?;
//! let topic = dp.create_topic::<Reading>("Readings")?;
//! let writer = dp
//!     .create_publisher(PublisherQos::default())
//!     .create_datawriter(&topic, DataWriterQos::default().keep_last(10))?;
//! let reader = dp
//!     .create_subscriber(SubscriberQos::default())
//!     .create_datareader(&topic, DataReaderQos::default().reliable().keep_last(10))?;
//! writer.wait_for_matched(1, Duration::from_secs(5))?;
//! writer.write(&Reading { sensor: 1, value: 21.5 })?;
//! if reader.wait_for_data(Duration::from_secs(5)) {
//!     for sample in reader.take(10)? {
//!         println!("{:?} ({:?})", sample.data, sample.info.instance_state);
//!     }
//! }
//! # Ok::<(), halyard::Error>(())
//! ```
//!
//! # QoS
//!
//! Each entity has its own QoS type ([`DataWriterQos`], [`DataReaderQos`], [`TopicQos`],
//! [`PublisherQos`], [`SubscriberQos`], [`DomainParticipantQos`]) holding exactly its
//! policies, with the DDS 1.4 defaults and a builder method per policy. Inconsistent values are
//! refused with [`Error::BadQos`] naming the policy ([`QosPolicyId`]); what Halyard does not
//! implement is [`Error::Unsupported`], never ignored. [`QosProvider`] reads DDS-XML profiles
//! into the same types.
//!
//! ```
//! use halyard::qos::{Durability, History, ReliabilityKind};
//! use halyard::DataReaderQos;
//!
//! let qos = DataReaderQos::default()
//!     .reliable()
//!     .keep_all()
//!     .durability(Durability::TransientLocal);
//! assert_eq!(qos.reliability.kind, ReliabilityKind::Reliable);
//! assert_eq!(qos.history, History::KeepAll);
//! assert!(qos.validate().is_ok());
//! ```
//!
//! # Waiting and reacting
//!
//! Block with [`DataReader::wait_for_data`] or a [`WaitSet`] of [`ReadCondition`]s,
//! [`QueryCondition`]s, [`StatusCondition`]s and [`GuardCondition`]s; or set one listener per
//! entity ([`DataReaderListener`], [`DataWriterListener`]). Statuses (matched, deadline
//! missed, liveliness, incompatible QoS ...) are read with the entity's `*_status()` getters,
//! counters with [`DataWriter::stats`] and [`DataReader::stats`].
//!
//! # Types known at run time
//!
//! [`UntypedTopic`], [`UntypedDataWriter`] and [`UntypedDataReader`] carry serialized samples
//! of a type described by XTypes (from IDL, or learnt from the network through TypeLookup);
//! [`xtypes`] decodes them to dynamic values. [`ContentFilteredTopic`] and query conditions take
//! DDS SQL expressions ([`filter`]) on typed and untyped endpoints alike.
//!
//! # Configuration
//!
//! A participant takes its configuration in code, [`ParticipantOptions`] (network interface,
//! initial peers, security identity, embedded durability service ...). The library reads no
//! environment variable unless asked: [`ParticipantOptions::from_env`] starts from the
//! `HALYARD_*` variables the command-line tools document.
//!
//! # Errors
//!
//! Every call returns [`Result`]; [`Error`] maps to the DDS return codes and keeps the error
//! it wraps as its `source()`.
//!
//! # Cargo features
//!
//! All on by default: `security` (DDS Security 1.1 builtin plugins; OpenSSL and AWS-LC),
//! `durability` (TRANSIENT and PERSISTENT through the [`durability`] service; SQLite), `xml`
//! ([`QosProvider`]), `typelookup` ([`DomainParticipant::lookup_type`]). Without them the crate
//! is a core DDS that links none of OpenSSL, AWS-LC or SQLite; asking for what a missing
//! feature provides is [`Error::Unsupported`] naming the feature.
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
pub use qos::{
    DataReaderQos, DataWriterQos, DomainParticipantQos, PublisherQos, SubscriberQos, TopicQos,
};
pub use qos_profile::QosProvider;
pub use reader::{DataReader, Sample, Selector};
pub use status::{
    DeadlineMissedStatus, IncompatibleQosStatus, InstanceHandle, InstanceState,
    LivelinessChangedStatus, LivelinessLostStatus, MatchedStatus, ReaderStats, SampleInfo,
    SampleState, StateMask, ViewState, WriterStats,
};
pub use topic_name::{check_topic_name, TopicNameError, MAX_TOPIC_NAME_LEN};
pub use untyped::{
    KeySupport, OwnedTypeDescription, Untyped, UntypedContentFilteredTopic, UntypedDataReader,
    UntypedDataWriter, UntypedTopic, UntypedType,
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
