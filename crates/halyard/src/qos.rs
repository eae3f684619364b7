//! QoS for DataWriters and DataReaders, and validation: inconsistent values are refused with
//! [`Error::BadQos`] (what and why), and every value Halyard does not implement yet with
//! [`Error::Unsupported`], never silently ignored.

use crate::error::{Error, Result};
pub use halyard_wire::qos::{
    DestinationOrderKind, DurabilityKind, DurabilityService, EndpointQos, History, Liveliness,
    LivelinessKind, OwnershipKind, Presentation, Reliability, ReliabilityKind, ResourceLimits,
};
pub use halyard_wire::Duration as DdsDuration;

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

/// A DataWriter's QoS (start from [`EndpointQos::writer_default`]).
pub type DataWriterQos = EndpointQos;
/// A DataReader's QoS (start from [`EndpointQos::reader_default`]).
pub type DataReaderQos = EndpointQos;

/// ENTITY_FACTORY (DDS 1.4 §2.2.3.20): whether the entities a publisher or subscriber
/// creates are enabled at once (the default) or wait for their `enable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Publisher / Subscriber QoS: partitions, group data, presentation and entity factory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupQos {
    /// PARTITION names (fnmatch wildcards allowed).
    pub partition: Vec<String>,
    /// GROUP_DATA.
    pub group_data: Vec<u8>,
    /// PRESENTATION (access scope, coherent and ordered access) of the group's endpoints
    /// that do not set their own; it cannot change once the group exists.
    pub presentation: Presentation,
    /// ENTITY_FACTORY (changeable): applies to entities created after it is set.
    pub entity_factory: EntityFactory,
}

/// Converts a std duration to a DDS duration.
pub fn dds_duration(d: std::time::Duration) -> DdsDuration {
    DdsDuration::from_nanos(d.as_nanos().min(i64::MAX as u128) as i64)
}

/// DURABILITY_SERVICE: a positive history depth, limits positive or -1 and consistent (what
/// a durability service keeps of a TRANSIENT or PERSISTENT writer's samples).
fn validate_durability_service(ds: &halyard_wire::qos::DurabilityService) -> Result<()> {
    let bad = |reason| {
        Err(Error::BadQos {
            policy: "DURABILITY_SERVICE",
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
        return bad("limits must be positive or -1 (unlimited)");
    }
    if rl.max_samples > 0 && rl.max_samples_per_instance > rl.max_samples {
        return bad("max_samples_per_instance exceeds max_samples");
    }
    if let History::KeepLast(d) = ds.history {
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

/// Checks a QoS for consistency and for policies this version implements.
pub fn validate(q: &EndpointQos, is_writer: bool) -> Result<()> {
    if let History::KeepLast(d) = q.history {
        if d < 1 {
            return Err(Error::BadQos {
                policy: "HISTORY",
                reason: "KEEP_LAST depth must be >= 1",
            });
        }
        let per_instance = q.resource_limits.max_samples_per_instance;
        if per_instance > 0 && d > per_instance {
            return Err(Error::BadQos {
                policy: "HISTORY",
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
                policy: "RESOURCE_LIMITS",
                reason: "limits must be positive or -1 (unlimited)",
            });
        }
    }
    if rl.max_samples > 0 && rl.max_samples_per_instance > rl.max_samples {
        return Err(Error::BadQos {
            policy: "RESOURCE_LIMITS",
            reason: "max_samples_per_instance exceeds max_samples",
        });
    }
    validate_durability_service(&q.durability_service)?;
    if q.liveliness.lease_duration == DdsDuration::ZERO {
        return Err(Error::BadQos {
            policy: "LIVELINESS",
            reason: "the lease must be positive (INFINITE: no lease)",
        });
    }
    for (policy, d) in [
        ("DEADLINE", q.deadline),
        ("LIFESPAN", q.lifespan),
        ("TIME_BASED_FILTER", q.time_based_filter),
        ("LATENCY_BUDGET", q.latency_budget),
        ("LIVELINESS", q.liveliness.lease_duration),
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
            policy: "DEADLINE",
            reason: "the period must be positive (INFINITE: no deadline)",
        });
    }
    if q.lifespan == DdsDuration::ZERO {
        return Err(Error::BadQos {
            policy: "LIFESPAN",
            reason: "the duration must be positive (INFINITE: samples never expire)",
        });
    }
    if !is_writer && q.deadline < q.time_based_filter {
        return Err(Error::BadQos {
            policy: "DEADLINE",
            reason: "the period is shorter than TIME_BASED_FILTER's minimum separation",
        });
    }
    if q.presentation.access_scope > 2 {
        return Err(Error::BadQos {
            policy: "PRESENTATION",
            reason: "access_scope is INSTANCE (0), TOPIC (1) or GROUP (2)",
        });
    }
    let known = [halyard_core::matching::XCDR1, halyard_core::matching::XCDR2];
    if q.data_representation.iter().any(|r| !known.contains(r)) {
        return Err(Error::BadQos {
            policy: "DATA_REPRESENTATION",
            reason: "only XCDR1 (0) and XCDR2 (2) exist",
        });
    }
    if is_writer && q.data_representation.len() > 1 {
        return Err(Error::BadQos {
            policy: "DATA_REPRESENTATION",
            reason: "a writer offers exactly one representation",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durable_kinds_are_accepted_and_contradictions_are_refused() {
        let mut q = EndpointQos::writer_default();
        assert!(validate(&q, true).is_ok());
        for kind in [DurabilityKind::Transient, DurabilityKind::Persistent] {
            q.durability = kind;
            assert!(validate(&q, true).is_ok(), "{kind:?} must be accepted");
        }
        let mut q = EndpointQos::reader_default();
        q.ownership = OwnershipKind::Exclusive;
        q.deadline = DdsDuration::from_nanos(1_000_000);
        assert!(validate(&q, false).is_ok());
        q.time_based_filter = DdsDuration::from_nanos(2_000_000);
        assert!(matches!(
            validate(&q, false),
            Err(Error::BadQos {
                policy: "DEADLINE",
                ..
            })
        ));
        let mut q = EndpointQos::reader_default();
        q.history = History::KeepLast(0);
        assert!(matches!(
            validate(&q, false),
            Err(Error::BadQos {
                policy: "HISTORY",
                ..
            })
        ));
        let mut q = EndpointQos::reader_default();
        q.resource_limits.max_samples = 0;
        assert!(matches!(
            validate(&q, false),
            Err(Error::BadQos {
                policy: "RESOURCE_LIMITS",
                ..
            })
        ));
    }
}
