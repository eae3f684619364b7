//! The QoS of each kind of entity (DDS 1.4 §2.2.3, the "Concerns" column): each type holds
//! exactly the policies of its entity, so a reader-only policy cannot be set on a writer, nor
//! a writer-only one on a reader. Each has `Default` (the DDS 1.4 defaults of that entity)
//! and a chainable builder method per policy.

use super::policy::*;
use halyard_cdr::DataRepresentation;
use std::time::Duration;

/// Builder methods shared by the QoS types that hold the named policy: one arm per policy,
/// each a method taking the policy's value and returning the QoS.
macro_rules! setters {
    ($($policy:ident),* $(,)?) => { $(setters!(@ $policy);)* };
    (@ durability) => {
        /// Sets DURABILITY.
        pub fn durability(mut self, kind: Durability) -> Self {
            self.durability = kind;
            self
        }
    };
    (@ durability_service) => {
        /// Sets DURABILITY_SERVICE.
        pub fn durability_service(mut self, service: DurabilityService) -> Self {
            self.durability_service = service;
            self
        }
    };
    (@ deadline) => {
        /// Sets DEADLINE's period ([`INFINITE`]: no deadline).
        pub fn deadline(mut self, period: Duration) -> Self {
            self.deadline = period;
            self
        }
    };
    (@ latency_budget) => {
        /// Sets LATENCY_BUDGET.
        pub fn latency_budget(mut self, duration: Duration) -> Self {
            self.latency_budget = duration;
            self
        }
    };
    (@ liveliness) => {
        /// Sets LIVELINESS: its kind and lease ([`INFINITE`]: no lease).
        pub fn liveliness(mut self, kind: LivelinessKind, lease_duration: Duration) -> Self {
            self.liveliness = Liveliness { kind, lease_duration };
            self
        }
    };
    (@ reliability) => {
        /// Sets RELIABILITY's kind to RELIABLE (max_blocking_time stays).
        pub fn reliable(mut self) -> Self {
            self.reliability.kind = ReliabilityKind::Reliable;
            self
        }
        /// Sets RELIABILITY's kind to BEST_EFFORT.
        pub fn best_effort(mut self) -> Self {
            self.reliability.kind = ReliabilityKind::BestEffort;
            self
        }
        /// Sets RELIABILITY's max_blocking_time (the kind stays).
        pub fn max_blocking_time(mut self, duration: Duration) -> Self {
            self.reliability.max_blocking_time = duration;
            self
        }
    };
    (@ destination_order) => {
        /// Sets DESTINATION_ORDER.
        pub fn destination_order(mut self, kind: DestinationOrder) -> Self {
            self.destination_order = kind;
            self
        }
    };
    (@ history) => {
        /// Sets HISTORY to KEEP_LAST `depth` (at least 1).
        pub fn keep_last(mut self, depth: u32) -> Self {
            self.history = History::KeepLast(depth);
            self
        }
        /// Sets HISTORY to KEEP_ALL.
        pub fn keep_all(mut self) -> Self {
            self.history = History::KeepAll;
            self
        }
    };
    (@ resource_limits) => {
        /// Sets RESOURCE_LIMITS.
        pub fn resource_limits(mut self, limits: ResourceLimits) -> Self {
            self.resource_limits = limits;
            self
        }
    };
    (@ transport_priority) => {
        /// Sets TRANSPORT_PRIORITY.
        pub fn transport_priority(mut self, value: i32) -> Self {
            self.transport_priority = value;
            self
        }
    };
    (@ lifespan) => {
        /// Sets LIFESPAN ([`INFINITE`]: samples never expire).
        pub fn lifespan(mut self, duration: Duration) -> Self {
            self.lifespan = duration;
            self
        }
    };
    (@ user_data) => {
        /// Sets USER_DATA.
        pub fn user_data(mut self, value: impl Into<Vec<u8>>) -> Self {
            self.user_data = value.into();
            self
        }
    };
    (@ topic_data) => {
        /// Sets TOPIC_DATA.
        pub fn topic_data(mut self, value: impl Into<Vec<u8>>) -> Self {
            self.topic_data = value.into();
            self
        }
    };
    (@ group_data) => {
        /// Sets GROUP_DATA.
        pub fn group_data(mut self, value: impl Into<Vec<u8>>) -> Self {
            self.group_data = value.into();
            self
        }
    };
    (@ ownership) => {
        /// Sets OWNERSHIP.
        pub fn ownership(mut self, kind: Ownership) -> Self {
            self.ownership = kind;
            self
        }
    };
    (@ data_representations) => {
        /// Sets DATA_REPRESENTATION: the representations accepted (empty: XCDR1 and XCDR2).
        pub fn data_representation(
            mut self,
            representations: impl IntoIterator<Item = DataRepresentation>,
        ) -> Self {
            self.data_representation = representations.into_iter().collect();
            self
        }
    };
    (@ group) => {
        /// Sets PRESENTATION.
        pub fn presentation(mut self, presentation: Presentation) -> Self {
            self.presentation = presentation;
            self
        }
        /// Sets PARTITION: the partition names (`*` and `?` wildcards allowed; none: the
        /// default partition).
        pub fn partition<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
            self.partition = names.into_iter().map(Into::into).collect();
            self
        }
        /// Sets ENTITY_FACTORY's autoenable_created_entities.
        pub fn autoenable_created_entities(mut self, autoenable: bool) -> Self {
            self.entity_factory.autoenable_created_entities = autoenable;
            self
        }
    };
}

