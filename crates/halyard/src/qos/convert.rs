//! The one place where the API's QoS types meet the wire's ([`halyard_wire::qos`], which the
//! protocol core matches and SEDP encodes): a writer's or reader's QoS becomes an
//! [`EndpointQos`] when the endpoint is created or changed, and an [`EndpointQos`] (the local
//! endpoint's current one, a discovered endpoint's, an XML profile's) becomes the API's type
//! again. Policies the entity does not have take the wire defaults of its kind one way, and
//! are dropped the other way. Durations map exactly to the nanosecond; [`INFINITE`] and
//! everything from `i32::MAX` seconds up is DURATION_INFINITE. Limits map `None` to -1.

use super::entity::*;
use super::policy::*;
use super::GroupQos;
use halyard_cdr::DataRepresentation;
use halyard_core::matching::{XCDR1, XCDR2};
use halyard_wire::qos::{self as wire, EndpointQos};
use halyard_wire::Duration as WireDuration;
use std::time::Duration;

/// A duration as the wire writes it.
pub(crate) fn to_wire_duration(d: Duration) -> WireDuration {
    match i64::try_from(d.as_nanos()) {
        Ok(nanos) => WireDuration::from_nanos(nanos),
        Err(_) => WireDuration::INFINITE,
    }
}

/// A wire duration as a std one (a negative one, which validation refuses, reads as zero).
pub(crate) fn from_wire_duration(d: WireDuration) -> Duration {
    if d == WireDuration::INFINITE || d.seconds == i32::MAX {
        return INFINITE;
    }
    Duration::from_nanos(u64::try_from(d.to_nanos()).unwrap_or(0))
}

impl From<Durability> for wire::DurabilityKind {
    fn from(d: Durability) -> Self {
        match d {
            Durability::Volatile => wire::DurabilityKind::Volatile,
            Durability::TransientLocal => wire::DurabilityKind::TransientLocal,
            Durability::Transient => wire::DurabilityKind::Transient,
            Durability::Persistent => wire::DurabilityKind::Persistent,
        }
    }
}

impl From<wire::DurabilityKind> for Durability {
    fn from(d: wire::DurabilityKind) -> Self {
        match d {
            wire::DurabilityKind::Volatile => Durability::Volatile,
            wire::DurabilityKind::TransientLocal => Durability::TransientLocal,
            wire::DurabilityKind::Transient => Durability::Transient,
            wire::DurabilityKind::Persistent => Durability::Persistent,
        }
    }
}

impl From<History> for wire::History {
    /// A depth beyond `i32::MAX` is `i32::MAX`.
    fn from(h: History) -> Self {
        match h {
            History::KeepLast(d) => wire::History::KeepLast(i32::try_from(d).unwrap_or(i32::MAX)),
            History::KeepAll => wire::History::KeepAll,
        }
    }
}

impl From<wire::History> for History {
    /// A depth below 1 (which validation refuses) reads as 0.
    fn from(h: wire::History) -> Self {
        match h {
            wire::History::KeepLast(d) => History::KeepLast(u32::try_from(d).unwrap_or(0)),
            wire::History::KeepAll => History::KeepAll,
        }
    }
}

fn to_wire_limit(l: Option<u32>) -> i32 {
    l.map_or(-1, |n| i32::try_from(n).unwrap_or(i32::MAX))
}

fn from_wire_limit(l: i32) -> Option<u32> {
    u32::try_from(l).ok()
}

impl From<ResourceLimits> for wire::ResourceLimits {
    fn from(l: ResourceLimits) -> Self {
        wire::ResourceLimits {
            max_samples: to_wire_limit(l.max_samples),
            max_instances: to_wire_limit(l.max_instances),
            max_samples_per_instance: to_wire_limit(l.max_samples_per_instance),
        }
    }
}

impl From<wire::ResourceLimits> for ResourceLimits {
    fn from(l: wire::ResourceLimits) -> Self {
        ResourceLimits {
            max_samples: from_wire_limit(l.max_samples),
            max_instances: from_wire_limit(l.max_instances),
            max_samples_per_instance: from_wire_limit(l.max_samples_per_instance),
        }
    }
}

impl From<DurabilityService> for wire::DurabilityService {
    fn from(s: DurabilityService) -> Self {
        wire::DurabilityService {
            service_cleanup_delay: to_wire_duration(s.service_cleanup_delay),
            history: s.history.into(),
            limits: s.resource_limits.into(),
        }
    }
}

