//! The QoS policies (DDS 1.4 §2.2.3) as the API writes them: enums for every kind, a
//! [`std::time::Duration`] for every duration ([`INFINITE`] for DURATION_INFINITE) and
//! `Option<u32>` for every limit (`None` for LENGTH_UNLIMITED). The entity QoS types in
//! [`super::entity`] are made of these; [`super::convert`] maps them to the wire's.

use std::time::Duration;

/// DURATION_INFINITE: a deadline that never passes, a lease that never expires, samples that
/// never expire. Every duration from `i32::MAX` seconds up means infinite on the wire (RTPS
/// 2.5 §9.3.2), and reads back as this.
pub const INFINITE: Duration = Duration::MAX;

/// DURABILITY (DDS 1.4 §2.2.3.4): what a late-joining reader gets of what was written before
/// it matched. Ordered: a writer offering a kind satisfies readers requesting any lower one.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub enum Durability {
    /// VOLATILE: only samples written after the reader matched (the default).
    #[default]
    Volatile,
    /// TRANSIENT_LOCAL: the writer keeps its history for late joiners.
    TransientLocal,
    /// TRANSIENT: a durability service keeps the samples beyond the writer's lifetime.
    Transient,
    /// PERSISTENT: as TRANSIENT, on permanent storage.
    Persistent,
}

/// HISTORY (DDS 1.4 §2.2.3.18): how many samples per instance a writer or reader keeps.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum History {
    /// KEEP_LAST with this depth (at least 1): the newest samples of each instance.
    KeepLast(u32),
    /// KEEP_ALL: every sample, up to RESOURCE_LIMITS.
    KeepAll,
}

impl Default for History {
    /// KEEP_LAST 1.
    fn default() -> Self {
        History::KeepLast(1)
    }
}

/// RESOURCE_LIMITS (DDS 1.4 §2.2.3.19): bounds on what a history holds; `None` is
/// LENGTH_UNLIMITED (the default for each).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ResourceLimits {
    /// max_samples: samples in all instances together.
    pub max_samples: Option<u32>,
    /// max_instances.
    pub max_instances: Option<u32>,
    /// max_samples_per_instance.
    pub max_samples_per_instance: Option<u32>,
}

/// DURABILITY_SERVICE (DDS 1.4 §2.2.3.5, writers and topics): what a durability service keeps
/// of a TRANSIENT or PERSISTENT writer's samples, and how long after the writer went.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DurabilityService {
    /// service_cleanup_delay: how long the service keeps an instance's samples after it
    /// has no writers and was disposed (default zero).
    pub service_cleanup_delay: Duration,
    /// history_kind and history_depth (default KEEP_LAST 1).
    pub history: History,
    /// max_samples, max_instances and max_samples_per_instance (default unlimited).
    pub resource_limits: ResourceLimits,
}

impl Default for DurabilityService {
    fn default() -> Self {
        DurabilityService {
            service_cleanup_delay: Duration::ZERO,
            history: History::KeepLast(1),
            resource_limits: ResourceLimits::default(),
        }
    }
}

/// RELIABILITY kind (DDS 1.4 §2.2.3.14). Ordered: a RELIABLE writer satisfies both kinds of
/// reader.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum ReliabilityKind {
    /// BEST_EFFORT: a lost sample is not repaired.
    BestEffort,
    /// RELIABLE: every sample reaches every matched reliable reader (within HISTORY).
    Reliable,
}

/// RELIABILITY (DDS 1.4 §2.2.3.14). Its default differs by entity: RELIABLE for a DataWriter,
/// BEST_EFFORT for a DataReader and a Topic, max_blocking_time 100 ms for all.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Reliability {
    /// The kind.
    pub kind: ReliabilityKind,
    /// How long a write may block while the writer's history is full (reliable writers).
    pub max_blocking_time: Duration,
}

/// The default RELIABILITY max_blocking_time (DDS 1.4 §2.2.3.14).
pub(crate) const MAX_BLOCKING_TIME_DEFAULT: Duration = Duration::from_millis(100);