/// A DataWriter's QoS (DDS 1.4 §2.2.2.4.2.1, the policies that concern a DataWriter).
/// `Default` gives the DDS 1.4 defaults: RELIABLE with max_blocking_time 100 ms, VOLATILE,
/// KEEP_LAST 1, no deadline, no lease, SHARED ownership, infinite lifespan.
///
/// ```
/// use halyard::qos::{DataWriterQos, Durability};
/// let qos = DataWriterQos::default()
///     .keep_last(10)
///     .durability(Durability::TransientLocal)
///     .deadline(std::time::Duration::from_millis(100));
/// ```
///
/// Reader-only policies (TIME_BASED_FILTER, READER_DATA_LIFECYCLE) are not on it:
///
/// ```compile_fail,E0599
/// let qos = halyard::qos::DataWriterQos::default()
///     .time_based_filter(std::time::Duration::from_millis(10));
/// ```
#[derive(Clone, PartialEq, Debug)]
#[non_exhaustive]
pub struct DataWriterQos {
    /// DURABILITY.
    pub durability: Durability,
    /// DURABILITY_SERVICE (for TRANSIENT and PERSISTENT).
    pub durability_service: DurabilityService,
    /// DEADLINE period ([`INFINITE`]: none).
    pub deadline: Duration,
    /// LATENCY_BUDGET.
    pub latency_budget: Duration,
    /// LIVELINESS.
    pub liveliness: Liveliness,
    /// RELIABILITY.
    pub reliability: Reliability,
    /// DESTINATION_ORDER.
    pub destination_order: DestinationOrder,
    /// HISTORY.
    pub history: History,
    /// RESOURCE_LIMITS.
    pub resource_limits: ResourceLimits,
    /// TRANSPORT_PRIORITY.
    pub transport_priority: i32,
    /// LIFESPAN ([`INFINITE`]: samples never expire).
    pub lifespan: Duration,
    /// USER_DATA.
    pub user_data: Vec<u8>,
    /// OWNERSHIP.
    pub ownership: Ownership,
    /// OWNERSHIP_STRENGTH.
    pub ownership_strength: i32,
    /// WRITER_DATA_LIFECYCLE.
    pub writer_data_lifecycle: WriterDataLifecycle,
    /// DATA_REPRESENTATION: the one representation the writer offers (`None`: XCDR1; a
    /// QoS change with `None` keeps the current one).
    pub data_representation: Option<DataRepresentation>,
    /// The TOPIC_DATA the writer announces for its topic (Halyard's topics carry no QoS; see
    /// [`DataWriterQos::copy_from_topic_qos`]).
    pub topic_data: Vec<u8>,
}

