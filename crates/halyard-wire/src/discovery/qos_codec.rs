//! Parsing and emission of the QoS parameters of SEDP endpoint data (RTPS 2.5 Table 9.14).

use super::MAX_PARTITIONS;
use crate::error::WireError;
use crate::param::{pid, put_duration, put_string, ParameterListWriter, ValueReader};
use crate::qos::*;

/// Maps a wire enum value through `table` (index = wire value).
fn kind<T: Copy>(v: u32, table: &[T], what: &'static str) -> Result<T, WireError> {
    table.get(v as usize).copied().ok_or(WireError::InvalidField(what))
}

fn durability(v: u32) -> Result<DurabilityKind, WireError> {
    use DurabilityKind::*;
    kind(v, &[Volatile, TransientLocal, Transient, Persistent], "durability kind")
}

fn history(r: &mut ValueReader<'_>) -> Result<History, WireError> {
    let k = r.u32()?;
    let depth = r.i32()?;
    match k {
        0 => Ok(History::KeepLast(depth)),
        1 => Ok(History::KeepAll),
        _ => Err(WireError::InvalidField("history kind")),
    }
}

fn limits(r: &mut ValueReader<'_>) -> Result<ResourceLimits, WireError> {
    Ok(ResourceLimits {
        max_samples: r.i32()?,
        max_instances: r.i32()?,
        max_samples_per_instance: r.i32()?,
    })
}

fn reliability(r: &mut ValueReader<'_>) -> Result<Reliability, WireError> {
    let kind = match r.u32()? {
        0 | 1 => ReliabilityKind::BestEffort,
        2 | 3 => ReliabilityKind::Reliable,
        _ => return Err(WireError::InvalidField("reliability kind")),
    };
    Ok(Reliability { kind, max_blocking_time: r.duration()? })
}

fn partition(r: &mut ValueReader<'_>) -> Result<Vec<String>, WireError> {
    let n = r.u32()? as usize;
    if n > MAX_PARTITIONS {
        return Err(WireError::InvalidField("too many partitions"));
    }
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(r.string()?.to_owned());
    }
    Ok(v)
}

fn data_representation(r: &mut ValueReader<'_>) -> Result<Vec<i16>, WireError> {
    let n = r.u32()? as usize;
    if n > r.remaining() / 2 {
        return Err(WireError::Truncated);
    }
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(r.u16()? as i16);
    }
    Ok(v)
}

/// Applies QoS parameter `id` to `q`; returns false if `id` is not a QoS parameter.
pub(super) fn parse(
    q: &mut EndpointQos,
    id: u16,
    r: &mut ValueReader<'_>,
) -> Result<bool, WireError> {
    use DestinationOrderKind::*;
    use LivelinessKind::*;
    use OwnershipKind::*;
    match id {
        pid::DURABILITY => q.durability = durability(r.u32()?)?,
        pid::DURABILITY_SERVICE => {
            q.durability_service = DurabilityService {
                service_cleanup_delay: r.duration()?,
                history: history(r)?,
                limits: limits(r)?,
            }
        }
        pid::DEADLINE => q.deadline = r.duration()?,
        pid::LATENCY_BUDGET => q.latency_budget = r.duration()?,
        pid::LIVELINESS => {
            let kind = kind(
                r.u32()?,
                &[Automatic, ManualByParticipant, ManualByTopic],
                "liveliness kind",
            )?;
            q.liveliness = Liveliness { kind, lease_duration: r.duration()? }
        }
        pid::RELIABILITY => q.reliability = reliability(r)?,
        pid::DESTINATION_ORDER => {
            q.destination_order =
                kind(r.u32()?, &[ByReceptionTimestamp, BySourceTimestamp], "destination order")?
        }
        pid::HISTORY => q.history = history(r)?,
        pid::RESOURCE_LIMITS => q.resource_limits = limits(r)?,
        pid::LIFESPAN => q.lifespan = r.duration()?,
        pid::OWNERSHIP => q.ownership = kind(r.u32()?, &[Shared, Exclusive], "ownership kind")?,
        pid::OWNERSHIP_STRENGTH => q.ownership_strength = r.i32()?,
        pid::PRESENTATION => {
            use PresentationAccessScope::*;
            let access_scope =
                kind(r.u32()?, &[Instance, Topic, Group], "presentation access scope")?;
            let b = r.bytes(2)?;
            q.presentation =
                Presentation { access_scope, coherent_access: b[0] != 0, ordered_access: b[1] != 0 }
        }
        pid::PARTITION => q.partition = partition(r)?,
        pid::TIME_BASED_FILTER => q.time_based_filter = r.duration()?,
        pid::USER_DATA => q.user_data = r.octets()?.to_vec(),
        pid::TOPIC_DATA => q.topic_data = r.octets()?.to_vec(),
        pid::GROUP_DATA => q.group_data = r.octets()?.to_vec(),
        pid::TRANSPORT_PRIORITY => q.transport_priority = r.i32()?,
        pid::DATA_REPRESENTATION => q.data_representation = data_representation(r)?,
        _ => return Ok(false),
    }
    Ok(true)
}

