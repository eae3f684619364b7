//! `halyard ls`: joins a domain, listens to discovery for a while and lists the participants,
//! their topics and their writers and readers with QoS, grouped like `cyclonedds ls`
//! (participant, then topic, then endpoints), then a summary of the topics. `--json` prints
//! the same as one JSON document whose fields the help text documents (and a test checks).

use crate::discovery::{self, guid, seconds, vendor_name, Args, Peer, Snapshot};
use crate::json::Json;
use halyard_wire::discovery::EndpointData;
use halyard_wire::qos::{
    DestinationOrderKind, DurabilityKind, EndpointQos, History, LivelinessKind, OwnershipKind,
    PresentationAccessScope, ReliabilityKind,
};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long `ls` listens by default.
const DEFAULT_DURATION: Duration = Duration::from_secs(3);

const HELP: &str = "usage: halyard ls [-d DOMAIN] [-r SECONDS] [-t PATTERN] [-q] [--json] [--watch]

Joins DOMAIN, listens to discovery for SECONDS and lists the participants found, each with its
topics and their writers and readers, then the topics.
  -d, --domain DOMAIN     the DDS domain id, 0..=232 (default 0; also -i, --id, --domain-id)
  -r, --duration SECONDS  how long to listen (default 3; also 500ms, 1m)
  -t, --topic PATTERN     only topics whose name matches (wildcards * and ?)
  -q, --qos   every QoS policy of each endpoint (default: reliability, durability, history,
              ownership and partitions)
  --watch     print again every SECONDS until interrupted (with --json: one document a line)
  --json      one JSON document:
    domain_id, duration_s
    participants[]: guid (as a UUID, like cyclonedds), name (ENTITY_NAME or null), vendor,
      vendor_id (hex), host, pid, process (from the __Hostname, __Pid and __ProcessName
      properties, or null), addresses[], lease_duration_s,
      topics[]: name, type_names[], writers[], readers[] (endpoints)
    topics[]: name, type_names[], writers, readers (counts)
    endpoint: guid, name, kind (\"writer\"|\"reader\"), topic, type_name, partitions[],
      reliability {kind: \"reliable\"|\"best_effort\", max_blocking_time_s},
      durability (\"volatile\"|\"transient_local\"|\"transient\"|\"persistent\"),
      history {kind: \"keep_last\"|\"keep_all\", depth}, ownership {kind: \"shared\"|\"exclusive\",
      strength}, deadline_s, latency_budget_s, lifespan_s, time_based_filter_s,
      liveliness {kind: \"automatic\"|\"manual_by_participant\"|\"manual_by_topic\", lease_duration_s},
      destination_order (\"by_reception_timestamp\"|\"by_source_timestamp\"),
      presentation {access_scope: \"instance\"|\"topic\"|\"group\", coherent_access, ordered_access},
      resource_limits {max_samples, max_instances, max_samples_per_instance} (-1: unlimited),
      data_representation[] (\"XCDR1\"|\"XCDR2\"|number; none announced: [\"XCDR1\"]),
      content_filter (expression or null)
    durations are seconds; null means infinite.

Exit status: 0, 1 if the domain cannot be joined, 2 for bad arguments.";

/// Runs `halyard ls`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{HELP}");
        return 0;
    }
    let a = match discovery::parse_args(args, true, DEFAULT_DURATION) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("halyard ls: {}\n\n{HELP}", e.0);
            return 2;
        }
    };
    let dp = match discovery::join(a.domain, "halyard ls") {
        Ok(dp) => dp,
        Err(e) => {
            eprintln!("halyard ls: cannot join domain {}: {e}", a.domain);
            return 1;
        }
    };
    loop {
        std::thread::sleep(a.duration);
        let snap = Snapshot::take(&dp, a.topic.as_deref());
        if a.json {
            let doc = document(&a, &snap);
            println!("{}", if a.watch { doc.compact() } else { doc.pretty() });
        } else {
            print!("{}", text(&a, &snap));
            if a.watch {
                println!("----");
            }
        }
        if !a.watch {
            return 0;
        }
    }
}

/// Topic name → (type names, writers, readers) over all participants.
fn topics(snap: &Snapshot) -> BTreeMap<&str, (Vec<&str>, usize, usize)> {
    let mut t: BTreeMap<&str, (Vec<&str>, usize, usize)> = BTreeMap::new();
    for p in &snap.peers {
        for (e, w) in p
            .writers
            .iter()
            .map(|e| (e, true))
            .chain(p.readers.iter().map(|e| (e, false)))
        {
            let entry = t.entry(e.topic_name.as_str()).or_default();
            if !entry.0.contains(&e.type_name.as_str()) {
                entry.0.push(e.type_name.as_str());
            }
            if w {
                entry.1 += 1;
            } else {
                entry.2 += 1;
            }
        }
    }
    t
}

/// The JSON document of a snapshot.
fn document(a: &Args, snap: &Snapshot) -> Json {
    let summary = topics(snap)
        .into_iter()
        .map(|(name, (types, w, r))| {
            Json::Obj(vec![
                ("name", Json::str(name)),
                ("type_names", Json::strs(&types)),
                ("writers", Json::Int(w as i64)),
                ("readers", Json::Int(r as i64)),
            ])
        })
        .collect();
    Json::Obj(vec![
        ("domain_id", Json::Int(a.domain.into())),
        ("duration_s", Json::Num(a.duration.as_secs_f64())),
        (
            "participants",
            Json::Arr(snap.peers.iter().map(participant_json).collect()),
        ),
        ("topics", Json::Arr(summary)),
    ])
}

fn participant_json(p: &Peer) -> Json {
    let topics = p
        .topics()
        .into_iter()
        .map(|t| {
            let of = |list: &[EndpointData], kind| {
                Json::Arr(
                    list.iter()
                        .filter(|e| e.topic_name == t)
                        .map(|e| endpoint_json(e, kind))
                        .collect(),
                )
            };
            let mut types: Vec<&str> = p
                .writers
                .iter()
                .chain(&p.readers)
                .filter(|e| e.topic_name == t)
                .map(|e| e.type_name.as_str())
                .collect();
            types.dedup();
            Json::Obj(vec![
                ("name", Json::str(t)),
                ("type_names", Json::strs(&types)),
                ("writers", of(&p.writers, "writer")),
                ("readers", of(&p.readers, "reader")),
            ])
        })
        .collect();
    Json::Obj(vec![
        ("guid", Json::str(guid(p.guid()))),
        ("name", Json::opt_str(p.name())),
        ("vendor", Json::opt_str(p.vendor().map(vendor_name))),
        (
            "vendor_id",
            Json::opt_str(p.vendor().map(|v| format!("{:02x}{:02x}", v.0[0], v.0[1]))),
        ),
        ("host", Json::opt_str(p.host())),
        ("pid", p.pid().map_or(Json::Null, |n| Json::Int(n as i64))),
        ("process", Json::opt_str(p.process())),
        ("addresses", Json::strs(&p.addresses())),
        (
            "lease_duration_s",
            p.data
                .as_ref()
                .and_then(|d| seconds(d.lease_duration))
                .map_or(Json::Null, Json::Num),
        ),
        ("topics", Json::Arr(topics)),
    ])
}

fn secs_json(d: halyard_wire::Duration) -> Json {
    seconds(d).map_or(Json::Null, Json::Num)
}

fn reliability(k: ReliabilityKind) -> &'static str {
    match k {
        ReliabilityKind::Reliable => "reliable",
        ReliabilityKind::BestEffort => "best_effort",
    }
}

fn durability(k: DurabilityKind) -> &'static str {
    match k {
        DurabilityKind::Volatile => "volatile",
        DurabilityKind::TransientLocal => "transient_local",
        DurabilityKind::Transient => "transient",
        DurabilityKind::Persistent => "persistent",
    }
}

fn ownership(k: OwnershipKind) -> &'static str {
    match k {
        OwnershipKind::Shared => "shared",
        OwnershipKind::Exclusive => "exclusive",
    }
}

