//! QoS conversion: the Python `Qos` object hands a dict of policies (plain tuples, strings
//! and nanosecond integers, see `halyard/qos.py`) that becomes a writer's or reader's QoS
//! (read into the wire's `EndpointQos`, which holds every endpoint policy, then converted
//! by Halyard's `From` to `DataWriterQos` or `DataReaderQos`) or a `PublisherQos` /
//! `SubscriberQos`. An unknown policy or value is a `QosError` naming it; consistency is
//! checked by Halyard when the entity is created (also a `QosError` naming the policy).

use halyard::qos::wire::{
    DestinationOrderKind, DurabilityKind, DurabilityService, Duration as DdsDuration, EndpointQos,
    History, Liveliness, LivelinessKind, OwnershipKind, Reliability, ReliabilityKind,
    ResourceLimits,
};
use halyard::qos::{Presentation, PresentationAccessScope, PublisherQos, SubscriberQos};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::QosError;

fn bad(policy: &str, why: impl std::fmt::Display) -> PyErr {
    QosError::new_err(format!("invalid {policy} QoS: {why}"))
}

/// A duration in nanoseconds; `None` or a negative value is infinite.
fn duration(policy: &str, v: &Bound<'_, PyAny>) -> PyResult<DdsDuration> {
    if v.is_none() {
        return Ok(DdsDuration::INFINITE);
    }
    let ns: i64 = v
        .extract()
        .map_err(|_| bad(policy, "a duration is an int of nanoseconds or None"))?;
    if ns < 0 {
        return Ok(DdsDuration::INFINITE);
    }
    Ok(DdsDuration::from_nanos(ns))
}

fn get<'a, 'p, T: FromPyObject<'p>>(v: &'a Bound<'p, PyAny>, policy: &str) -> PyResult<T> {
    v.extract()
        .map_err(|e| bad(policy, format!("unexpected value {v}: {e}")))
}

/// A HISTORY value (`keep_all`, or `keep_last` and its depth) of policy `policy`.
fn history(policy: &str, kind: &str, depth: i64) -> PyResult<History> {
    Ok(match kind {
        "keep_all" => History::KeepAll,
        "keep_last" => {
            History::KeepLast(i32::try_from(depth).map_err(|_| bad(policy, "depth out of range"))?)
        }
        o => return Err(bad(policy, format!("unknown kind {o}"))),
    })
}

/// Applies the policies of `d` to `q`.
pub fn apply_endpoint(q: &mut EndpointQos, d: &Bound<'_, PyDict>) -> PyResult<()> {
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        apply_one(q, &key, &v)?;
    }
    Ok(())
}