fn put_history(b: &mut Vec<u8>, h: History) {
    let (k, depth) = match h {
        History::KeepLast(d) => (0u32, d),
        History::KeepAll => (1, 1),
    };
    b.extend_from_slice(&k.to_le_bytes());
    b.extend_from_slice(&depth.to_le_bytes());
}

fn put_limits(b: &mut Vec<u8>, l: &ResourceLimits) {
    for v in [l.max_samples, l.max_instances, l.max_samples_per_instance] {
        b.extend_from_slice(&v.to_le_bytes());
    }
}

/// Writes the policies that are always sent: RELIABILITY, DURABILITY, HISTORY, PARTITION.
fn emit_always(w: &mut ParameterListWriter<'_>, q: &EndpointQos) {
    let rk = match q.reliability.kind {
        ReliabilityKind::BestEffort => 1u32,
        ReliabilityKind::Reliable => 2,
    };
    w.with(pid::RELIABILITY, |b| {
        b.extend_from_slice(&rk.to_le_bytes());
        put_duration(b, q.reliability.max_blocking_time);
    });
    w.u32(pid::DURABILITY, q.durability as u32);
    w.with(pid::HISTORY, |b| put_history(b, q.history));
    if !q.partition.is_empty() {
        w.with(pid::PARTITION, |b| {
            let start = b.len();
            b.extend_from_slice(&(q.partition.len() as u32).to_le_bytes());
            for p in &q.partition {
                put_string(b, start, p);
            }
        });
    }
}

/// Writes the durations and simple enums that differ from `d`.
fn emit_simple(w: &mut ParameterListWriter<'_>, q: &EndpointQos, d: &EndpointQos) {
    let durations = [
        (pid::DEADLINE, q.deadline, d.deadline),
        (pid::LATENCY_BUDGET, q.latency_budget, d.latency_budget),
        (pid::LIFESPAN, q.lifespan, d.lifespan),
        (pid::TIME_BASED_FILTER, q.time_based_filter, d.time_based_filter),
    ];
    for (id, v, dv) in durations {
        if v != dv {
            w.duration(id, v);
        }
    }
    let words = [
        (pid::DESTINATION_ORDER, q.destination_order as u32, d.destination_order as u32),
        (pid::OWNERSHIP, q.ownership as u32, d.ownership as u32),
        (pid::OWNERSHIP_STRENGTH, q.ownership_strength as u32, d.ownership_strength as u32),
        (pid::TRANSPORT_PRIORITY, q.transport_priority as u32, d.transport_priority as u32),
    ];
    for (id, v, dv) in words {
        if v != dv {
            w.u32(id, v);
        }
    }
    for (id, v) in [
        (pid::USER_DATA, &q.user_data),
        (pid::TOPIC_DATA, &q.topic_data),
        (pid::GROUP_DATA, &q.group_data),
    ] {
        if !v.is_empty() {
            w.octets(id, v);
        }
    }
}

/// Writes the structured policies that differ from `d`.
fn emit_structured(w: &mut ParameterListWriter<'_>, q: &EndpointQos, d: &EndpointQos) {
    if q.durability_service != d.durability_service {
        let ds = &q.durability_service;
        w.with(pid::DURABILITY_SERVICE, |b| {
            put_duration(b, ds.service_cleanup_delay);
            put_history(b, ds.history);
            put_limits(b, &ds.limits);
        });
    }
    if q.liveliness != d.liveliness {
        w.with(pid::LIVELINESS, |b| {
            b.extend_from_slice(&(q.liveliness.kind as u32).to_le_bytes());
            put_duration(b, q.liveliness.lease_duration);
        });
    }
    if q.resource_limits != d.resource_limits {
        w.with(pid::RESOURCE_LIMITS, |b| put_limits(b, &q.resource_limits));
    }
    if q.presentation != d.presentation {
        let p = q.presentation;
        w.with(pid::PRESENTATION, |b| {
            b.extend_from_slice(&(p.access_scope as u32).to_le_bytes());
            b.extend_from_slice(&[p.coherent_access as u8, p.ordered_access as u8, 0, 0]);
        });
    }
    if !q.data_representation.is_empty() {
        w.with(pid::DATA_REPRESENTATION, |b| {
            b.extend_from_slice(&(q.data_representation.len() as u32).to_le_bytes());
            for v in &q.data_representation {
                b.extend_from_slice(&v.to_le_bytes());
            }
        });
    }
}

/// Writes the QoS of an endpoint: always RELIABILITY, DURABILITY, HISTORY and a non-empty
/// PARTITION; the others only when they differ from the default of the endpoint kind.
pub(super) fn emit(w: &mut ParameterListWriter<'_>, q: &EndpointQos, is_writer: bool) {
    let d = if is_writer { EndpointQos::writer_default() } else { EndpointQos::reader_default() };
    emit_always(w, q);
    emit_simple(w, q, &d);
    emit_structured(w, q, &d);
}
