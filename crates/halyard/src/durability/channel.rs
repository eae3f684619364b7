//! A durable channel (topic, type, partition set, kind): what identifies it, and the QoS of
//! the service's reader and relay writer for it, derived from its first writer's.

use halyard_core::matching::{XCDR1, XCDR2};
use halyard_store::{ChannelId, ChannelSpec, Limits};
use halyard_wire::discovery::EndpointData;
use halyard_wire::qos::{
    DestinationOrderKind, DurabilityKind, EndpointQos, History, LivelinessKind, ReliabilityKind,
};
use halyard_wire::{Duration as WireDuration, EntityId, Guid};
use std::time::Duration;

/// What identifies a channel: samples of writers that agree on these are kept together.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct ChannelKey {
    pub(super) topic: String,
    pub(super) type_name: String,
    /// Sorted, without repeats (empty: the default partition).
    pub(super) partitions: Vec<String>,
    pub(super) persistent: bool,
}

impl ChannelKey {
    /// The channel of durable writer `ed`.
    pub(super) fn of(ed: &EndpointData) -> ChannelKey {
        ChannelKey {
            topic: ed.topic_name.clone(),
            type_name: ed.type_name.clone(),
            partitions: normalized(&ed.qos.partition),
            persistent: ed.qos.durability == DurabilityKind::Persistent,
        }
    }

    /// The channel a stored spec describes.
    pub(super) fn of_spec(spec: &ChannelSpec) -> ChannelKey {
        ChannelKey {
            topic: spec.topic.clone(),
            type_name: spec.type_name.clone(),
            partitions: normalized(&spec.partitions),
            persistent: spec.persistent,
        }
    }

    /// How problems name it.
    pub(super) fn describe(&self) -> String {
        format!(
            "{} topic {:?} (type {:?}, partitions {:?})",
            if self.persistent {
                "PERSISTENT"
            } else {
                "TRANSIENT"
            },
            self.topic,
            self.type_name,
            self.partitions
        )
    }
}

fn normalized(p: &[String]) -> Vec<String> {
    let mut v = p.to_vec();
    v.sort();
    v.dedup();
    v
}

/// A channel the service serves.
pub(super) struct Channel {
    pub(super) store_id: ChannelId,
    /// The relay writer.
    pub(super) relay: EntityId,
    pub(super) has_key: bool,
    /// SERVICE_CLEANUP_DELAY (`None`: infinite).
    pub(super) cleanup_delay: Option<Duration>,
    /// A writer's samples came without key hashes (said once).
    pub(super) warned_no_key: bool,
}

/// True for a GUID of a keyed writer or reader (RTPS entity kinds 0x02 and 0x07).
pub(super) fn is_keyed(guid: &Guid) -> bool {
    matches!(
        guid.entity.0[3],
        EntityId::KIND_WRITER_WITH_KEY | EntityId::KIND_READER_WITH_KEY
    )
}

/// The store's limits: the writer's DURABILITY_SERVICE history and resource limits.
pub(super) fn limits_of(qos: &EndpointQos) -> Limits {
    let ds = &qos.durability_service;
    let limit = |v: i32| (v > 0).then_some(v as u64);
    Limits {
        history_depth: match ds.history {
            History::KeepLast(d) => Some(d.max(1) as u32),
            History::KeepAll => None,
        },
        max_samples: limit(ds.limits.max_samples),
        max_instances: limit(ds.limits.max_instances),
        max_samples_per_instance: limit(ds.limits.max_samples_per_instance),
    }
}

/// SERVICE_CLEANUP_DELAY as a duration (`None`: infinite).
pub(super) fn cleanup_delay(qos: &EndpointQos) -> Option<Duration> {
    let d = qos.durability_service.service_cleanup_delay;
    if d == WireDuration::INFINITE {
        return None;
    }
    Some(Duration::from_nanos(d.to_nanos().max(0) as u64))
}

/// The service's reader: reliable, KEEP_ALL, the channel's kind and partitions; it asks for
/// nothing a writer could fail to offer but the writer's ownership (which must be equal).
pub(super) fn reader_qos(key: &ChannelKey, writer: &EndpointQos) -> EndpointQos {
    let mut q = EndpointQos::reader_default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = History::KeepAll;
    q.durability = match key.persistent {
        true => DurabilityKind::Persistent,
        false => DurabilityKind::Transient,
    };
    q.partition = key.partitions.clone();
    q.ownership = writer.ownership;
    q.destination_order = DestinationOrderKind::ByReceptionTimestamp;
    q.liveliness.kind = LivelinessKind::Automatic;
    q.liveliness.lease_duration = WireDuration::INFINITE;
    q.deadline = WireDuration::INFINITE;
    q.data_representation = vec![XCDR1, XCDR2];
    q
}