impl From<wire::DurabilityService> for DurabilityService {
    fn from(s: wire::DurabilityService) -> Self {
        DurabilityService {
            service_cleanup_delay: from_wire_duration(s.service_cleanup_delay),
            history: s.history.into(),
            resource_limits: s.limits.into(),
        }
    }
}

impl From<Reliability> for wire::Reliability {
    fn from(r: Reliability) -> Self {
        wire::Reliability {
            kind: match r.kind {
                ReliabilityKind::BestEffort => wire::ReliabilityKind::BestEffort,
                ReliabilityKind::Reliable => wire::ReliabilityKind::Reliable,
            },
            max_blocking_time: to_wire_duration(r.max_blocking_time),
        }
    }
}

impl From<wire::Reliability> for Reliability {
    fn from(r: wire::Reliability) -> Self {
        Reliability {
            kind: match r.kind {
                wire::ReliabilityKind::BestEffort => ReliabilityKind::BestEffort,
                wire::ReliabilityKind::Reliable => ReliabilityKind::Reliable,
            },
            max_blocking_time: from_wire_duration(r.max_blocking_time),
        }
    }
}

impl From<Liveliness> for wire::Liveliness {
    fn from(l: Liveliness) -> Self {
        wire::Liveliness {
            kind: match l.kind {
                LivelinessKind::Automatic => wire::LivelinessKind::Automatic,
                LivelinessKind::ManualByParticipant => wire::LivelinessKind::ManualByParticipant,
                LivelinessKind::ManualByTopic => wire::LivelinessKind::ManualByTopic,
            },
            lease_duration: to_wire_duration(l.lease_duration),
        }
    }
}

impl From<wire::Liveliness> for Liveliness {
    fn from(l: wire::Liveliness) -> Self {
        Liveliness {
            kind: match l.kind {
                wire::LivelinessKind::Automatic => LivelinessKind::Automatic,
                wire::LivelinessKind::ManualByParticipant => LivelinessKind::ManualByParticipant,
                wire::LivelinessKind::ManualByTopic => LivelinessKind::ManualByTopic,
            },
            lease_duration: from_wire_duration(l.lease_duration),
        }
    }
}

impl From<Ownership> for wire::OwnershipKind {
    fn from(o: Ownership) -> Self {
        match o {
            Ownership::Shared => wire::OwnershipKind::Shared,
            Ownership::Exclusive => wire::OwnershipKind::Exclusive,
        }
    }
}

impl From<wire::OwnershipKind> for Ownership {
    fn from(o: wire::OwnershipKind) -> Self {
        match o {
            wire::OwnershipKind::Shared => Ownership::Shared,
            wire::OwnershipKind::Exclusive => Ownership::Exclusive,
        }
    }
}

impl From<DestinationOrder> for wire::DestinationOrderKind {
    fn from(o: DestinationOrder) -> Self {
        match o {
            DestinationOrder::ByReceptionTimestamp => {
                wire::DestinationOrderKind::ByReceptionTimestamp
            }
            DestinationOrder::BySourceTimestamp => wire::DestinationOrderKind::BySourceTimestamp,
        }
    }
}

impl From<wire::DestinationOrderKind> for DestinationOrder {
    fn from(o: wire::DestinationOrderKind) -> Self {
        match o {
            wire::DestinationOrderKind::ByReceptionTimestamp => {
                DestinationOrder::ByReceptionTimestamp
            }
            wire::DestinationOrderKind::BySourceTimestamp => DestinationOrder::BySourceTimestamp,
        }
    }
}

impl From<Presentation> for wire::Presentation {
    fn from(p: Presentation) -> Self {
        wire::Presentation {
            access_scope: match p.access_scope {
                PresentationAccessScope::Instance => wire::PresentationAccessScope::Instance,
                PresentationAccessScope::Topic => wire::PresentationAccessScope::Topic,
                PresentationAccessScope::Group => wire::PresentationAccessScope::Group,
            },
            coherent_access: p.coherent_access,
            ordered_access: p.ordered_access,
        }
    }
}

impl From<wire::Presentation> for Presentation {
    fn from(p: wire::Presentation) -> Self {
        Presentation {
            access_scope: match p.access_scope {
                wire::PresentationAccessScope::Instance => PresentationAccessScope::Instance,
                wire::PresentationAccessScope::Topic => PresentationAccessScope::Topic,
                wire::PresentationAccessScope::Group => PresentationAccessScope::Group,
            },
            coherent_access: p.coherent_access,
            ordered_access: p.ordered_access,
        }
    }
}

fn to_wire_representation(r: DataRepresentation) -> i16 {
    match r {
        DataRepresentation::Xcdr1 => XCDR1,
        DataRepresentation::Xcdr2 => XCDR2,
    }
}

