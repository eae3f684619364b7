//! QoS (DDS 1.4 §2.2.3): one type per kind of entity ([`DataWriterQos`], [`DataReaderQos`],
//! [`TopicQos`], [`PublisherQos`], [`SubscriberQos`], [`DomainParticipantQos`]), each holding
//! exactly its entity's policies, with the DDS defaults as `Default` and a builder method per
//! policy:
//!
//! ```
//! use halyard::qos::{DataReaderQos, Durability, SubscriberQos};
//! let reader = DataReaderQos::default().reliable().keep_all().durability(Durability::Persistent);
//! let subscriber = SubscriberQos::default().partition(["sensors"]);
//! ```
//!
//! The protocol core and discovery work on the wire's [`wire::EndpointQos`];
//! the conversion between the two lives in one module (`convert`: `From<&DataWriterQos> for
//! EndpointQos` and back, likewise for readers, topics and groups). Validation: inconsistent
//! values are refused with [`Error::BadQos`] naming the policy (a [`QosPolicyId`]), and every
//! value Halyard does not implement yet with [`Error::Unsupported`], never silently ignored.

mod convert;
mod entity;
mod policy;

pub use entity::{
    DataReaderQos, DataWriterQos, DomainParticipantQos, PublisherQos, SubscriberQos, TopicQos,
};
pub use halyard_cdr::DataRepresentation;
pub use halyard_core::QosPolicyId;
pub use policy::{
    DestinationOrder, Durability, DurabilityService, EntityFactory, History, Liveliness,
    LivelinessKind, Ownership, Presentation, PresentationAccessScope, ReaderDataLifecycle,
    Reliability, ReliabilityKind, ResourceLimits, WriterDataLifecycle, INFINITE,
};

/// The wire's QoS types, as discovered endpoints carry them (the builtin topics'
/// `PublicationBuiltinTopicData::qos` and `SubscriptionBuiltinTopicData::qos`, which hold
/// the group's policies too); `DataWriterQos::from(&qos)` and `DataReaderQos::from(&qos)`
/// read one as the API's types.
pub mod wire {
    pub use halyard_wire::qos::*;
    pub use halyard_wire::Duration;
}

use crate::error::{Error, Result};
use halyard_wire::qos::{EndpointQos, History as WireHistory};
use halyard_wire::Duration as DdsDuration;

/// TYPE_CONSISTENCY_ENFORCEMENT (DDS-XTypes 1.3 §7.6.3.4) of a DataReader: whether, and under
/// which rules, it matches writers whose announced type differs from its own (set it with
/// `DataReader::set_type_consistency` before the reader is enabled). The default is XTypes':
/// ALLOW_TYPE_COERCION, sequence and string bounds ignored, member names compared, widening
/// allowed. A reader that refuses a writer's type reports REQUESTED_INCOMPATIBLE_QOS with
/// policy TYPE_CONSISTENCY_ENFORCEMENT, as Cyclone DDS does; the participant's statistics and
/// `type_refusals` say why.
pub use halyard_core::xtypes::{
    TypeConsistency as TypeConsistencyEnforcement, TypeConsistencyKind,
};

/// What a publisher or subscriber keeps of its QoS, in the wire's terms its endpoints take
/// (see [`crate::group::inherit`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct GroupQos {
    /// PARTITION names.
    pub(crate) partition: Vec<String>,
    /// GROUP_DATA.
    pub(crate) group_data: Vec<u8>,
    /// PRESENTATION of the group's endpoints; it cannot change once the group exists.
    pub(crate) presentation: halyard_wire::qos::Presentation,
    /// ENTITY_FACTORY: applies to entities created after it is set.
    pub(crate) entity_factory: EntityFactory,
}