impl Default for DataWriterQos {
    fn default() -> Self {
        DataWriterQos {
            durability: Durability::Volatile,
            durability_service: DurabilityService::default(),
            deadline: INFINITE,
            latency_budget: Duration::ZERO,
            liveliness: Liveliness::default(),
            reliability: Reliability {
                kind: ReliabilityKind::Reliable,
                max_blocking_time: MAX_BLOCKING_TIME_DEFAULT,
            },
            destination_order: DestinationOrder::ByReceptionTimestamp,
            history: History::KeepLast(1),
            resource_limits: ResourceLimits::default(),
            transport_priority: 0,
            lifespan: INFINITE,
            user_data: Vec::new(),
            ownership: Ownership::Shared,
            ownership_strength: 0,
            writer_data_lifecycle: WriterDataLifecycle::default(),
            data_representation: None,
            topic_data: Vec::new(),
        }
    }
}

impl DataWriterQos {
    setters!(
        durability,
        durability_service,
        deadline,
        latency_budget,
        liveliness,
        reliability,
        destination_order,
        history,
        resource_limits,
        transport_priority,
        lifespan,
        user_data,
        ownership,
        topic_data,
    );

    /// Sets OWNERSHIP_STRENGTH.
    pub fn ownership_strength(mut self, value: i32) -> Self {
        self.ownership_strength = value;
        self
    }

    /// Sets WRITER_DATA_LIFECYCLE's autodispose_unregistered_instances.
    pub fn autodispose_unregistered_instances(mut self, autodispose: bool) -> Self {
        self.writer_data_lifecycle
            .autodispose_unregistered_instances = autodispose;
        self
    }

    /// Sets DATA_REPRESENTATION: the representation the writer offers.
    pub fn data_representation(mut self, representation: DataRepresentation) -> Self {
        self.data_representation = Some(representation);
        self
    }

    /// Copies the topic-level policies of `topic` (DDS 1.4 `copy_from_topic_qos`): every
    /// policy of a [`TopicQos`] a writer has, TOPIC_DATA included.
    pub fn copy_from_topic_qos(mut self, topic: &TopicQos) -> Self {
        self.durability = topic.durability;
        self.durability_service = topic.durability_service;
        self.deadline = topic.deadline;
        self.latency_budget = topic.latency_budget;
        self.liveliness = topic.liveliness;
        self.reliability = topic.reliability;
        self.destination_order = topic.destination_order;
        self.history = topic.history;
        self.resource_limits = topic.resource_limits;
        self.transport_priority = topic.transport_priority;
        self.lifespan = topic.lifespan;
        self.ownership = topic.ownership;
        self.data_representation = topic.data_representation.first().copied();
        self.topic_data = topic.topic_data.clone();
        self
    }

    /// Checks the QoS as `create_datawriter` does: inconsistent values are
    /// [`crate::Error::BadQos`] naming the policy.
    pub fn validate(&self) -> crate::Result<()> {
        super::validate(&self.into(), true)
    }
}

/// A DataReader's QoS (DDS 1.4 §2.2.2.5.2.1, the policies that concern a DataReader).
/// `Default` gives the DDS 1.4 defaults: BEST_EFFORT (max_blocking_time 100 ms), VOLATILE,
/// KEEP_LAST 1, no deadline, no time-based filter, no lease, SHARED ownership.
///
/// ```
/// use halyard::qos::{DataReaderQos, Durability};
/// let qos = DataReaderQos::default()
///     .reliable()
///     .keep_all()
///     .durability(Durability::Persistent);
/// ```
///
/// Writer-only policies (OWNERSHIP_STRENGTH, LIFESPAN, TRANSPORT_PRIORITY,
/// WRITER_DATA_LIFECYCLE, DURABILITY_SERVICE) are not on it:
///
/// ```compile_fail,E0599
/// let qos = halyard::qos::DataReaderQos::default()
///     .lifespan(std::time::Duration::from_secs(1));
/// ```
#[derive(Clone, PartialEq, Debug)]
#[non_exhaustive]
pub struct DataReaderQos {
    /// DURABILITY.
    pub durability: Durability,
    /// DEADLINE period ([`INFINITE`]: none).
    pub deadline: Duration,
    /// LATENCY_BUDGET.
    pub latency_budget: Duration,
    /// LIVELINESS.
    pub liveliness: Liveliness,
    /// RELIABILITY.
    pub reliability: Reliability,
    /// DESTINATION_ORDER.
    pub destination_order: DestinationOrder,
    /// HISTORY.
    pub history: History,
    /// RESOURCE_LIMITS.
    pub resource_limits: ResourceLimits,
    /// USER_DATA.
    pub user_data: Vec<u8>,
    /// OWNERSHIP.
    pub ownership: Ownership,
    /// TIME_BASED_FILTER minimum separation (zero: every sample).
    pub time_based_filter: Duration,
    /// READER_DATA_LIFECYCLE.
    pub reader_data_lifecycle: ReaderDataLifecycle,
    /// DATA_REPRESENTATION: the representations the reader accepts (empty: XCDR1 and
    /// XCDR2; a QoS change with none keeps the current ones).
    pub data_representation: Vec<DataRepresentation>,
    /// The TOPIC_DATA the reader announces for its topic (Halyard's topics carry no QoS; see
    /// [`DataReaderQos::copy_from_topic_qos`]).
    pub topic_data: Vec<u8>,
}