fn liveliness(k: LivelinessKind) -> &'static str {
    match k {
        LivelinessKind::Automatic => "automatic",
        LivelinessKind::ManualByParticipant => "manual_by_participant",
        LivelinessKind::ManualByTopic => "manual_by_topic",
    }
}

fn destination_order(k: DestinationOrderKind) -> &'static str {
    match k {
        DestinationOrderKind::ByReceptionTimestamp => "by_reception_timestamp",
        DestinationOrderKind::BySourceTimestamp => "by_source_timestamp",
    }
}

fn access_scope(s: PresentationAccessScope) -> Json {
    match s {
        PresentationAccessScope::Instance => Json::str("instance"),
        PresentationAccessScope::Topic => Json::str("topic"),
        PresentationAccessScope::Group => Json::str("group"),
    }
}

fn representation(r: i16) -> Json {
    match r {
        0 => Json::str("XCDR1"),
        1 => Json::str("XML"),
        2 => Json::str("XCDR2"),
        n => Json::Int(n.into()),
    }
}

/// The data representations of an endpoint: those announced, or XCDR1 when none was
/// (XTypes 1.3 §7.6.3.1.1: an absent or empty DATA_REPRESENTATION means XCDR1).
fn representations(q: &EndpointQos) -> Vec<i16> {
    if q.data_representation.is_empty() {
        vec![0]
    } else {
        q.data_representation.clone()
    }
}