/// The relay: the writer's QoS (ownership, liveliness, deadline, lifespan, order, data
/// representation), reliable, the channel's kind and partitions. Its history is what the
/// store keeps (the DURABILITY_SERVICE history and limits apply there, to data samples; a
/// dispose or an unregistration takes no data sample's place): KEEP_ALL without limits of
/// its own, and the service removes from it what the store removes.
pub(super) fn relay_qos(key: &ChannelKey, writer: &EndpointQos) -> EndpointQos {
    let mut q = writer.clone();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.durability = match key.persistent {
        true => DurabilityKind::Persistent,
        false => DurabilityKind::Transient,
    };
    q.partition = key.partitions.clone();
    q.history = History::KeepAll;
    q.resource_limits = Default::default();
    // Bounded by the store's limits; the core's default cap would refuse the rest.
    q.resource_limits.max_samples = i32::MAX;
    q.resource_limits.max_instances = -1;
    q.resource_limits.max_samples_per_instance = -1;
    q.presentation = Default::default();
    q.user_data = Vec::new();
    q
}

/// The store's description of the channel (the writer's announcement is kept with it, so a
/// restarted service serves with the same QoS before any writer is back).
pub(super) fn store_spec(key: &ChannelKey, ed: &EndpointData) -> ChannelSpec {
    let mut announcement = Vec::new();
    ed.emit(&mut announcement);
    ChannelSpec {
        topic: key.topic.clone(),
        type_name: key.type_name.clone(),
        partitions: key.partitions.clone(),
        // Until type discovery (XTypes) the registered type name is the type's identity.
        type_identity: key.type_name.as_bytes().to_vec(),
        persistent: key.persistent,
        limits: limits_of(&ed.qos),
        writer_qos: announcement,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_wire::GuidPrefix;

    fn writer(durability: DurabilityKind, partitions: &[&str]) -> EndpointData {
        let mut qos = EndpointQos::writer_default();
        qos.durability = durability;
        qos.partition = partitions.iter().map(|s| s.to_string()).collect();
        EndpointData {
            guid: Guid::new(
                GuidPrefix([1; 12]),
                EntityId([0, 0, 1, EntityId::KIND_WRITER_WITH_KEY]),
            ),
            participant_guid: None,
            topic_name: "T".into(),
            type_name: "M::T".into(),
            qos,
            unicast_locators: Vec::new(),
            multicast_locators: Vec::new(),
            expects_inline_qos: false,
            protocol_version: None,
            vendor_id: None,
            type_max_size_serialized: None,
            entity_name: None,
            content_filter: None,
            group_entity: None,
            security_info: None,
            type_information: None,
        }
    }

    #[test]
    fn a_channel_is_its_topic_type_sorted_partitions_and_kind() {
        let a = ChannelKey::of(&writer(DurabilityKind::Persistent, &["b", "a", "b"]));
        assert_eq!(a.partitions, vec!["a".to_string(), "b".to_string()]);
        assert!(a.persistent);
        let t = ChannelKey::of(&writer(DurabilityKind::Transient, &["a", "b"]));
        assert_ne!(a, t, "the kind is part of the channel");
        let spec = store_spec(&a, &writer(DurabilityKind::Persistent, &["b", "a"]));
        assert_eq!(ChannelKey::of_spec(&spec), a);
        let back = EndpointData::parse(&spec.writer_qos).expect("the stored announcement parses");
        assert_eq!(back.topic_name, "T");
        assert!(is_keyed(&back.guid));
    }

    #[test]
    fn the_store_takes_the_durability_service_history_and_the_reader_asks_little() {
        let mut ed = writer(DurabilityKind::Transient, &[]);
        ed.qos.durability_service.history = History::KeepLast(7);
        ed.qos.durability_service.limits.max_instances = 3;
        ed.qos.liveliness.kind = LivelinessKind::ManualByTopic;
        let key = ChannelKey::of(&ed);
        let relay = relay_qos(&key, &ed.qos);
        // The store keeps the history (depth 7, 3 instances); the relay what the store keeps.
        assert_eq!(relay.history, History::KeepAll);
        assert_eq!(relay.resource_limits.max_instances, -1);
        assert_eq!(relay.resource_limits.max_samples, i32::MAX);
        assert_eq!(relay.liveliness.kind, LivelinessKind::ManualByTopic);
        let reader = reader_qos(&key, &ed.qos);
        assert_eq!(reader.durability, DurabilityKind::Transient);
        assert_eq!(reader.history, History::KeepAll);
        assert_eq!(reader.liveliness.kind, LivelinessKind::Automatic);
        let limits = limits_of(&ed.qos);
        assert_eq!(limits.history_depth, Some(7));
        assert_eq!(limits.max_instances, Some(3));
        assert_eq!(limits.max_samples, None);
        ed.qos.durability_service.service_cleanup_delay = WireDuration::INFINITE;
        assert_eq!(cleanup_delay(&ed.qos), None);
        ed.qos.durability_service.service_cleanup_delay = WireDuration::from_nanos(1_500_000_000);
        assert_eq!(cleanup_delay(&ed.qos), Some(Duration::from_millis(1500)));
    }
}