fn apply_one(q: &mut EndpointQos, key: &str, v: &Bound<'_, PyAny>) -> PyResult<()> {
    match key {
        "reliability" => {
            let (kind, blocking): (String, Bound<'_, PyAny>) = get(v, key)?;
            q.reliability = Reliability {
                kind: match kind.as_str() {
                    "reliable" => ReliabilityKind::Reliable,
                    "best_effort" => ReliabilityKind::BestEffort,
                    o => return Err(bad(key, format!("unknown kind {o}"))),
                },
                max_blocking_time: duration(key, &blocking)?,
            };
        }
        "durability" => {
            let kind: String = get(v, key)?;
            q.durability = match kind.as_str() {
                "volatile" => DurabilityKind::Volatile,
                "transient_local" => DurabilityKind::TransientLocal,
                "transient" => DurabilityKind::Transient,
                "persistent" => DurabilityKind::Persistent,
                o => return Err(bad(key, format!("unknown kind {o}"))),
            };
        }
        "history" => {
            let (kind, depth): (String, i64) = get(v, key)?;
            q.history = history(key, &kind, depth)?;
        }
        "resource_limits" => {
            let (a, b, c): (i32, i32, i32) = get(v, key)?;
            q.resource_limits = ResourceLimits {
                max_samples: a,
                max_instances: b,
                max_samples_per_instance: c,
            };
        }
        "durability_service" => {
            let (delay, (kind, depth), a, b, c): (Bound<'_, PyAny>, (String, i64), i32, i32, i32) =
                get(v, key)?;
            q.durability_service = DurabilityService {
                service_cleanup_delay: duration(key, &delay)?,
                history: history(key, &kind, depth)?,
                limits: ResourceLimits {
                    max_samples: a,
                    max_instances: b,
                    max_samples_per_instance: c,
                },
            };
        }
        "deadline" => q.deadline = duration(key, v)?,
        "lifespan" => q.lifespan = duration(key, v)?,
        "latency_budget" => q.latency_budget = duration(key, v)?,
        "time_based_filter" => q.time_based_filter = duration(key, v)?,
        "liveliness" => {
            let (kind, lease): (String, Bound<'_, PyAny>) = get(v, key)?;
            q.liveliness = Liveliness {
                kind: match kind.as_str() {
                    "automatic" => LivelinessKind::Automatic,
                    "manual_by_participant" => LivelinessKind::ManualByParticipant,
                    "manual_by_topic" => LivelinessKind::ManualByTopic,
                    o => return Err(bad(key, format!("unknown kind {o}"))),
                },
                lease_duration: duration(key, &lease)?,
            };
        }
        "ownership" => {
            let kind: String = get(v, key)?;
            q.ownership = match kind.as_str() {
                "shared" => OwnershipKind::Shared,
                "exclusive" => OwnershipKind::Exclusive,
                o => return Err(bad(key, format!("unknown kind {o}"))),
            };
        }
        "ownership_strength" => q.ownership_strength = get(v, key)?,
        "transport_priority" => q.transport_priority = get(v, key)?,
        // Group policies are the publisher's or subscriber's (DDS 1.4 §2.2.3): a writer or
        // reader takes its group's, as `group` ignores the endpoint policies.
        "partition" | "presentation" | "group_data" => {}
        "user_data" => q.user_data = get(v, key)?,
        "topic_data" => q.topic_data = get(v, key)?,
        "destination_order" => {
            let kind: String = get(v, key)?;
            q.destination_order = match kind.as_str() {
                "by_reception_timestamp" => DestinationOrderKind::ByReceptionTimestamp,
                "by_source_timestamp" => DestinationOrderKind::BySourceTimestamp,
                o => return Err(bad(key, format!("unknown kind {o}"))),
            };
        }
        "data_representation" => {
            let kinds: Vec<String> = get(v, key)?;
            q.data_representation = kinds
                .iter()
                .map(|k| match k.as_str() {
                    "xcdr1" => Ok(0),
                    "xcdr2" => Ok(2),
                    o => Err(bad(key, format!("unknown representation {o}"))),
                })
                .collect::<PyResult<_>>()?;
        }
        "writer_data_lifecycle" => {
            q.writer_data_lifecycle.autodispose_unregistered_instances = get(v, key)?;
        }
        o => return Err(bad(o, "not a DataWriter/DataReader policy Halyard knows")),
    }
    Ok(())
}

fn presentation(v: &Bound<'_, PyAny>) -> PyResult<Presentation> {
    let (scope, coherent, ordered): (String, bool, bool) = get(v, "presentation")?;
    Ok(Presentation {
        access_scope: match scope.as_str() {
            "instance" => PresentationAccessScope::Instance,
            "topic" => PresentationAccessScope::Topic,
            "group" => PresentationAccessScope::Group,
            o => return Err(bad("presentation", format!("unknown access scope {o}"))),
        },
        coherent_access: coherent,
        ordered_access: ordered,
    })
}

/// The group policies of `d`: partition, presentation and group_data.
#[derive(Default)]
struct Group {
    partition: Vec<String>,
    presentation: Presentation,
    group_data: Vec<u8>,
}

/// Reads the group policies of `d` (the endpoint policies are ignored there, as DDS does for
/// a group).
fn group(d: Option<&Bound<'_, PyDict>>) -> PyResult<Group> {
    let mut g = Group::default();
    if let Some(d) = d {
        for (k, v) in d.iter() {
            let key: String = k.extract()?;
            match key.as_str() {
                "partition" => g.partition = get(&v, "partition")?,
                "presentation" => g.presentation = presentation(&v)?,
                "group_data" => g.group_data = get(&v, "group_data")?,
                _ => {}
            }
        }
    }
    Ok(g)
}

/// A publisher's QoS from the policies of `d`.
pub fn publisher(d: Option<&Bound<'_, PyDict>>) -> PyResult<PublisherQos> {
    let g = group(d)?;
    Ok(PublisherQos::default()
        .partition(g.partition)
        .presentation(g.presentation)
        .group_data(g.group_data))
}

/// A subscriber's QoS from the policies of `d`.
pub fn subscriber(d: Option<&Bound<'_, PyDict>>) -> PyResult<SubscriberQos> {
    let g = group(d)?;
    Ok(SubscriberQos::default()
        .partition(g.partition)
        .presentation(g.presentation)
        .group_data(g.group_data))
}