/// DURABILITY_SERVICE: a positive history depth, limits positive or -1 and consistent (what
/// a durability service keeps of a TRANSIENT or PERSISTENT writer's samples).
fn validate_durability_service(ds: &halyard_wire::qos::DurabilityService) -> Result<()> {
    let bad = |reason| {
        Err(Error::BadQos {
            policy: QosPolicyId::DurabilityService,
            reason,
        })
    };
    let rl = ds.limits;
    if [
        rl.max_samples,
        rl.max_instances,
        rl.max_samples_per_instance,
    ]
    .iter()
    .any(|&v| v == 0 || v < -1)
    {
        return bad("limits must be positive (or unlimited)");
    }
    if rl.max_samples > 0 && rl.max_samples_per_instance > rl.max_samples {
        return bad("max_samples_per_instance exceeds max_samples");
    }
    if let WireHistory::KeepLast(d) = ds.history {
        if d < 1 {
            return bad("history depth must be at least 1");
        }
        if rl.max_samples_per_instance > 0 && d > rl.max_samples_per_instance {
            return bad("history depth exceeds max_samples_per_instance");
        }
    }
    if ds.service_cleanup_delay.seconds < 0 {
        return bad("service_cleanup_delay cannot be negative");
    }
    Ok(())
}

/// Checks a writer's (`is_writer`) or reader's QoS, in the wire's terms the API's QoS
/// converts to, for consistency and for policies this version implements.
pub(crate) fn validate(q: &EndpointQos, is_writer: bool) -> Result<()> {
    if let WireHistory::KeepLast(d) = q.history {
        if d < 1 {
            return Err(Error::BadQos {
                policy: QosPolicyId::History,
                reason: "KEEP_LAST depth must be >= 1",
            });
        }
        let per_instance = q.resource_limits.max_samples_per_instance;
        if per_instance > 0 && d > per_instance {
            return Err(Error::BadQos {
                policy: QosPolicyId::History,
                reason: "depth exceeds RESOURCE_LIMITS.max_samples_per_instance",
            });
        }
    }
    let rl = q.resource_limits;
    for v in [
        rl.max_samples,
        rl.max_instances,
        rl.max_samples_per_instance,
    ] {
        if v == 0 || v < -1 {
            return Err(Error::BadQos {
                policy: QosPolicyId::ResourceLimits,
                reason: "limits must be positive (or unlimited)",
            });
        }
    }
    if rl.max_samples > 0 && rl.max_samples_per_instance > rl.max_samples {
        return Err(Error::BadQos {
            policy: QosPolicyId::ResourceLimits,
            reason: "max_samples_per_instance exceeds max_samples",
        });
    }
    validate_durability_service(&q.durability_service)?;
    if q.liveliness.lease_duration == DdsDuration::ZERO {
        return Err(Error::BadQos {
            policy: QosPolicyId::Liveliness,
            reason: "the lease must be positive (INFINITE: no lease)",
        });
    }
    for (policy, d) in [
        (QosPolicyId::Deadline, q.deadline),
        (QosPolicyId::Lifespan, q.lifespan),
        (QosPolicyId::TimeBasedFilter, q.time_based_filter),
        (QosPolicyId::LatencyBudget, q.latency_budget),
        (QosPolicyId::Liveliness, q.liveliness.lease_duration),
    ] {
        if d.seconds < 0 {
            return Err(Error::BadQos {
                policy,
                reason: "a duration cannot be negative",
            });
        }
    }
    if q.deadline == DdsDuration::ZERO {
        return Err(Error::BadQos {
            policy: QosPolicyId::Deadline,
            reason: "the period must be positive (INFINITE: no deadline)",
        });
    }
    if q.lifespan == DdsDuration::ZERO {
        return Err(Error::BadQos {
            policy: QosPolicyId::Lifespan,
            reason: "the duration must be positive (INFINITE: samples never expire)",
        });
    }
    if !is_writer && q.deadline < q.time_based_filter {
        return Err(Error::BadQos {
            policy: QosPolicyId::Deadline,
            reason: "the period is shorter than TIME_BASED_FILTER's minimum separation",
        });
    }
    let known = [halyard_core::matching::XCDR1, halyard_core::matching::XCDR2];
    if q.data_representation.iter().any(|r| !known.contains(r)) {
        return Err(Error::BadQos {
            policy: QosPolicyId::DataRepresentation,
            reason: "only XCDR1 (0) and XCDR2 (2) exist",
        });
    }
    if is_writer && q.data_representation.len() > 1 {
        return Err(Error::BadQos {
            policy: QosPolicyId::DataRepresentation,
            reason: "a writer offers exactly one representation",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durable_kinds_are_accepted_and_contradictions_are_refused() {
        let mut q = DataWriterQos::default();
        assert!(q.validate().is_ok());
        for kind in [Durability::Transient, Durability::Persistent] {
            q.durability = kind;
            assert!(q.validate().is_ok(), "{kind:?} must be accepted");
        }
        let mut q = DataReaderQos::default()
            .ownership(Ownership::Exclusive)
            .deadline(Duration::from_nanos(1_000_000));
        assert!(q.validate().is_ok());
        q.time_based_filter = Duration::from_nanos(2_000_000);
        assert!(matches!(
            q.validate(),
            Err(Error::BadQos {
                policy: QosPolicyId::Deadline,
                ..
            })
        ));
        let q = DataReaderQos::default().keep_last(0);
        assert!(matches!(
            q.validate(),
            Err(Error::BadQos {
                policy: QosPolicyId::History,
                ..
            })
        ));
        let mut q = DataReaderQos::default();
        q.resource_limits.max_samples = Some(0);
        assert!(matches!(
            q.validate(),
            Err(Error::BadQos {
                policy: QosPolicyId::ResourceLimits,
                ..
            })
        ));
    }

    /// The defaults of DDS 1.4 §2.2.3, policy by policy.
    #[test]
    fn defaults_are_the_dds_defaults_of_each_entity() {
        let ms100 = Duration::from_millis(100);
        let w = DataWriterQos::default();
        assert_eq!(w.durability, Durability::Volatile);
        assert_eq!(w.durability_service, DurabilityService::default());
        assert_eq!(w.durability_service.service_cleanup_delay, Duration::ZERO);
        assert_eq!(w.durability_service.history, History::KeepLast(1));
        assert_eq!(w.deadline, INFINITE);
        assert_eq!(w.latency_budget, Duration::ZERO);
        assert_eq!(w.liveliness.kind, LivelinessKind::Automatic);
        assert_eq!(w.liveliness.lease_duration, INFINITE);
        assert_eq!(w.reliability.kind, ReliabilityKind::Reliable);
        assert_eq!(w.reliability.max_blocking_time, ms100);
        assert_eq!(w.destination_order, DestinationOrder::ByReceptionTimestamp);
        assert_eq!(w.history, History::KeepLast(1));
        assert_eq!(w.resource_limits, ResourceLimits::default());
        assert_eq!(w.resource_limits.max_samples, None);
        assert_eq!(w.transport_priority, 0);
        assert_eq!(w.lifespan, INFINITE);
        assert!(w.user_data.is_empty() && w.topic_data.is_empty());
        assert_eq!(w.ownership, Ownership::Shared);
        assert_eq!(w.ownership_strength, 0);
        assert!(w.writer_data_lifecycle.autodispose_unregistered_instances);
        assert_eq!(w.data_representation, None);

        let r = DataReaderQos::default();
        assert_eq!(r.durability, Durability::Volatile);
        assert_eq!(r.deadline, INFINITE);
        assert_eq!(r.latency_budget, Duration::ZERO);
        assert_eq!(r.liveliness, Liveliness::default());
        assert_eq!(r.reliability.kind, ReliabilityKind::BestEffort);
        assert_eq!(r.reliability.max_blocking_time, ms100);
        assert_eq!(r.destination_order, DestinationOrder::ByReceptionTimestamp);
        assert_eq!(r.history, History::KeepLast(1));
        assert_eq!(r.resource_limits, ResourceLimits::default());
        assert_eq!(r.ownership, Ownership::Shared);
        assert_eq!(r.time_based_filter, Duration::ZERO);
        assert_eq!(
            r.reader_data_lifecycle.autopurge_nowriter_samples_delay,
            INFINITE
        );
        assert_eq!(
            r.reader_data_lifecycle.autopurge_disposed_samples_delay,
            INFINITE
        );
        assert!(r.data_representation.is_empty());

        let t = TopicQos::default();
        assert_eq!(t.reliability.kind, ReliabilityKind::BestEffort);
        assert_eq!(t.durability, Durability::Volatile);
        assert_eq!(t.history, History::KeepLast(1));
        assert_eq!(t.lifespan, INFINITE);
        assert_eq!(t.transport_priority, 0);

        for (presentation, partition, entity_factory) in [
            {
                let p = PublisherQos::default();
                (p.presentation, p.partition, p.entity_factory)
            },
            {
                let s = SubscriberQos::default();
                (s.presentation, s.partition, s.entity_factory)
            },
        ] {
            assert_eq!(presentation.access_scope, PresentationAccessScope::Instance);
            assert!(!presentation.coherent_access && !presentation.ordered_access);
            assert!(partition.is_empty());
            assert!(entity_factory.autoenable_created_entities);
        }
        assert!(DomainParticipantQos::default().user_data.is_empty());
    }

    #[test]
    fn each_builder_method_sets_its_policy_and_nothing_else() {
        let q = DataReaderQos::default()
            .reliable()
            .keep_all()
            .durability(Durability::Persistent);
        assert_eq!(q.reliability.kind, ReliabilityKind::Reliable);
        assert_eq!(q.reliability.max_blocking_time, Duration::from_millis(100));
        assert_eq!(q.history, History::KeepAll);
        assert_eq!(q.durability, Durability::Persistent);
        assert_eq!(
            DataReaderQos {
                reliability: DataReaderQos::default().reliability,
                history: History::KeepLast(1),
                durability: Durability::Volatile,
                ..q
            },
            DataReaderQos::default()
        );
        let w = DataWriterQos::default()
            .best_effort()
            .keep_last(5)
            .deadline(Duration::from_secs(1))
            .lifespan(Duration::from_secs(2))
            .ownership(Ownership::Exclusive)
            .ownership_strength(3)
            .data_representation(DataRepresentation::Xcdr2);
        assert_eq!(w.reliability.kind, ReliabilityKind::BestEffort);
        assert_eq!(w.history, History::KeepLast(5));
        assert_eq!(w.deadline, Duration::from_secs(1));
        assert_eq!(w.lifespan, Duration::from_secs(2));
        assert_eq!(w.ownership_strength, 3);
        assert_eq!(w.data_representation, Some(DataRepresentation::Xcdr2));
        let p = PublisherQos::default()
            .partition(["a", "b*"])
            .group_data(*b"g")
            .autoenable_created_entities(false);
        assert_eq!(p.partition, vec!["a".to_string(), "b*".to_string()]);
        assert_eq!(p.group_data, b"g");
        assert!(!p.entity_factory.autoenable_created_entities);
        let topic = TopicQos::default()
            .keep_last(8)
            .topic_data(*b"t")
            .reliable();
        let r = DataReaderQos::default().copy_from_topic_qos(&topic);
        assert_eq!(
            (r.history, r.topic_data.as_slice()),
            (History::KeepLast(8), &b"t"[..])
        );
        assert_eq!(r.reliability.kind, ReliabilityKind::Reliable);
        let w = DataWriterQos::default().copy_from_topic_qos(&topic);
        assert_eq!(w.reliability.kind, ReliabilityKind::Reliable);
        assert_eq!(w.history, History::KeepLast(8));
    }
}
