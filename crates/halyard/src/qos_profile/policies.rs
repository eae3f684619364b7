//! The policy elements of DDS-XML QoS and their values. DDS-XML maps the DDS 1.4 IDL member
//! by member (`<reliability><kind>RELIABLE_RELIABILITY_QOS</kind></reliability>`). Each leaf
//! becomes a setter of one field, so a derived profile overrides exactly what it names. Every
//! element and value is checked here; anything unknown is an error at its line and column.

use super::{set, Pos, Setter};
use crate::error::{Error, Result};
use crate::participant::ParticipantOptions;
use crate::qos::GroupQos;
use halyard_core::matching::{XCDR1, XCDR2};
use halyard_wire::qos::{
    DestinationOrderKind as Order, DurabilityKind as Durability, EndpointQos, History,
    LivelinessKind as Liveliness, OwnershipKind as Ownership, Presentation,
    PresentationAccessScope as Scope, ReliabilityKind as Reliability, ResourceLimits,
};
use halyard_wire::Duration as DdsDuration;
use roxmltree::{Document, Node};
use std::sync::Arc;

/// Which entity's QoS element is being read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Entity {
    Writer,
    Reader,
    Topic,
    Publisher,
    Subscriber,
    Participant,
}

/// The policies of each entity's QoS (DDS 1.4 §2.2.3, XTypes 1.3 for the representation;
/// `data_representation` with `<id>` is Cyclone's spelling).
const TOPIC: &str = "topic_data durability durability_service deadline latency_budget \
    liveliness reliability destination_order history resource_limits transport_priority \
    lifespan ownership representation data_representation";
const WRITER: &str = "durability durability_service deadline latency_budget liveliness \
    reliability destination_order history resource_limits transport_priority lifespan \
    user_data ownership ownership_strength writer_data_lifecycle representation \
    data_representation";
const READER: &str = "durability deadline latency_budget liveliness reliability \
    destination_order history resource_limits user_data ownership time_based_filter \
    reader_data_lifecycle representation data_representation";
const GROUP: &str = "presentation partition group_data entity_factory";
const PARTICIPANT: &str = "user_data entity_factory";
/// DDS-XML policies Halyard has no setting for.
const UNSUPPORTED: &str = "property type_consistency data_tags";

const DURABILITY: &[(&str, Durability)] = &[
    ("VOLATILE_DURABILITY_QOS", Durability::Volatile),
    ("TRANSIENT_LOCAL_DURABILITY_QOS", Durability::TransientLocal),
    ("TRANSIENT_DURABILITY_QOS", Durability::Transient),
    ("PERSISTENT_DURABILITY_QOS", Durability::Persistent),
];
const RELIABILITY: &[(&str, Reliability)] = &[
    ("RELIABLE_RELIABILITY_QOS", Reliability::Reliable),
    ("BEST_EFFORT_RELIABILITY_QOS", Reliability::BestEffort),
];
const LIVELINESS: &[(&str, Liveliness)] = &[
    ("AUTOMATIC_LIVELINESS_QOS", Liveliness::Automatic),
    (
        "MANUAL_BY_PARTICIPANT_LIVELINESS_QOS",
        Liveliness::ManualByParticipant,
    ),
    ("MANUAL_BY_TOPIC_LIVELINESS_QOS", Liveliness::ManualByTopic),
];
const ORDER: &[(&str, Order)] = &[
    (
        "BY_RECEPTION_TIMESTAMP_DESTINATIONORDER_QOS",
        Order::ByReceptionTimestamp,
    ),
    (
        "BY_SOURCE_TIMESTAMP_DESTINATIONORDER_QOS",
        Order::BySourceTimestamp,
    ),
];
const OWNERSHIP: &[(&str, Ownership)] = &[
    ("SHARED_OWNERSHIP_QOS", Ownership::Shared),
    ("EXCLUSIVE_OWNERSHIP_QOS", Ownership::Exclusive),
];
/// `true` for KEEP_ALL.
const HISTORY: &[(&str, bool)] = &[
    ("KEEP_LAST_HISTORY_QOS", false),
    ("KEEP_ALL_HISTORY_QOS", true),
];
/// PRESENTATION access scopes.
const SCOPE: &[(&str, Scope)] = &[
    ("INSTANCE_PRESENTATION_QOS", Scope::Instance),
    ("TOPIC_PRESENTATION_QOS", Scope::Topic),
    ("GROUP_PRESENTATION_QOS", Scope::Group),
];
/// DDS-XML's names, then Cyclone's.
const REPRESENTATION: &[(&str, i16)] = &[
    ("XCDR_DATA_REPRESENTATION", XCDR1),
    ("XCDR2_DATA_REPRESENTATION", XCDR2),
    ("XCDR1", XCDR1),
    ("XCDR2", XCDR2),
];
const LIMITS: [&str; 3] = ["max_samples", "max_instances", "max_samples_per_instance"];