fn history_json(h: History) -> Json {
    match h {
        History::KeepLast(depth) => Json::Obj(vec![
            ("kind", Json::str("keep_last")),
            ("depth", Json::Int(depth.into())),
        ]),
        History::KeepAll => Json::Obj(vec![("kind", Json::str("keep_all")), ("depth", Json::Null)]),
    }
}

fn endpoint_json(e: &EndpointData, kind: &str) -> Json {
    let q: &EndpointQos = &e.qos;
    Json::Obj(vec![
        ("guid", Json::str(guid(e.guid))),
        ("name", Json::opt_str(e.entity_name.as_deref())),
        ("kind", Json::str(kind)),
        ("topic", Json::str(&e.topic_name)),
        ("type_name", Json::str(&e.type_name)),
        ("partitions", Json::strs(&q.partition)),
        (
            "reliability",
            Json::Obj(vec![
                ("kind", Json::str(reliability(q.reliability.kind))),
                (
                    "max_blocking_time_s",
                    secs_json(q.reliability.max_blocking_time),
                ),
            ]),
        ),
        ("durability", Json::str(durability(q.durability))),
        ("history", history_json(q.history)),
        (
            "ownership",
            Json::Obj(vec![
                ("kind", Json::str(ownership(q.ownership))),
                ("strength", Json::Int(q.ownership_strength.into())),
            ]),
        ),
        ("deadline_s", secs_json(q.deadline)),
        ("latency_budget_s", secs_json(q.latency_budget)),
        ("lifespan_s", secs_json(q.lifespan)),
        ("time_based_filter_s", secs_json(q.time_based_filter)),
        (
            "liveliness",
            Json::Obj(vec![
                ("kind", Json::str(liveliness(q.liveliness.kind))),
                ("lease_duration_s", secs_json(q.liveliness.lease_duration)),
            ]),
        ),
        (
            "destination_order",
            Json::str(destination_order(q.destination_order)),
        ),
        (
            "presentation",
            Json::Obj(vec![
                ("access_scope", access_scope(q.presentation.access_scope)),
                (
                    "coherent_access",
                    Json::Bool(q.presentation.coherent_access),
                ),
                ("ordered_access", Json::Bool(q.presentation.ordered_access)),
            ]),
        ),
        (
            "resource_limits",
            Json::Obj(vec![
                (
                    "max_samples",
                    Json::Int(q.resource_limits.max_samples.into()),
                ),
                (
                    "max_instances",
                    Json::Int(q.resource_limits.max_instances.into()),
                ),
                (
                    "max_samples_per_instance",
                    Json::Int(q.resource_limits.max_samples_per_instance.into()),
                ),
            ]),
        ),
        (
            "data_representation",
            Json::Arr(representations(q).into_iter().map(representation).collect()),
        ),
        (
            "content_filter",
            Json::opt_str(
                e.content_filter
                    .as_ref()
                    .map(|f| f.filter_expression.clone()),
            ),
        ),
    ])
}