impl Default for DataReaderQos {
    fn default() -> Self {
        DataReaderQos {
            durability: Durability::Volatile,
            deadline: INFINITE,
            latency_budget: Duration::ZERO,
            liveliness: Liveliness::default(),
            reliability: Reliability {
                kind: ReliabilityKind::BestEffort,
                max_blocking_time: MAX_BLOCKING_TIME_DEFAULT,
            },
            destination_order: DestinationOrder::ByReceptionTimestamp,
            history: History::KeepLast(1),
            resource_limits: ResourceLimits::default(),
            user_data: Vec::new(),
            ownership: Ownership::Shared,
            time_based_filter: Duration::ZERO,
            reader_data_lifecycle: ReaderDataLifecycle::default(),
            data_representation: Vec::new(),
            topic_data: Vec::new(),
        }
    }
}

impl DataReaderQos {
    setters!(
        durability,
        deadline,
        latency_budget,
        liveliness,
        reliability,
        destination_order,
        history,
        resource_limits,
        user_data,
        ownership,
        data_representations,
        topic_data,
    );

    /// Sets TIME_BASED_FILTER's minimum separation.
    pub fn time_based_filter(mut self, minimum_separation: Duration) -> Self {
        self.time_based_filter = minimum_separation;
        self
    }

    /// Sets READER_DATA_LIFECYCLE.
    pub fn reader_data_lifecycle(mut self, lifecycle: ReaderDataLifecycle) -> Self {
        self.reader_data_lifecycle = lifecycle;
        self
    }

    /// Copies the topic-level policies of `topic` (DDS 1.4 `copy_from_topic_qos`): every
    /// policy of a [`TopicQos`] a reader has, TOPIC_DATA included.
    pub fn copy_from_topic_qos(mut self, topic: &TopicQos) -> Self {
        self.durability = topic.durability;
        self.deadline = topic.deadline;
        self.latency_budget = topic.latency_budget;
        self.liveliness = topic.liveliness;
        self.reliability = topic.reliability;
        self.destination_order = topic.destination_order;
        self.history = topic.history;
        self.resource_limits = topic.resource_limits;
        self.ownership = topic.ownership;
        self.data_representation = topic.data_representation.clone();
        self.topic_data = topic.topic_data.clone();
        self
    }

    /// Checks the QoS as `create_datareader` does: inconsistent values are
    /// [`crate::Error::BadQos`] naming the policy.
    pub fn validate(&self) -> crate::Result<()> {
        super::validate(&self.into(), false)
    }
}

/// A Topic's QoS (DDS 1.4 §2.2.2.3.2, the policies that concern a Topic). Halyard's topics
/// carry no QoS of their own: writers and readers take it with `copy_from_topic_qos`, as
/// XML QoS profiles' `<topic_qos>` read into it. `Default` gives the DDS 1.4 defaults (those
/// of a DataReader: BEST_EFFORT, VOLATILE, KEEP_LAST 1).
#[derive(Clone, PartialEq, Debug)]
#[non_exhaustive]
pub struct TopicQos {
    /// TOPIC_DATA.
    pub topic_data: Vec<u8>,
    /// DURABILITY.
    pub durability: Durability,
    /// DURABILITY_SERVICE.
    pub durability_service: DurabilityService,
    /// DEADLINE period.
    pub deadline: Duration,
    /// LATENCY_BUDGET.
    pub latency_budget: Duration,
    /// LIVELINESS.
    pub liveliness: Liveliness,
    /// RELIABILITY.
    pub reliability: Reliability,
    /// DESTINATION_ORDER.
    pub destination_order: DestinationOrder,
    /// HISTORY.
    pub history: History,
    /// RESOURCE_LIMITS.
    pub resource_limits: ResourceLimits,
    /// TRANSPORT_PRIORITY.
    pub transport_priority: i32,
    /// LIFESPAN.
    pub lifespan: Duration,
    /// OWNERSHIP.
    pub ownership: Ownership,
    /// DATA_REPRESENTATION (empty: the endpoint's default).
    pub data_representation: Vec<DataRepresentation>,
}