/// The representations of `ids` the API knows (validation refuses the others).
fn from_wire_representations(ids: &[i16]) -> Vec<DataRepresentation> {
    ids.iter()
        .filter_map(|&id| match id {
            XCDR1 => Some(DataRepresentation::Xcdr1),
            XCDR2 => Some(DataRepresentation::Xcdr2),
            _ => None,
        })
        .collect()
}

impl From<&DataWriterQos> for EndpointQos {
    /// The writer's policies; the rest (PARTITION, PRESENTATION, GROUP_DATA, which the
    /// publisher fills in, and the reader-only ones) are a writer's defaults.
    fn from(q: &DataWriterQos) -> Self {
        EndpointQos {
            durability: q.durability.into(),
            durability_service: q.durability_service.into(),
            deadline: to_wire_duration(q.deadline),
            latency_budget: to_wire_duration(q.latency_budget),
            liveliness: q.liveliness.into(),
            reliability: q.reliability.into(),
            destination_order: q.destination_order.into(),
            history: q.history.into(),
            resource_limits: q.resource_limits.into(),
            lifespan: to_wire_duration(q.lifespan),
            ownership: q.ownership.into(),
            ownership_strength: q.ownership_strength,
            user_data: q.user_data.clone(),
            topic_data: q.topic_data.clone(),
            transport_priority: q.transport_priority,
            data_representation: q
                .data_representation
                .map(to_wire_representation)
                .into_iter()
                .collect(),
            writer_data_lifecycle: wire::WriterDataLifecycle {
                autodispose_unregistered_instances: q
                    .writer_data_lifecycle
                    .autodispose_unregistered_instances,
            },
            ..EndpointQos::writer_default()
        }
    }
}

impl From<&EndpointQos> for DataWriterQos {
    /// A local writer's current QoS, or a discovered writer's (its reader-only and group
    /// policies are dropped).
    fn from(q: &EndpointQos) -> Self {
        DataWriterQos {
            durability: q.durability.into(),
            durability_service: q.durability_service.into(),
            deadline: from_wire_duration(q.deadline),
            latency_budget: from_wire_duration(q.latency_budget),
            liveliness: q.liveliness.into(),
            reliability: q.reliability.into(),
            destination_order: q.destination_order.into(),
            history: q.history.into(),
            resource_limits: q.resource_limits.into(),
            transport_priority: q.transport_priority,
            lifespan: from_wire_duration(q.lifespan),
            user_data: q.user_data.clone(),
            ownership: q.ownership.into(),
            ownership_strength: q.ownership_strength,
            writer_data_lifecycle: WriterDataLifecycle {
                autodispose_unregistered_instances: q
                    .writer_data_lifecycle
                    .autodispose_unregistered_instances,
            },
            data_representation: from_wire_representations(&q.data_representation)
                .first()
                .copied(),
            topic_data: q.topic_data.clone(),
        }
    }
}

impl From<&DataReaderQos> for EndpointQos {
    /// The reader's policies; the rest (PARTITION, PRESENTATION, GROUP_DATA, which the
    /// subscriber fills in, and the writer-only ones) are a reader's defaults.
    fn from(q: &DataReaderQos) -> Self {
        EndpointQos {
            durability: q.durability.into(),
            deadline: to_wire_duration(q.deadline),
            latency_budget: to_wire_duration(q.latency_budget),
            liveliness: q.liveliness.into(),
            reliability: q.reliability.into(),
            destination_order: q.destination_order.into(),
            history: q.history.into(),
            resource_limits: q.resource_limits.into(),
            ownership: q.ownership.into(),
            time_based_filter: to_wire_duration(q.time_based_filter),
            user_data: q.user_data.clone(),
            topic_data: q.topic_data.clone(),
            data_representation: q
                .data_representation
                .iter()
                .map(|&r| to_wire_representation(r))
                .collect(),
            reader_data_lifecycle: wire::ReaderDataLifecycle {
                autopurge_nowriter_samples_delay: to_wire_duration(
                    q.reader_data_lifecycle.autopurge_nowriter_samples_delay,
                ),
                autopurge_disposed_samples_delay: to_wire_duration(
                    q.reader_data_lifecycle.autopurge_disposed_samples_delay,
                ),
            },
            ..EndpointQos::reader_default()
        }
    }
}