impl Entity {
    fn policies(self) -> Vec<&'static str> {
        let list = match self {
            Entity::Writer => WRITER,
            Entity::Reader => READER,
            Entity::Topic => TOPIC,
            Entity::Publisher | Entity::Subscriber => GROUP,
            Entity::Participant => PARTICIPANT,
        };
        list.split_whitespace().collect()
    }
}

/// Reading one document: positions and the checked access to elements and values.
pub(super) struct Cx<'a, 'i> {
    pub(super) doc: &'a Document<'i>,
    pub(super) origin: &'a Arc<str>,
}

/// An element's local name (namespaces are ignored).
pub(super) fn tag<'i>(n: Node<'_, 'i>) -> &'i str {
    n.tag_name().name()
}

/// "a, b or c".
pub(super) fn one_of(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl<'a, 'i> Cx<'a, 'i> {
    pub(super) fn pos(&self, offset: usize) -> Pos {
        let p = self.doc.text_pos_at(offset);
        Pos {
            file: self.origin.clone(),
            line: p.row,
            column: p.col,
        }
    }

    pub(super) fn err(&self, offset: usize, message: impl Into<String>) -> Error {
        self.pos(offset).error(message)
    }

    /// An error at element `n`.
    pub(super) fn at(&self, n: Node, message: impl Into<String>) -> Error {
        self.err(n.range().start, message)
    }

    fn no_attributes(&self, n: Node) -> Result<()> {
        match n.attributes().next() {
            Some(a) => {
                let message = format!("unexpected attribute {} on <{}>", a.name(), tag(n));
                Err(self.err(a.range().start, message))
            }
            None => Ok(()),
        }
    }

    /// The child elements of `n`; text other than white space is an error.
    pub(super) fn elements(&self, n: Node<'a, 'i>) -> Result<Vec<Node<'a, 'i>>> {
        let mut out = Vec::new();
        for c in n.children() {
            if c.is_element() {
                out.push(c);
            } else if c.is_text() && !c.text().unwrap_or("").trim().is_empty() {
                let (_, off) = self.trimmed(c);
                return Err(self.err(off, format!("unexpected text in <{}>", tag(n))));
            }
        }
        Ok(out)
    }

    /// The children of policy element `n`, each one of `allowed` and at most once.
    fn fields(
        &self,
        n: Node<'a, 'i>,
        allowed: &[&'static str],
    ) -> Result<Vec<(&'static str, Node<'a, 'i>)>> {
        self.no_attributes(n)?;
        let mut out: Vec<(&'static str, Node<'a, 'i>)> = Vec::new();
        for c in self.elements(n)? {
            let Some(&name) = allowed.iter().find(|a| **a == tag(c)) else {
                let expected = one_of(allowed);
                let message = format!(
                    "unknown element <{}> in <{}>; expected {expected}",
                    tag(c),
                    tag(n)
                );
                return Err(self.at(c, message));
            };
            if out.iter().any(|(f, _)| *f == name) {
                return Err(self.at(c, format!("<{name}> given twice in <{}>", tag(n))));
            }
            out.push((name, c));
        }
        Ok(out)
    }

    /// A text node's text without surrounding white space, and the offset where it starts.
    fn trimmed(&self, t: Node<'a, 'i>) -> (&'a str, usize) {
        let raw = &self.doc.input_text()[t.range()];
        let lead = raw.len() - raw.trim_start().len();
        (t.text().unwrap_or("").trim(), t.range().start + lead)
    }

    /// The value of leaf element `n` (trimmed) and its offset; elements inside are an error.
    fn value(&self, n: Node<'a, 'i>) -> Result<(String, usize)> {
        self.no_attributes(n)?;
        let (mut text, mut off) = (String::new(), None);
        for c in n.children() {
            if c.is_element() {
                return Err(self.at(c, format!("<{}> takes a value, not elements", tag(n))));
            }
            let (t, o) = if c.is_text() {
                self.trimmed(c)
            } else {
                ("", 0)
            };
            if !t.is_empty() {
                off.get_or_insert(o);
                text.push_str(t);
            }
        }
        Ok((text, off.unwrap_or(n.range().start)))
    }

    /// A 32-bit decimal integer; `LENGTH_UNLIMITED` is -1 where `unlimited`.
    fn int(&self, n: Node<'a, 'i>, unlimited: bool) -> Result<i32> {
        let (t, off) = self.value(n)?;
        if unlimited && t == "LENGTH_UNLIMITED" {
            return Ok(-1);
        }
        t.parse::<i32>().map_err(|e| {
            use std::num::IntErrorKind::{NegOverflow, PosOverflow};
            let why = match e.kind() {
                PosOverflow | NegOverflow => "out of range for a 32-bit integer",
                _ if unlimited => "expected a decimal integer or LENGTH_UNLIMITED",
                _ => "expected a decimal integer",
            };
            self.err(off, format!("bad number \"{t}\" in <{}>: {why}", tag(n)))
        })
    }

    /// `true`, `false`, `1` or `0`.
    fn boolean(&self, n: Node<'a, 'i>) -> Result<bool> {
        let (t, off) = self.value(n)?;
        match t.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => {
                let message = format!(
                    "bad boolean \"{t}\" in <{}>; expected true, false, 1 or 0",
                    tag(n)
                );
                Err(self.err(off, message))
            }
        }
    }

    /// One of `options` (the IDL enumerator names).
    fn enumerated<V: Copy>(&self, n: Node<'a, 'i>, options: &[(&str, V)]) -> Result<V> {
        let (t, off) = self.value(n)?;
        if let Some((_, v)) = options.iter().find(|(s, _)| *s == t) {
            return Ok(*v);
        }
        let parent = n.parent_element().map_or("", tag);
        let names: Vec<&str> = options.iter().map(|(s, _)| *s).collect();
        let message = format!(
            "unknown <{parent}> {} \"{t}\"; expected {}",
            tag(n),
            one_of(&names)
        );
        Err(self.err(off, message))
    }

    /// The value of policy `el`'s only field `name` (`<kind>` ...), read by `read`, if given.
    fn only<V>(
        &self,
        el: Node<'a, 'i>,
        name: &'static str,
        read: impl Fn(Node<'a, 'i>) -> Result<V>,
    ) -> Result<Option<V>> {
        self.fields(el, &[name])?
            .into_iter()
            .next()
            .map(|(_, n)| read(n))
            .transpose()
    }

    /// A Duration_t: `<sec>` and/or `<nanosec>` (numbers, `DURATION_INFINITE_SEC` /
    /// `DURATION_INFINITE_NSEC`, `DURATION_ZERO_SEC` / `DURATION_ZERO_NSEC`, or
    /// `DURATION_INFINITY` in either), or `DURATION_INFINITY` as the element's whole value.
    fn duration(&self, n: Node<'a, 'i>) -> Result<DdsDuration> {
        self.no_attributes(n)?;
        if !n.children().any(|c| c.is_element()) {
            let (t, off) = self.value(n)?;
            return match t.as_str() {
                "DURATION_INFINITY" | "DURATION_INFINITE" => Ok(DdsDuration::INFINITE),
                "DURATION_ZERO" => Ok(DdsDuration::ZERO),
                _ => {
                    let message = format!(
                        "<{}> needs <sec> and/or <nanosec>, or DURATION_INFINITY",
                        tag(n)
                    );
                    Err(self.err(off, message))
                }
            };
        }
        let (mut infinite, mut nanos) = (false, 0i64);
        for (f, c) in self.fields(n, &["sec", "nanosec"])? {
            let (t, off) = self.value(c)?;
            let unit = if f == "sec" { "SEC" } else { "NSEC" };
            if t == "DURATION_INFINITY" || t == format!("DURATION_INFINITE_{unit}") {
                infinite = true;
                continue;
            }
            let v = match t.parse::<i64>() {
                _ if t == format!("DURATION_ZERO_{unit}") => 0,
                Ok(v) => v,
                Err(_) => {
                    let message = format!("bad number \"{t}\" in <{f}>: expected a decimal integer or DURATION_INFINITE_{unit}");
                    return Err(self.err(off, message));
                }
            };
            // 0x7fffffff is DURATION_INFINITE_SEC and DURATION_INFINITE_NSEC written as numbers.
            let (limit, scale) = if f == "sec" {
                (0x7fff_ffff, 1_000_000_000)
            } else {
                (1_000_000_000, 1)
            };
            if v == 0x7fff_ffff {
                infinite = true;
            } else if !(0..limit).contains(&v) {
                return Err(self.err(off, format!("<{f}> {v} is out of range 0..{}", limit - 1)));
            }
            nanos += v * scale;
        }
        Ok(if infinite {
            DdsDuration::INFINITE
        } else {
            DdsDuration::from_nanos(nanos)
        })
    }

    /// An octet sequence: `<value>` in base64 (DDS-XML), or Connext's comma-separated bytes
    /// (decimal or `0x` hex) when it contains a comma or is one such byte.
    fn octets(&self, n: Node<'a, 'i>) -> Result<Vec<u8>> {
        let v = self.only(n, "value", |v| {
            let (t, off) = self.value(v)?;
            decode_octets(&t).map_err(|why| self.err(off, format!("bad <{}> value: {why}", tag(n))))
        })?;
        Ok(v.unwrap_or_default())
    }

    /// The `<element>` children of sequence element `n`.
    fn sequence(&self, n: Node<'a, 'i>) -> Result<Vec<Node<'a, 'i>>> {
        self.no_attributes(n)?;
        let elements = self.elements(n)?;
        if let Some(e) = elements.iter().find(|e| tag(**e) != "element") {
            let message = format!(
                "unknown element <{}> in <{}>; expected <element>",
                tag(*e),
                tag(n)
            );
            return Err(self.at(*e, message));
        }
        Ok(elements)
    }

    /// The error for policy element `el` not allowed in `entity`'s QoS element `parent`.
    fn not_a_policy(&self, el: Node, parent: Node, entity: Entity) -> Error {
        let (name, expected) = (tag(el), one_of(&entity.policies()));
        let known = [TOPIC, WRITER, READER, GROUP, PARTICIPANT];
        let message = if UNSUPPORTED.split(' ').any(|u| u == name) {
            format!("<{name}> is not supported by Halyard (it has no such setting)")
        } else if known
            .iter()
            .any(|l| l.split_whitespace().any(|p| p == name))
        {
            format!(
                "<{name}> is not a policy of <{}>; it takes {expected}",
                tag(parent)
            )
        } else {
            format!(
                "unknown element <{name}> in <{}>; expected {expected}",
                tag(parent)
            )
        };
        self.at(el, message)
    }

    /// KEEP_LAST / KEEP_ALL and depth, each optional: what is not given stays as it was.
    fn history(
        &self,
        f: &[(&'static str, Node<'a, 'i>)],
        kind: &str,
        depth: &str,
    ) -> Result<impl Fn(History) -> History> {
        let get = |name: &str| f.iter().find(|(n, _)| *n == name).map(|(_, n)| *n);
        let keep_all = get(kind).map(|k| self.enumerated(k, HISTORY)).transpose()?;
        let depth = get(depth).map(|d| self.int(d, false)).transpose()?;
        Ok(
            move |cur: History| match keep_all.unwrap_or(cur == History::KeepAll) {
                true => History::KeepAll,
                false => History::KeepLast(depth.unwrap_or(match cur {
                    History::KeepLast(d) => d,
                    History::KeepAll => 1,
                })),
            },
        )
    }
}

/// Decodes an octet sequence value (see [`Cx::octets`]).
pub(super) fn decode_octets(t: &str) -> std::result::Result<Vec<u8>, String> {
    fn byte(s: &str) -> Option<u8> {
        let s = s.trim();
        match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(h) => u8::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    }
    if t.contains(',') || (!t.is_empty() && byte(t).is_some()) {
        let bad = |b: &str| format!("\"{}\" is not a byte (0..255 or 0x00..0xff)", b.trim());
        return t
            .split(',')
            .map(|b| byte(b).ok_or_else(|| bad(b)))
            .collect();
    }
    let s: Vec<u8> = t.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if s.len() & 3 != 0 {
        return Err("neither base64 (length not a multiple of 4) nor comma-separated bytes".into());
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for (i, chunk) in s.chunks(4).enumerate() {
        let (mut acc, mut pad) = (0u32, 0usize);
        for &c in chunk {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if (i + 1) * 4 == s.len() => {
                    pad += 1;
                    0
                }
                _ => return Err(format!("'{}' is not a base64 character here", c as char)),
            };
            if pad > 0 && c != b'=' || pad > 2 {
                return Err("misplaced base64 padding".into());
            }
            acc = acc << 6 | u32::from(v);
        }
        out.extend_from_slice(&acc.to_be_bytes()[1..4 - pad]);
    }
    Ok(out)
}

fn ep<F: Fn(&mut EndpointQos) + Send + Sync + 'static>(f: F) -> Setter<EndpointQos> {
    set(f)
}

fn limit(l: &mut ResourceLimits, i: usize) -> &mut i32 {
    match i {
        0 => &mut l.max_samples,
        1 => &mut l.max_instances,
        _ => &mut l.max_samples_per_instance,
    }
}

/// Reads policy element `el` of a `<datawriter_qos>`, `<datareader_qos>` or `<topic_qos>`.
pub(super) fn endpoint_policy<'a, 'i>(
    cx: &Cx<'a, 'i>,
    el: Node<'a, 'i>,
    parent: Node<'a, 'i>,
    entity: Entity,
    out: &mut Vec<Setter<EndpointQos>>,
) -> Result<()> {
    let name = tag(el);
    if !entity.policies().contains(&name) {
        return Err(cx.not_a_policy(el, parent, entity));
    }
    let duration = |n| cx.duration(n);
    let int = |n| cx.int(n, false);
    match name {
        "durability" => {
            if let Some(v) = cx.only(el, "kind", |n| cx.enumerated(n, DURABILITY))? {
                out.push(ep(move |q| q.durability = v));
            }
        }
        "destination_order" => {
            if let Some(v) = cx.only(el, "kind", |n| cx.enumerated(n, ORDER))? {
                out.push(ep(move |q| q.destination_order = v));
            }
        }
        "ownership" => {
            if let Some(v) = cx.only(el, "kind", |n| cx.enumerated(n, OWNERSHIP))? {
                out.push(ep(move |q| q.ownership = v));
            }
        }
        "deadline" => {
            if let Some(d) = cx.only(el, "period", duration)? {
                out.push(ep(move |q| q.deadline = d));
            }
        }
        "latency_budget" => {
            if let Some(d) = cx.only(el, "duration", duration)? {
                out.push(ep(move |q| q.latency_budget = d));
            }
        }
        "lifespan" => {
            if let Some(d) = cx.only(el, "duration", duration)? {
                out.push(ep(move |q| q.lifespan = d));
            }
        }
        "time_based_filter" => {
            if let Some(d) = cx.only(el, "minimum_separation", duration)? {
                out.push(ep(move |q| q.time_based_filter = d));
            }
        }
        "transport_priority" => {
            if let Some(v) = cx.only(el, "value", int)? {
                out.push(ep(move |q| q.transport_priority = v));
            }
        }
        "ownership_strength" => {
            if let Some(v) = cx.only(el, "value", int)? {
                out.push(ep(move |q| q.ownership_strength = v));
            }
        }
        "user_data" => {
            let v = cx.octets(el)?;
            out.push(ep(move |q| q.user_data = v.clone()));
        }
        "topic_data" => {
            let v = cx.octets(el)?;
            out.push(ep(move |q| q.topic_data = v.clone()));
        }
        "writer_data_lifecycle" => {
            if let Some(v) = cx.only(el, "autodispose_unregistered_instances", |n| cx.boolean(n))? {
                out.push(ep(move |q| {
                    q.writer_data_lifecycle.autodispose_unregistered_instances = v
                }));
            }
        }
        "reader_data_lifecycle" => {
            let fields = [
                "autopurge_nowriter_samples_delay",
                "autopurge_disposed_samples_delay",
            ];
            for (f, n) in cx.fields(el, &fields)? {
                let d = cx.duration(n)?;
                out.push(if f == fields[0] {
                    ep(move |q| q.reader_data_lifecycle.autopurge_nowriter_samples_delay = d)
                } else {
                    ep(move |q| q.reader_data_lifecycle.autopurge_disposed_samples_delay = d)
                });
            }
        }
        "reliability" => {
            for (f, n) in cx.fields(el, &["kind", "max_blocking_time"])? {
                if f == "kind" {
                    let v = cx.enumerated(n, RELIABILITY)?;
                    out.push(ep(move |q| q.reliability.kind = v));
                } else {
                    let d = cx.duration(n)?;
                    out.push(ep(move |q| q.reliability.max_blocking_time = d));
                }
            }
        }
        "liveliness" => {
            for (f, n) in cx.fields(el, &["kind", "lease_duration"])? {
                if f == "kind" {
                    let v = cx.enumerated(n, LIVELINESS)?;
                    out.push(ep(move |q| q.liveliness.kind = v));
                } else {
                    let d = cx.duration(n)?;
                    out.push(ep(move |q| q.liveliness.lease_duration = d));
                }
            }
        }
        "history" => {
            let h = cx.history(&cx.fields(el, &["kind", "depth"])?, "kind", "depth")?;
            out.push(ep(move |q| q.history = h(q.history)));
        }
        "resource_limits" => {
            for (l, n) in cx.fields(el, &LIMITS)? {
                let (i, v) = (
                    LIMITS.iter().position(|x| *x == l).unwrap_or(0),
                    cx.int(n, true)?,
                );
                out.push(ep(move |q| *limit(&mut q.resource_limits, i) = v));
            }
        }
        "durability_service" => {
            let names = ["service_cleanup_delay", "history_kind", "history_depth"];
            let f = cx.fields(
                el,
                &[
                    names[0], names[1], names[2], LIMITS[0], LIMITS[1], LIMITS[2],
                ],
            )?;
            let h = cx.history(&f, names[1], names[2])?;
            if f.iter().any(|(n, _)| n.starts_with("history")) {
                out.push(ep(move |q| {
                    q.durability_service.history = h(q.durability_service.history)
                }));
            }
            for (field, n) in f {
                if field == names[0] {
                    let d = cx.duration(n)?;
                    out.push(ep(move |q| q.durability_service.service_cleanup_delay = d));
                } else if let Some(i) = LIMITS.iter().position(|x| *x == field) {
                    let v = cx.int(n, true)?;
                    out.push(ep(move |q| *limit(&mut q.durability_service.limits, i) = v));
                }
            }
        }
        _ => {
            // representation / data_representation: <value> (DDS-XML, Connext) or <id> (Cyclone).
            for (_, seq) in cx.fields(el, &["value", "id"])? {
                let mut ids = Vec::new();
                for e in cx.sequence(seq)? {
                    if cx.value(e)?.0.starts_with("XML") {
                        return Err(
                            cx.at(e, "the XML data representation is not supported by Halyard")
                        );
                    }
                    ids.push(cx.enumerated(e, REPRESENTATION)?);
                }
                out.push(ep(move |q| q.data_representation = ids.clone()));
            }
        }
    }
    Ok(())
}

/// ENTITY_FACTORY: Halyard enables entities when it creates them, so only `true` is accepted.
/// `<entity_factory>`: its autoenable_created_entities (true when absent).
fn entity_factory<'a, 'i>(cx: &Cx<'a, 'i>, el: Node<'a, 'i>) -> Result<(Node<'a, 'i>, bool)> {
    Ok(cx
        .only(el, "autoenable_created_entities", |n| {
            Ok((n, cx.boolean(n)?))
        })?
        .unwrap_or((el, true)))
}

/// Reads policy element `el` of a `<publisher_qos>` or `<subscriber_qos>`.
pub(super) fn group_policy<'a, 'i>(
    cx: &Cx<'a, 'i>,
    el: Node<'a, 'i>,
    parent: Node<'a, 'i>,
    entity: Entity,
    out: &mut Vec<Setter<GroupQos>>,
) -> Result<()> {
    match tag(el) {
        "partition" => {
            let strings = |n| {
                cx.sequence(n)?
                    .into_iter()
                    .map(|e| Ok(cx.value(e)?.0))
                    .collect()
            };
            let names: Option<Vec<String>> = cx.only(el, "name", strings)?;
            if let Some(names) = names {
                out.push(set(move |g: &mut GroupQos| g.partition = names.clone()));
            }
        }
        "group_data" => {
            let v = cx.octets(el)?;
            out.push(set(move |g: &mut GroupQos| g.group_data = v.clone()));
        }
        "entity_factory" => {
            let (_, autoenable) = entity_factory(cx, el)?;
            out.push(set(move |g: &mut GroupQos| {
                g.entity_factory.autoenable_created_entities = autoenable
            }));
        }
        "presentation" => {
            // GROUP scope with coherent or ordered access is refused when an endpoint is
            // created with it (not implemented), like any QoS Halyard lacks.
            let mut p = Presentation::default();
            for (f, n) in cx.fields(el, &["access_scope", "coherent_access", "ordered_access"])? {
                match f {
                    "access_scope" => p.access_scope = cx.enumerated(n, SCOPE)?,
                    "coherent_access" => p.coherent_access = cx.boolean(n)?,
                    _ => p.ordered_access = cx.boolean(n)?,
                }
            }
            out.push(set(move |g: &mut GroupQos| g.presentation = p));
        }
        _ => return Err(cx.not_a_policy(el, parent, entity)),
    }
    Ok(())
}

/// Reads policy element `el` of a `<domain_participant_qos>`.
pub(super) fn participant_policy<'a, 'i>(
    cx: &Cx<'a, 'i>,
    el: Node<'a, 'i>,
    parent: Node<'a, 'i>,
    out: &mut Vec<Setter<ParticipantOptions>>,
) -> Result<()> {
    match tag(el) {
        "user_data" => {
            let v = cx.octets(el)?;
            out.push(set(move |o: &mut ParticipantOptions| {
                o.user_data = v.clone()
            }));
        }
        "entity_factory" => {
            // Publishers and subscribers have nothing to enable in Halyard: they announce
            // nothing themselves (their endpoints do, under their own ENTITY_FACTORY).
            if let (n, false) = entity_factory(cx, el)? {
                let message = "a participant's autoenable_created_entities false is not supported: publishers and subscribers are always enabled (set it on <publisher_qos> or <subscriber_qos> to create disabled writers or readers)";
                return Err(cx.at(n, message));
            }
        }
        _ => return Err(cx.not_a_policy(el, parent, Entity::Participant)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::decode_octets;

    #[test]
    fn octets_are_base64_or_connext_byte_lists() {
        assert_eq!(decode_octets("").unwrap(), Vec::<u8>::new());
        assert_eq!(decode_octets("aGFseWFyZA==").unwrap(), b"halyard");
        assert_eq!(decode_octets("aGFs eWFy\nZA==").unwrap(), b"halyard");
        assert_eq!(decode_octets("aGFseQ==").unwrap(), b"haly");
        assert_eq!(decode_octets("aGFseWE=").unwrap(), b"halya");
        assert_eq!(decode_octets("AAEC").unwrap(), [0, 1, 2]);
        assert_eq!(decode_octets("1, 0x2f,255").unwrap(), [1, 0x2f, 255]);
        assert_eq!(decode_octets("7").unwrap(), [7]);
        assert_eq!(decode_octets("0x44").unwrap(), [0x44]);
        for bad in ["1,256", "1,,2", "abc", "ab=c", "a===", "ab!c", "ab==AAAA"] {
            assert!(decode_octets(bad).is_err(), "{bad}");
        }
    }
}