/// LIVELINESS kind (DDS 1.4 §2.2.3.11). Ordered from the weakest to the strictest assertion.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub enum LivelinessKind {
    /// AUTOMATIC: the participant asserts it while it runs (the default).
    #[default]
    Automatic,
    /// MANUAL_BY_PARTICIPANT: the application asserts any entity of the participant.
    ManualByParticipant,
    /// MANUAL_BY_TOPIC: the application asserts the writer itself (by writing, or with
    /// `assert_liveliness`).
    ManualByTopic,
}

/// LIVELINESS (DDS 1.4 §2.2.3.11): how a writer shows it is alive, and how long it may stay
/// silent.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Liveliness {
    /// The kind (default AUTOMATIC).
    pub kind: LivelinessKind,
    /// The lease (default [`INFINITE`]: no lease).
    pub lease_duration: Duration,
}

impl Default for Liveliness {
    fn default() -> Self {
        Liveliness {
            kind: LivelinessKind::Automatic,
            lease_duration: INFINITE,
        }
    }
}

/// OWNERSHIP (DDS 1.4 §2.2.3.9): whether several writers may update one instance.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Ownership {
    /// SHARED: every writer's updates reach the readers (the default).
    #[default]
    Shared,
    /// EXCLUSIVE: only the strongest live writer's (OWNERSHIP_STRENGTH).
    Exclusive,
}

/// DESTINATION_ORDER (DDS 1.4 §2.2.3.17): the order a reader applies updates of an instance
/// in. Ordered: BY_SOURCE_TIMESTAMP offered satisfies both.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub enum DestinationOrder {
    /// BY_RECEPTION_TIMESTAMP (the default).
    #[default]
    ByReceptionTimestamp,
    /// BY_SOURCE_TIMESTAMP.
    BySourceTimestamp,
}

/// PRESENTATION access scope (DDS 1.4 §2.2.3.6): how far coherent and ordered access reach.
/// Ordered: a publisher offering a scope satisfies subscribers requesting any narrower one.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub enum PresentationAccessScope {
    /// INSTANCE: changes to one instance (the default).
    #[default]
    Instance,
    /// TOPIC: changes by one writer, across its instances.
    Topic,
    /// GROUP: changes by all the writers of a publisher.
    Group,
}

/// PRESENTATION (DDS 1.4 §2.2.3.6, publishers and subscribers): coherent sets and ordered
/// access, at an access scope.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Presentation {
    /// access_scope.
    pub access_scope: PresentationAccessScope,
    /// coherent_access: changes between `begin_coherent_changes` and `end_coherent_changes`
    /// reach the readers together.
    pub coherent_access: bool,
    /// ordered_access: readers see changes in the order they were made.
    pub ordered_access: bool,
}

/// WRITER_DATA_LIFECYCLE (DDS 1.4 §2.2.3.21; local to the writer, not announced).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct WriterDataLifecycle {
    /// Unregistering an instance (explicitly, or by deleting the writer) also disposes it
    /// (default true).
    pub autodispose_unregistered_instances: bool,
}

impl Default for WriterDataLifecycle {
    fn default() -> Self {
        WriterDataLifecycle {
            autodispose_unregistered_instances: true,
        }
    }
}

/// READER_DATA_LIFECYCLE (DDS 1.4 §2.2.3.22; local to the reader, not announced).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ReaderDataLifecycle {
    /// How long the samples of an instance with no writers stay after it became so (default
    /// [`INFINITE`]).
    pub autopurge_nowriter_samples_delay: Duration,
    /// How long the samples of a disposed instance stay after it was disposed (default
    /// [`INFINITE`]).
    pub autopurge_disposed_samples_delay: Duration,
}

impl Default for ReaderDataLifecycle {
    fn default() -> Self {
        ReaderDataLifecycle {
            autopurge_nowriter_samples_delay: INFINITE,
            autopurge_disposed_samples_delay: INFINITE,
        }
    }
}

/// ENTITY_FACTORY (DDS 1.4 §2.2.3.20): whether the entities a publisher or subscriber
/// creates are enabled at once (the default) or wait for their `enable`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct EntityFactory {
    /// Enable created entities at once.
    pub autoenable_created_entities: bool,
}

impl Default for EntityFactory {
    fn default() -> Self {
        EntityFactory {
            autoenable_created_entities: true,
        }
    }
}