/// A duration for people: `inf` or seconds.
fn secs_text(d: halyard_wire::Duration) -> String {
    seconds(d).map_or_else(|| "inf".to_string(), |s| format!("{s}s"))
}

/// One endpoint's line (and with `-q`, a second line of the other policies).
fn endpoint_text(out: &mut String, e: &EndpointData, kind: &str, all_qos: bool) {
    let q = &e.qos;
    let history = match q.history {
        History::KeepLast(d) => format!("keep_last {d}"),
        History::KeepAll => "keep_all".into(),
    };
    let name = e
        .entity_name
        .as_deref()
        .map_or(String::new(), |n| format!(" \"{n}\""));
    let partitions = if q.partition.is_empty() {
        String::new()
    } else {
        format!(", partitions [{}]", q.partition.join(", "))
    };
    out.push_str(&format!(
        "    {kind} {}{name}: {}, {}, {history}, {}{partitions}\n",
        guid(e.guid),
        reliability(q.reliability.kind),
        durability(q.durability),
        ownership(q.ownership),
    ));
    if all_qos {
        let reps: Vec<String> = representations(q)
            .into_iter()
            .map(|r| representation(r).compact().trim_matches('"').to_string())
            .collect();
        out.push_str(&format!(
            "      deadline {}, latency_budget {}, lifespan {}, liveliness {} {}, {}, ownership_strength {}, presentation {} coherent={} ordered={}, data_representation [{}]\n",
            secs_text(q.deadline),
            secs_text(q.latency_budget),
            secs_text(q.lifespan),
            liveliness(q.liveliness.kind),
            secs_text(q.liveliness.lease_duration),
            destination_order(q.destination_order),
            q.ownership_strength,
            access_scope(q.presentation.access_scope).compact().trim_matches('"'),
            q.presentation.coherent_access,
            q.presentation.ordered_access,
            reps.join(", "),
        ));
    }
}

/// The text listing of a snapshot.
fn text(a: &Args, snap: &Snapshot) -> String {
    let mut out = String::new();
    if snap.peers.is_empty() {
        out.push_str(&format!(
            "no participant found in domain {} within {:?}\n",
            a.domain, a.duration
        ));
        return out;
    }
    for p in &snap.peers {
        let name = p.name().map_or(String::new(), |n| format!(" \"{n}\""));
        let vendor = p.vendor().map_or("unknown vendor".into(), vendor_name);
        let place = match (p.host(), p.process(), p.pid()) {
            (None, None, None) => String::new(),
            (h, pr, pid) => format!(
                ", {} {}[{}]",
                h.unwrap_or("?"),
                pr.unwrap_or("?"),
                pid.map_or("?".into(), |n| n.to_string())
            ),
        };
        out.push_str(&format!(
            "Participant {}{name} ({vendor}{place})\n",
            guid(p.guid())
        ));
        for t in p.topics() {
            let types: Vec<&str> = p
                .writers
                .iter()
                .chain(&p.readers)
                .filter(|e| e.topic_name == t)
                .map(|e| e.type_name.as_str())
                .collect();
            out.push_str(&format!(
                "  Topic {t} (type {})\n",
                types.first().unwrap_or(&"?")
            ));
            for e in p.writers.iter().filter(|e| e.topic_name == t) {
                endpoint_text(&mut out, e, "writer", a.qos);
            }
            for e in p.readers.iter().filter(|e| e.topic_name == t) {
                endpoint_text(&mut out, e, "reader", a.qos);
            }
        }
        out.push('\n');
    }
    out.push_str("Topics\n");
    for (name, (types, w, r)) in topics(snap) {
        out.push_str(&format!(
            "  {name} (type {}): {w} writer(s), {r} reader(s)\n",
            types.join(" | ")
        ));
    }
    out
}