impl Default for TopicQos {
    fn default() -> Self {
        TopicQos {
            topic_data: Vec::new(),
            durability: Durability::Volatile,
            durability_service: DurabilityService::default(),
            deadline: INFINITE,
            latency_budget: Duration::ZERO,
            liveliness: Liveliness::default(),
            reliability: Reliability {
                kind: ReliabilityKind::BestEffort,
                max_blocking_time: MAX_BLOCKING_TIME_DEFAULT,
            },
            destination_order: DestinationOrder::ByReceptionTimestamp,
            history: History::KeepLast(1),
            resource_limits: ResourceLimits::default(),
            transport_priority: 0,
            lifespan: INFINITE,
            ownership: Ownership::Shared,
            data_representation: Vec::new(),
        }
    }
}

impl TopicQos {
    setters!(
        topic_data,
        durability,
        durability_service,
        deadline,
        latency_budget,
        liveliness,
        reliability,
        destination_order,
        history,
        resource_limits,
        transport_priority,
        lifespan,
        ownership,
        data_representations,
    );
}

/// A Publisher's QoS (DDS 1.4 §2.2.2.4.1): PRESENTATION, PARTITION, GROUP_DATA and
/// ENTITY_FACTORY, which its writers take. `Default`: INSTANCE scope without coherent or
/// ordered access, the default partition, entities enabled at creation.
///
/// ```
/// use halyard::qos::{Presentation, PresentationAccessScope, PublisherQos};
/// let qos = PublisherQos::default().partition(["sensors"]).presentation(Presentation {
///     access_scope: PresentationAccessScope::Topic,
///     coherent_access: true,
///     ordered_access: false,
/// });
/// ```
#[derive(Clone, PartialEq, Debug, Default)]
#[non_exhaustive]
pub struct PublisherQos {
    /// PRESENTATION (fixed once the publisher exists).
    pub presentation: Presentation,
    /// PARTITION names (`*` and `?` wildcards allowed; empty: the default partition).
    pub partition: Vec<String>,
    /// GROUP_DATA.
    pub group_data: Vec<u8>,
    /// ENTITY_FACTORY: applies to writers created after it is set.
    pub entity_factory: EntityFactory,
}

impl PublisherQos {
    setters!(group, group_data);
}

/// A Subscriber's QoS (DDS 1.4 §2.2.2.5.1): PRESENTATION, PARTITION, GROUP_DATA and
/// ENTITY_FACTORY, which its readers take. `Default` as [`PublisherQos`]'s.
#[derive(Clone, PartialEq, Debug, Default)]
#[non_exhaustive]
pub struct SubscriberQos {
    /// PRESENTATION (fixed once the subscriber exists).
    pub presentation: Presentation,
    /// PARTITION names (`*` and `?` wildcards allowed; empty: the default partition).
    pub partition: Vec<String>,
    /// GROUP_DATA.
    pub group_data: Vec<u8>,
    /// ENTITY_FACTORY: applies to readers created after it is set.
    pub entity_factory: EntityFactory,
}

impl SubscriberQos {
    setters!(group, group_data);
}

/// A DomainParticipant's QoS (DDS 1.4 §2.2.2.2.1): USER_DATA. Its ENTITY_FACTORY is not
/// here: Halyard's publishers and subscribers are always enabled.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
#[non_exhaustive]
pub struct DomainParticipantQos {
    /// USER_DATA, announced with the participant.
    pub user_data: Vec<u8>,
}

impl DomainParticipantQos {
    setters!(user_data);
}
