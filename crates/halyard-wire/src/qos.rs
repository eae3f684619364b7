//! QoS policy values as exchanged in discovery (DDS 1.4 §2.2.3, RTPS 2.5 §9.6.3.2 / Table 9.14).
//!
//! These plain types are shared by the protocol core and the public API. Defaults follow the
//! DDS specification unless noted.

use crate::types::Duration;

/// DURABILITY kind (PID_DURABILITY, one u32).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
pub enum DurabilityKind {
    /// Only samples written after the reader matched.
    #[default]
    Volatile = 0,
    /// The writer keeps its history for late joiners.
    TransientLocal = 1,
    /// Kept by a durability service beyond the writer's lifetime.
    Transient = 2,
    /// Kept on permanent storage.
    Persistent = 3,
}

/// RELIABILITY (PID_RELIABILITY: kind u32 (1 = best effort, 2 = reliable), max_blocking_time).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Reliability {
    /// The kind.
    pub kind: ReliabilityKind,
    /// How long a write may block when resources are exhausted.
    pub max_blocking_time: Duration,
}

/// Reliability kind; the wire values are 1 and 2 (RTPS 2.5 §9.3.2).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum ReliabilityKind {
    /// BEST_EFFORT (wire value 1).
    BestEffort,
    /// RELIABLE (wire value 2).
    Reliable,
}

/// HISTORY (PID_HISTORY: kind u32 (0 keep last, 1 keep all), depth i32).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum History {
    /// KEEP_LAST with depth >= 1.
    KeepLast(i32),
    /// KEEP_ALL.
    KeepAll,
}

impl Default for History {
    fn default() -> Self {
        History::KeepLast(1)
    }
}

/// RESOURCE_LIMITS (PID_RESOURCE_LIMITS: three i32, -1 = unlimited).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ResourceLimits {
    /// max_samples (-1 unlimited).
    pub max_samples: i32,
    /// max_instances (-1 unlimited).
    pub max_instances: i32,
    /// max_samples_per_instance (-1 unlimited).
    pub max_samples_per_instance: i32,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits { max_samples: -1, max_instances: -1, max_samples_per_instance: -1 }
    }
}

/// LIVELINESS kind (PID_LIVELINESS: kind u32, lease_duration).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
pub enum LivelinessKind {
    /// AUTOMATIC
    #[default]
    Automatic = 0,
    /// MANUAL_BY_PARTICIPANT
    ManualByParticipant = 1,
    /// MANUAL_BY_TOPIC
    ManualByTopic = 2,
}

/// LIVELINESS policy.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Liveliness {
    /// Kind.
    pub kind: LivelinessKind,
    /// Lease duration.
    pub lease_duration: Duration,
}

impl Default for Liveliness {
    fn default() -> Self {
        Liveliness { kind: LivelinessKind::Automatic, lease_duration: Duration::INFINITE }
    }
}

/// OWNERSHIP kind (PID_OWNERSHIP: u32).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum OwnershipKind {
    /// SHARED
    #[default]
    Shared = 0,
    /// EXCLUSIVE
    Exclusive = 1,
}

/// DESTINATION_ORDER kind (PID_DESTINATION_ORDER: u32).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
pub enum DestinationOrderKind {
    /// BY_RECEPTION_TIMESTAMP
    #[default]
    ByReceptionTimestamp = 0,
    /// BY_SOURCE_TIMESTAMP
    BySourceTimestamp = 1,
}

/// PRESENTATION access scope (the u32 of PID_PRESENTATION: 0, 1 or 2); ordered, since an
/// offered scope satisfies every narrower requested one.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
pub enum PresentationAccessScope {
    /// INSTANCE (wire value 0).
    #[default]
    Instance = 0,
    /// TOPIC (wire value 1).
    Topic = 1,
    /// GROUP (wire value 2).
    Group = 2,
}

/// PRESENTATION (PID_PRESENTATION: access_scope u32, coherent_access u8, ordered_access u8, pad 2).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Presentation {
    /// access_scope.
    pub access_scope: PresentationAccessScope,
    /// coherent_access.
    pub coherent_access: bool,
    /// ordered_access.
    pub ordered_access: bool,
}

/// DURABILITY_SERVICE (PID_DURABILITY_SERVICE).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DurabilityService {
    /// service_cleanup_delay.
    pub service_cleanup_delay: Duration,
    /// history.
    pub history: History,
    /// resource limits.
    pub limits: ResourceLimits,
}

impl Default for DurabilityService {
    fn default() -> Self {
        DurabilityService {
            service_cleanup_delay: Duration::ZERO,
            history: History::KeepLast(1),
            limits: ResourceLimits::default(),
        }
    }
}