impl From<&EndpointQos> for DataReaderQos {
    /// A local reader's current QoS, or a discovered reader's (its writer-only and group
    /// policies are dropped).
    fn from(q: &EndpointQos) -> Self {
        let lifecycle = &q.reader_data_lifecycle;
        DataReaderQos {
            durability: q.durability.into(),
            deadline: from_wire_duration(q.deadline),
            latency_budget: from_wire_duration(q.latency_budget),
            liveliness: q.liveliness.into(),
            reliability: q.reliability.into(),
            destination_order: q.destination_order.into(),
            history: q.history.into(),
            resource_limits: q.resource_limits.into(),
            user_data: q.user_data.clone(),
            ownership: q.ownership.into(),
            time_based_filter: from_wire_duration(q.time_based_filter),
            reader_data_lifecycle: ReaderDataLifecycle {
                autopurge_nowriter_samples_delay: from_wire_duration(
                    lifecycle.autopurge_nowriter_samples_delay,
                ),
                autopurge_disposed_samples_delay: from_wire_duration(
                    lifecycle.autopurge_disposed_samples_delay,
                ),
            },
            data_representation: from_wire_representations(&q.data_representation),
            topic_data: q.topic_data.clone(),
        }
    }
}

impl From<&TopicQos> for EndpointQos {
    /// The topic's policies over a reader's defaults (an XML profile's `<topic_qos>` is
    /// read into an [`EndpointQos`] first).
    fn from(q: &TopicQos) -> Self {
        EndpointQos {
            topic_data: q.topic_data.clone(),
            durability: q.durability.into(),
            durability_service: q.durability_service.into(),
            deadline: to_wire_duration(q.deadline),
            latency_budget: to_wire_duration(q.latency_budget),
            liveliness: q.liveliness.into(),
            reliability: q.reliability.into(),
            destination_order: q.destination_order.into(),
            history: q.history.into(),
            resource_limits: q.resource_limits.into(),
            transport_priority: q.transport_priority,
            lifespan: to_wire_duration(q.lifespan),
            ownership: q.ownership.into(),
            data_representation: q
                .data_representation
                .iter()
                .map(|&r| to_wire_representation(r))
                .collect(),
            ..EndpointQos::reader_default()
        }
    }
}

impl From<&EndpointQos> for TopicQos {
    /// The topic-level policies of `q`.
    fn from(q: &EndpointQos) -> Self {
        TopicQos {
            topic_data: q.topic_data.clone(),
            durability: q.durability.into(),
            durability_service: q.durability_service.into(),
            deadline: from_wire_duration(q.deadline),
            latency_budget: from_wire_duration(q.latency_budget),
            liveliness: q.liveliness.into(),
            reliability: q.reliability.into(),
            destination_order: q.destination_order.into(),
            history: q.history.into(),
            resource_limits: q.resource_limits.into(),
            transport_priority: q.transport_priority,
            lifespan: from_wire_duration(q.lifespan),
            ownership: q.ownership.into(),
            data_representation: from_wire_representations(&q.data_representation),
        }
    }
}

impl From<&PublisherQos> for GroupQos {
    fn from(q: &PublisherQos) -> Self {
        GroupQos {
            partition: q.partition.clone(),
            group_data: q.group_data.clone(),
            presentation: q.presentation.into(),
            entity_factory: q.entity_factory,
        }
    }
}

impl From<&GroupQos> for PublisherQos {
    fn from(q: &GroupQos) -> Self {
        PublisherQos {
            presentation: q.presentation.into(),
            partition: q.partition.clone(),
            group_data: q.group_data.clone(),
            entity_factory: q.entity_factory,
        }
    }
}

impl From<&SubscriberQos> for GroupQos {
    fn from(q: &SubscriberQos) -> Self {
        GroupQos {
            partition: q.partition.clone(),
            group_data: q.group_data.clone(),
            presentation: q.presentation.into(),
            entity_factory: q.entity_factory,
        }
    }
}

