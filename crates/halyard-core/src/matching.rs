//! Writer/reader matching: topic, type, partitions and requested-versus-offered QoS
//! (DDS 1.4 §2.2.3, the "RxO" column).

use crate::event::QosPolicyId;
use halyard_wire::qos::{EndpointQos, ReliabilityKind};

/// Data representation id of XCDR1 (DDS-XTypes 1.3 §7.6.3.1.1).
pub const XCDR1: i16 = 0;
/// Data representation id of XCDR2.
pub const XCDR2: i16 = 2;

/// How a writer and a reader stand to each other.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pairing {
    /// Another topic or type, or partitions that do not meet: nothing to report.
    Unrelated,
    /// Same topic, type and partition, but the offered QoS fails the requested one.
    Incompatible(QosPolicyId),
    /// They match.
    Compatible,
}

/// An endpoint as matching sees it: topic, type and QoS.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    /// Topic name.
    pub topic: &'a str,
    /// Type name.
    pub type_name: &'a str,
    /// QoS.
    pub qos: &'a EndpointQos,
}

/// Judges a writer and a reader: topic, type and partitions first, then requested versus
/// offered QoS.
pub fn pairing(writer: Side<'_>, reader: Side<'_>) -> Pairing {
    if writer.topic != reader.topic
        || writer.type_name != reader.type_name
        || !partitions_match(&writer.qos.partition, &reader.qos.partition)
    {
        return Pairing::Unrelated;
    }
    match incompatible_policy(writer.qos, reader.qos) {
        Some(p) => Pairing::Incompatible(p),
        None => Pairing::Compatible,
    }
}

/// The first policy that differs between `old` and `new` although DDS 1.4 (§2.2.3, the
/// "Changeable" column) and DDS-XTypes fix it once the entity is enabled; `None` if every
/// difference is in a changeable policy (DEADLINE, LATENCY_BUDGET, OWNERSHIP_STRENGTH,
/// TIME_BASED_FILTER, PARTITION, TRANSPORT_PRIORITY, LIFESPAN, the data lifecycles and the
/// USER/TOPIC/GROUP_DATA octets).
pub fn immutable_change(old: &EndpointQos, new: &EndpointQos) -> Option<QosPolicyId> {
    use QosPolicyId as P;
    let fixed: [(QosPolicyId, bool); 10] = [
        (P::Durability, old.durability == new.durability),
        (
            P::DurabilityService,
            old.durability_service == new.durability_service,
        ),
        (P::Presentation, old.presentation == new.presentation),
        (P::Ownership, old.ownership == new.ownership),
        (P::Liveliness, old.liveliness == new.liveliness),
        (P::Reliability, old.reliability == new.reliability),
        (
            P::DestinationOrder,
            old.destination_order == new.destination_order,
        ),
        (P::History, old.history == new.history),
        (
            P::ResourceLimits,
            old.resource_limits == new.resource_limits,
        ),
        (
            P::DataRepresentation,
            old.data_representation == new.data_representation,
        ),
    ];
    fixed.iter().find(|(_, same)| !same).map(|(id, _)| *id)
}

/// The first policy for which `offered` (writer) fails to satisfy `requested` (reader).
pub fn incompatible_policy(offered: &EndpointQos, requested: &EndpointQos) -> Option<QosPolicyId> {
    use QosPolicyId as P;
    if rank_reliability(offered.reliability.kind) < rank_reliability(requested.reliability.kind) {
        return Some(P::Reliability);
    }
    if offered.durability < requested.durability {
        return Some(P::Durability);
    }
    if offered.deadline > requested.deadline {
        return Some(P::Deadline);
    }
    if offered.latency_budget > requested.latency_budget {
        return Some(P::LatencyBudget);
    }
    if offered.liveliness.kind < requested.liveliness.kind
        || offered.liveliness.lease_duration > requested.liveliness.lease_duration
    {
        return Some(P::Liveliness);
    }
    if offered.ownership != requested.ownership {
        return Some(P::Ownership);
    }
    if offered.destination_order < requested.destination_order {
        return Some(P::DestinationOrder);
    }
    let (o, r) = (&offered.presentation, &requested.presentation);
    if o.access_scope < r.access_scope
        || (r.coherent_access && !o.coherent_access)
        || (r.ordered_access && !o.ordered_access)
    {
        return Some(P::Presentation);
    }
    let written = offered
        .data_representation
        .first()
        .copied()
        .unwrap_or(XCDR1);
    let accepted: &[i16] = if requested.data_representation.is_empty() {
        &[XCDR1]
    } else {
        &requested.data_representation
    };
    if !accepted.contains(&written) {
        return Some(P::DataRepresentation);
    }
    None
}

fn rank_reliability(k: ReliabilityKind) -> u8 {
    match k {
        ReliabilityKind::BestEffort => 0,
        ReliabilityKind::Reliable => 1,
    }
}

/// True if the two PARTITION policies share a partition (an empty list means `[""]`);
/// names may use fnmatch-style wildcards `*`, `?` and `[...]` on either side.
pub fn partitions_match(a: &[String], b: &[String]) -> bool {
    let default = [String::new()];
    let a = if a.is_empty() { &default[..] } else { a };
    let b = if b.is_empty() { &default[..] } else { b };
    a.iter()
        .any(|x| b.iter().any(|y| partition_pair_matches(x, y)))
}