/// WRITER_DATA_LIFECYCLE (DDS 1.4 §2.2.3.21; local to the writer, not sent in discovery).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct WriterDataLifecycle {
    /// Unregistering an instance (explicitly, or by deleting the writer) also disposes it.
    pub autodispose_unregistered_instances: bool,
}

impl Default for WriterDataLifecycle {
    fn default() -> Self {
        WriterDataLifecycle { autodispose_unregistered_instances: true }
    }
}

/// READER_DATA_LIFECYCLE (DDS 1.4 §2.2.3.22; local to the reader, not sent in discovery).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ReaderDataLifecycle {
    /// How long the samples of an instance with no writers stay after it became so.
    pub autopurge_nowriter_samples_delay: Duration,
    /// How long the samples of a disposed instance stay after it was disposed.
    pub autopurge_disposed_samples_delay: Duration,
}

impl Default for ReaderDataLifecycle {
    fn default() -> Self {
        ReaderDataLifecycle {
            autopurge_nowriter_samples_delay: Duration::INFINITE,
            autopurge_disposed_samples_delay: Duration::INFINITE,
        }
    }
}

/// The QoS of a discovered or local endpoint, as carried by SEDP (and used for matching).
///
/// Fields absent on the wire take the DDS default for that endpoint kind; note the default
/// reliability differs between writers (RELIABLE, 100 ms) and readers (BEST_EFFORT).
#[derive(Clone, PartialEq, Debug)]
pub struct EndpointQos {
    /// DURABILITY
    pub durability: DurabilityKind,
    /// DURABILITY_SERVICE
    pub durability_service: DurabilityService,
    /// DEADLINE period
    pub deadline: Duration,
    /// LATENCY_BUDGET duration
    pub latency_budget: Duration,
    /// LIVELINESS
    pub liveliness: Liveliness,
    /// RELIABILITY
    pub reliability: Reliability,
    /// DESTINATION_ORDER
    pub destination_order: DestinationOrderKind,
    /// HISTORY
    pub history: History,
    /// RESOURCE_LIMITS
    pub resource_limits: ResourceLimits,
    /// LIFESPAN duration
    pub lifespan: Duration,
    /// OWNERSHIP
    pub ownership: OwnershipKind,
    /// OWNERSHIP_STRENGTH (writers)
    pub ownership_strength: i32,
    /// PRESENTATION
    pub presentation: Presentation,
    /// PARTITION names (empty = the default partition "")
    pub partition: Vec<String>,
    /// TIME_BASED_FILTER minimum separation (readers)
    pub time_based_filter: Duration,
    /// USER_DATA
    pub user_data: Vec<u8>,
    /// TOPIC_DATA
    pub topic_data: Vec<u8>,
    /// GROUP_DATA
    pub group_data: Vec<u8>,
    /// TRANSPORT_PRIORITY
    pub transport_priority: i32,
    /// DATA_REPRESENTATION ids offered/accepted (0 = XCDR1, 2 = XCDR2); empty = `[XCDR1]`.
    pub data_representation: Vec<i16>,
    /// WRITER_DATA_LIFECYCLE (writers; local, not in discovery).
    pub writer_data_lifecycle: WriterDataLifecycle,
    /// READER_DATA_LIFECYCLE (readers; local, not in discovery).
    pub reader_data_lifecycle: ReaderDataLifecycle,
}

impl EndpointQos {
    /// DDS defaults for a DataWriter (RELIABLE with 100 ms max_blocking_time).
    pub fn writer_default() -> Self {
        EndpointQos {
            reliability: Reliability {
                kind: ReliabilityKind::Reliable,
                max_blocking_time: Duration::from_nanos(100_000_000),
            },
            ..Self::reader_default()
        }
    }
    /// DDS defaults for a DataReader (BEST_EFFORT).
    pub fn reader_default() -> Self {
        EndpointQos {
            durability: DurabilityKind::Volatile,
            durability_service: DurabilityService::default(),
            deadline: Duration::INFINITE,
            latency_budget: Duration::ZERO,
            liveliness: Liveliness::default(),
            reliability: Reliability {
                kind: ReliabilityKind::BestEffort,
                max_blocking_time: Duration::from_nanos(100_000_000),
            },
            destination_order: DestinationOrderKind::ByReceptionTimestamp,
            history: History::KeepLast(1),
            resource_limits: ResourceLimits::default(),
            lifespan: Duration::INFINITE,
            ownership: OwnershipKind::Shared,
            ownership_strength: 0,
            presentation: Presentation::default(),
            partition: Vec::new(),
            time_based_filter: Duration::ZERO,
            user_data: Vec::new(),
            topic_data: Vec::new(),
            group_data: Vec::new(),
            transport_priority: 0,
            data_representation: Vec::new(),
            writer_data_lifecycle: WriterDataLifecycle::default(),
            reader_data_lifecycle: ReaderDataLifecycle::default(),
        }
    }
}