impl From<&GroupQos> for SubscriberQos {
    fn from(q: &GroupQos) -> Self {
        SubscriberQos {
            presentation: q.presentation.into(),
            partition: q.partition.clone(),
            group_data: q.group_data.clone(),
            entity_factory: q.entity_factory,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every writer policy set away from its default, so a dropped field shows.
    fn unusual_writer() -> DataWriterQos {
        DataWriterQos::default()
            .durability(Durability::Persistent)
            .durability_service(DurabilityService {
                service_cleanup_delay: Duration::from_millis(1500),
                history: History::KeepAll,
                resource_limits: ResourceLimits {
                    max_samples: Some(100),
                    max_instances: Some(10),
                    max_samples_per_instance: Some(10),
                },
            })
            .deadline(Duration::from_nanos(1_234_567_891))
            .latency_budget(Duration::from_micros(7))
            .liveliness(LivelinessKind::ManualByTopic, Duration::from_secs(3))
            .best_effort()
            .max_blocking_time(Duration::from_secs(2))
            .destination_order(DestinationOrder::BySourceTimestamp)
            .keep_last(7)
            .resource_limits(ResourceLimits {
                max_samples: Some(70),
                max_instances: None,
                max_samples_per_instance: Some(7),
            })
            .transport_priority(-3)
            .lifespan(Duration::from_secs(60))
            .user_data(*b"user")
            .ownership(Ownership::Exclusive)
            .ownership_strength(9)
            .autodispose_unregistered_instances(false)
            .data_representation(DataRepresentation::Xcdr2)
            .topic_data(*b"topic")
    }

    fn unusual_reader() -> DataReaderQos {
        DataReaderQos::default()
            .durability(Durability::TransientLocal)
            .deadline(Duration::from_millis(250))
            .latency_budget(Duration::from_nanos(1))
            .liveliness(LivelinessKind::ManualByParticipant, Duration::from_secs(1))
            .reliable()
            .max_blocking_time(INFINITE)
            .destination_order(DestinationOrder::BySourceTimestamp)
            .keep_all()
            .resource_limits(ResourceLimits {
                max_samples: None,
                max_instances: Some(3),
                max_samples_per_instance: None,
            })
            .user_data(*b"reader")
            .ownership(Ownership::Exclusive)
            .time_based_filter(Duration::from_millis(100))
            .reader_data_lifecycle(ReaderDataLifecycle {
                autopurge_nowriter_samples_delay: Duration::from_secs(5),
                autopurge_disposed_samples_delay: Duration::ZERO,
            })
            .data_representation([DataRepresentation::Xcdr2, DataRepresentation::Xcdr1])
            .topic_data(*b"t")
    }

    #[test]
    fn writer_and_reader_qos_survive_the_wire_type_both_ways() {
        for q in [DataWriterQos::default(), unusual_writer()] {
            let w = EndpointQos::from(&q);
            assert_eq!(DataWriterQos::from(&w), q);
            assert_eq!(EndpointQos::from(&DataWriterQos::from(&w)), w);
        }
        for q in [DataReaderQos::default(), unusual_reader()] {
            let w = EndpointQos::from(&q);
            assert_eq!(DataReaderQos::from(&w), q);
            assert_eq!(EndpointQos::from(&DataReaderQos::from(&w)), w);
        }
        let topic = TopicQos::default()
            .topic_data(*b"td")
            .keep_last(4)
            .reliable()
            .lifespan(Duration::from_secs(1))
            .data_representation([DataRepresentation::Xcdr2]);
        assert_eq!(TopicQos::from(&EndpointQos::from(&topic)), topic);
    }

    #[test]
    fn defaults_are_the_wire_crate_defaults_of_each_kind() {
        assert_eq!(
            EndpointQos::from(&DataWriterQos::default()),
            EndpointQos::writer_default()
        );
        assert_eq!(
            EndpointQos::from(&DataReaderQos::default()),
            EndpointQos::reader_default()
        );
        assert_eq!(
            EndpointQos::from(&TopicQos::default()),
            EndpointQos::reader_default()
        );
    }

    #[test]
    fn policy_values_reach_the_wire_as_the_spec_encodes_them() {
        let w = EndpointQos::from(&unusual_writer());
        assert_eq!(w.durability, wire::DurabilityKind::Persistent);
        assert_eq!(w.history, wire::History::KeepLast(7));
        assert_eq!(w.resource_limits.max_instances, -1);
        assert_eq!(w.deadline.to_nanos(), 1_234_567_891);
        assert_eq!(w.data_representation, vec![XCDR2]);
        let r = EndpointQos::from(&unusual_reader());
        assert_eq!(r.reliability.max_blocking_time, WireDuration::INFINITE);
        assert_eq!(r.data_representation, vec![XCDR2, XCDR1]);
        assert_eq!(
            to_wire_duration(Duration::from_secs(1 << 40)),
            WireDuration::INFINITE
        );
        assert_eq!(from_wire_duration(WireDuration::INFINITE), INFINITE);
        let group = PublisherQos::default().presentation(Presentation {
            access_scope: PresentationAccessScope::Group,
            coherent_access: true,
            ordered_access: false,
        });
        let g = GroupQos::from(&group);
        assert_eq!(
            g.presentation.access_scope,
            wire::PresentationAccessScope::Group
        );
        assert_eq!(PublisherQos::from(&g), group);
    }
}