fn partition_pair_matches(x: &str, y: &str) -> bool {
    let xw = has_wildcard(x);
    let yw = has_wildcard(y);
    match (xw, yw) {
        (false, false) => x == y,
        (true, false) => glob_match(x.as_bytes(), y.as_bytes()),
        (false, true) => glob_match(y.as_bytes(), x.as_bytes()),
        // Two patterns never match each other (DDS 1.4 §2.2.3.13).
        (true, true) => false,
    }
}

fn has_wildcard(s: &str) -> bool {
    s.bytes().any(|c| matches!(c, b'*' | b'?' | b'['))
}

/// fnmatch-style matching without recursion blow-up (iterative with backtracking on `*`).
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    t += 1;
                    continue;
                }
                b'[' => {
                    if let Some((ok, next)) = class_match(&pattern[p..], text[t]) {
                        if ok {
                            p += next;
                            t += 1;
                            continue;
                        }
                    } else if text[t] == b'[' {
                        p += 1;
                        t += 1;
                        continue;
                    }
                }
                c if c == text[t] => {
                    p += 1;
                    t += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// Matches a `[...]` class at the start of `pat`; returns (matched, class length), or None if
/// the class is not terminated (then `[` is literal).
fn class_match(pat: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(pat.get(1), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pat.len() {
        if pat[i] == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if i + 2 < pat.len() && pat[i + 1] == b'-' && pat[i + 2] != b']' {
            if pat[i] <= c && c <= pat[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if pat[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_wire::qos::{DurabilityKind, EndpointQos};

    #[test]
    fn reliability_and_durability_follow_rxo() {
        let mut w = EndpointQos::writer_default();
        let mut r = EndpointQos::reader_default();
        assert_eq!(incompatible_policy(&w, &r), None);
        r.reliability.kind = ReliabilityKind::Reliable;
        assert_eq!(incompatible_policy(&w, &r), None);
        w.reliability.kind = ReliabilityKind::BestEffort;
        assert_eq!(incompatible_policy(&w, &r), Some(QosPolicyId::Reliability));
        w.reliability.kind = ReliabilityKind::Reliable;
        r.durability = DurabilityKind::TransientLocal;
        assert_eq!(incompatible_policy(&w, &r), Some(QosPolicyId::Durability));
        w.durability = DurabilityKind::Transient;
        assert_eq!(incompatible_policy(&w, &r), None);
    }

    #[test]
    fn partitions_with_wildcards() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(partitions_match(&[], &[]));
        assert!(partitions_match(&s(&[""]), &[]));
        assert!(!partitions_match(&s(&["a"]), &[]));
        assert!(partitions_match(&s(&["a", "b"]), &s(&["b"])));
        assert!(partitions_match(&s(&["sensor*"]), &s(&["sensor_1"])));
        assert!(partitions_match(&s(&["x"]), &s(&["?"])));
        assert!(partitions_match(&s(&["p[0-9]"]), &s(&["p7"])));
        assert!(!partitions_match(&s(&["p[!0-9]"]), &s(&["p7"])));
        assert!(!partitions_match(&s(&["a*"]), &s(&["a*"])));
        assert!(!partitions_match(&s(&["sensor*"]), &s(&["actuator"])));
    }
}

/// How the XTypes types of a writer and a reader (already of the same type name) stand, as
/// far as matching goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TypeVerdict {
    /// At least one side announced no TypeInformation (Cyclone DDS 0.10, Fast DDS 2.9 by
    /// configuration, Halyard types without a description): matched by type name.
    Untyped,
    /// Both announced the same minimal type: they match.
    SameType,
    /// Both announced TypeInformation with different minimal types: whether they match is
    /// decided by assignability (XTypes 1.3 §7.2.4) once the remote type is looked up (see
    /// `discovery::typelookup::assign`), or by type name when it cannot be.
    NameFallback,
}

impl TypeVerdict {
    /// Whether the pairing may match on this verdict alone (a `NameFallback` pairing still
    /// awaits the assignability decision).
    pub fn matches(self) -> bool {
        match self {
            TypeVerdict::Untyped | TypeVerdict::SameType | TypeVerdict::NameFallback => true,
        }
    }
}

/// THE type-consistency decision of matching (XTypes 1.3 §7.6.3.4): what the writer's and the
/// reader's TypeInformation, where announced, say about matching them: the first step of the
/// type check, which `discovery::typelookup::assign` completes for types that differ.
pub fn type_verdict(
    writer: Option<&halyard_xtypes::TypeInformation>,
    reader: Option<&halyard_xtypes::TypeInformation>,
) -> TypeVerdict {
    match (writer, reader) {
        (Some(w), Some(r)) => {
            if w.minimal.typeid_with_size.type_id == r.minimal.typeid_with_size.type_id {
                TypeVerdict::SameType
            } else {
                TypeVerdict::NameFallback
            }
        }
        _ => TypeVerdict::Untyped,
    }
}
