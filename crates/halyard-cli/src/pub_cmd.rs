//! `halyard pub TOPIC JSON...`: writes samples given as JSON to a topic whose type Halyard
//! learns at run time (a reader's or writer's TypeInformation and TypeLookup, or `--idl`).
//!
//! Every JSON value is converted and encoded before anything is written, so a mistake (not
//! JSON, a member missing or of the wrong kind, a string past its bound) exits 2 naming the
//! member path and nothing is sent. The writer is reliable. Before writing it waits (bounded
//! by `--timeout`) until it matched a reader in every participant that had a reader of the
//! topic when it looked; after writing, for their acknowledgments. Its closing line says what
//! its delivery report ([`halyard::DataWriter::delivery_report`]) knows: the readers that
//! acknowledged everything (one that left with everything counts), those that did not, and
//! the best-effort ones, whose delivery cannot be known. Its durability is the strongest the
//! discovered readers ask (so that every one matches), its partitions theirs. Samples are
//! XCDR2 unless `--xcdr1` or a discovered reader does not accept XCDR2.

use crate::discovery::{option_value, BadArgs};
use crate::dyntopic::{self, Common, Failure, Resolved, Seen};
use halyard::cdr::{DataRepresentation, Endianness};
use halyard::xtypes::dynamic::{self, JsonOptions};
use halyard::{
    DataWriterQos, PublisherQos, QosPolicyId, ReaderDelivery, Reception, UntypedDataWriter,
};
use halyard_core::matching::{pairing, Pairing, Side, XCDR1, XCDR2};
use halyard_wire::qos::{DurabilityKind, EndpointQos, ReliabilityKind};
use halyard_wire::GuidPrefix;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// How long a participant whose readers all request what the writer does not offer gets to
/// add a reader that fits (`halyard sub` adds one for each writer it discovers).
const ADAPT_GRACE: Duration = Duration::from_secs(2);

/// How long a reader that left short of everything gets for its last ACKNACK to arrive.
const DEPARTED_GRACE: Duration = Duration::from_secs(1);

/// Largest `--json-file` read.
const MAX_FILE: u64 = 64 << 20;

const HELP: &str =
    "usage: halyard pub TOPIC JSON... [-d DOMAIN] [-p|--partition P]... [--reliable|--best-effort]
       [--durability volatile|transient-local|transient|persistent] [--history keep-all|N]
       [--rate HZ] [--repeat N] [--json-file FILE|-] [--xcdr1] [--timeout S]
       [--idl FILE [-I DIR]... [--type NAME]] [--json]

Publishes each JSON value (arguments, then --json-file: a JSON array of samples or one JSON value
a line; - is stdin) as a sample of TOPIC. The type comes from the network (the TypeInformation a
reader or writer of TOPIC announces, TypeObjects through TypeLookup) or from --idl FILE. JSON form:
struct members by name (all non-optional members required; optional ones may be null or left
out), enums by enumerator name, sequences and arrays as lists, unions {\"discriminator\": d,
\"case\": v}.
  -d, --domain DOMAIN  the DDS domain id, 0..=232 (default 0; also -i, --id, --domain-id)
  --rate HZ    samples a second (default: as fast as matching allows)
  --repeat N   publish the list N times (default 1)
  --timeout S  how long to look for the type, the readers' matching and their acknowledgments
               (default 10)
  --json       print one JSON line a sample written ({\"written\": SAMPLE}) instead of a count
QoS: reliable; the durability and partitions the discovered readers ask; KEEP_ALL history.

Before writing, pub waits (within --timeout) until it matched a reader in every participant that
had a reader of TOPIC when it looked (a participant whose readers all ask what this writer does
not offer gets 2 s to add one that fits, as halyard sub does, then is named on stderr); after
writing, until every reliable reader acknowledged everything. The closing line says what is
known, e.g. `published 5 samples of T to TOPIC: 1 reader acknowledged everything; 1 best-effort
reader (delivery unknown)`: a reliable reader that took what it wanted and left counts; one that
did not acknowledge everything is named on stderr; what a best-effort reader received cannot be
known. With --json the closing line goes to stderr.

Exit status: 0, 1 if the topic's type cannot be found or a write fails, 2 for bad arguments or a
sample that does not fit the type (the message names the member).";

/// Options of `pub`.
#[derive(Debug)]
struct Args {
    common: Common,
    samples: Vec<String>,
    rate: Option<f64>,
    repeat: u64,
    file: Option<PathBuf>,
    xcdr1: bool,
    /// TRANSIENT and PERSISTENT writers' options.
    durable: crate::pub_durable::DurableArgs,
}

fn parse(args: &[String]) -> Result<Args, BadArgs> {
    let mut a = Args {
        common: Common::new(),
        samples: Vec::new(),
        rate: None,
        repeat: 1,
        file: None,
        xcdr1: false,
        durable: Default::default(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if a.common.take(arg, &mut it, true)? || a.durable.take(arg, &mut it)? {
            continue;
        }
        let mut value = |name: &str| option_value(&mut it, name);
        match arg.as_str() {
            "--rate" => {
                let v = value(arg)?;
                a.rate = Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|r| *r > 0.0 && *r <= 1e6)
                        .ok_or_else(|| BadArgs(format!("bad --rate {v:?} (Hz, 0 < r <= 1e6)")))?,
                );
            }
            "--repeat" => {
                let v = value(arg)?;
                a.repeat =
                    v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        BadArgs(format!("bad --repeat {v:?} (a positive integer)"))
                    })?;
            }
            "--json-file" => a.file = Some(PathBuf::from(value(arg)?)),
            "--xcdr1" => a.xcdr1 = true,
            // A positional argument after the topic: a sample (it may start with '-': `-1`).
            s if !s.starts_with("--") && (!s.starts_with('-') || s.len() > 1) => {
                a.samples.push(s.to_string())
            }
            other => return Err(BadArgs(format!("unknown argument {other:?}"))),
        }
    }
    a.common.topic()?;
    if a.samples.is_empty() && a.file.is_none() {
        return Err(BadArgs(
            "nothing to publish: give JSON samples or --json-file".into(),
        ));
    }
    Ok(a)
}

/// Runs `halyard pub`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{HELP}\n\n{}", crate::pub_durable::help());
        return 0;
    }
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "halyard pub: {}\n\n{HELP}\n\n{}",
                e.0,
                crate::pub_durable::help()
            );
            return 2;
        }
    };
    // Read the samples (JSON syntax) before joining the domain.
    let texts = match sample_texts(&a) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("halyard pub: {e}");
            return 2;
        }
    };
    match run(&a, &texts) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("halyard pub: {e}");
            e.code()
        }
    }
}

/// The samples as JSON values, each with where it came from (for messages).
fn sample_texts(a: &Args) -> Result<Vec<(String, Value)>, String> {
    let mut out = Vec::new();
    for (i, s) in a.samples.iter().enumerate() {
        let v: Value =
            serde_json::from_str(s).map_err(|e| format!("sample {} is not JSON: {e}", i + 1))?;
        out.push((format!("sample {}", i + 1), v));
    }
    if let Some(path) = &a.file {
        let text = read_limited(path)?;
        let name = path.display().to_string();
        let trimmed = text.trim_start();
        if trimmed.starts_with('[') {
            let v: Value =
                serde_json::from_str(trimmed).map_err(|e| format!("{name} is not JSON: {e}"))?;
            if let Value::Array(items) = v {
                for (i, item) in items.into_iter().enumerate() {
                    out.push((format!("{name} element {}", i + 1), item));
                }
            }
        } else {
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line)
                    .map_err(|e| format!("{name} line {} is not JSON: {e}", n + 1))?;
                out.push((format!("{name} line {}", n + 1), v));
            }
        }
    }
    if out.is_empty() {
        return Err("nothing to publish: the JSON file holds no sample".into());
    }
    Ok(out)
}

fn read_limited(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let mut s = String::new();
    let r = if path.as_os_str() == "-" {
        std::io::stdin().take(MAX_FILE + 1).read_to_string(&mut s)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(MAX_FILE + 1).read_to_string(&mut s))
    };
    r.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if s.len() as u64 > MAX_FILE {
        return Err(format!(
            "{} is larger than {} MiB",
            path.display(),
            MAX_FILE >> 20
        ));
    }
    Ok(s)
}

/// The writer's QoS: reliable, the strongest durability the readers ask, their partitions.
fn writer_qos(c: &Common, seen: &[Seen], type_name: &str, xcdr1: bool) -> EndpointQos {
    let mut q = EndpointQos::writer_default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = halyard_wire::qos::History::KeepAll;
    let readers: Vec<_> = seen
        .iter()
        .filter(|s| s.type_name == type_name)
        .flat_map(|s| &s.readers)
        .filter(|r| !halyard::durability::is_service_endpoint(r))
        .collect();
    q.durability = readers
        .iter()
        .map(|r| r.qos.durability)
        .max_by_key(|d| match d {
            DurabilityKind::Volatile => 0,
            DurabilityKind::TransientLocal => 1,
            DurabilityKind::Transient => 2,
            DurabilityKind::Persistent => 3,
        })
        .unwrap_or(DurabilityKind::Volatile);
    let mut parts: Vec<String> = Vec::new();
    for r in &readers {
        for p in &r.qos.partition {
            if !parts.contains(p) {
                parts.push(p.clone());
            }
        }
    }
    q.partition = parts;
    let xcdr2_ok = readers
        .iter()
        .all(|r| r.qos.data_representation.contains(&XCDR2));
    q.data_representation = vec![if xcdr1 || !xcdr2_ok { XCDR1 } else { XCDR2 }];
    c.apply(q)
}

/// What `pub` waits for before writing: the participants that had a reader of the topic's
/// type when it looked, and among them those whose readers all request what the writer does
/// not offer (they may add a reader that fits, as `halyard sub` does, or never match).
#[derive(Debug, Default)]
struct Expected {
    participants: BTreeSet<GuidPrefix>,
    incompatible: BTreeMap<GuidPrefix, QosPolicyId>,
}

fn expected_readers(topic: &str, seen: &[Seen], type_name: &str, qos: &EndpointQos) -> Expected {
    let mut e = Expected::default();
    let mut compatible = BTreeSet::new();
    let side = |q| Side {
        topic,
        type_name,
        qos: q,
    };
    for reader in seen
        .iter()
        .filter(|s| s.type_name == type_name)
        .flat_map(|s| &s.readers)
        .filter(|r| !halyard::durability::is_service_endpoint(r))
    {
        let p = reader
            .participant_guid
            .map_or(reader.guid.prefix, |g| g.prefix);
        e.participants.insert(p);
        match pairing(side(qos), side(&reader.qos)) {
            Pairing::Compatible => {
                compatible.insert(p);
            }
            Pairing::Incompatible(policy) => {
                e.incompatible.entry(p).or_insert(policy);
            }
            Pairing::Unrelated => {}
        }
    }
    e.incompatible.retain(|p, _| !compatible.contains(p));
    e
}

/// Waits, within `timeout`, until the writer matched a reader in every participant of
/// `expected` (each reliable one acknowledging the writer, so what is written now is not
/// lost to it). A participant whose readers were all incompatible gets [`ADAPT_GRACE`] to add
/// one that fits, then is named on stderr.
fn wait_for_readers(w: &UntypedDataWriter, expected: &Expected, timeout: Duration) {
    if expected.participants.is_empty() {
        eprintln!("halyard pub: no reader of the topic seen; publishing anyway");
        return;
    }
    let start = Instant::now();
    let matched_in = |w: &UntypedDataWriter| -> BTreeSet<GuidPrefix> {
        w.delivery_report()
            .unwrap_or_default()
            .iter()
            .filter(|d| d.matched && !d.durability_service)
            .map(|d| d.reader.prefix)
            .collect()
    };
    loop {
        let matched = matched_in(w);
        let elapsed = start.elapsed();
        let missing: Vec<&GuidPrefix> = expected
            .participants
            .iter()
            .filter(|p| !matched.contains(p))
            .filter(|p| elapsed < ADAPT_GRACE || !expected.incompatible.contains_key(p))
            .collect();
        if missing.is_empty() || elapsed >= timeout {
            for (p, policy) in &expected.incompatible {
                if !matched.contains(p) {
                    eprintln!(
                        "halyard pub: the readers of participant {} request {policy:?} QoS \
                         this writer does not offer; they get nothing (see --reliable, \
                         --durability, --partition)",
                        crate::discovery::guid(halyard_wire::Guid::new(
                            *p,
                            halyard_wire::EntityId::PARTICIPANT
                        ))
                    );
                }
            }
            if !missing.is_empty() {
                eprintln!(
                    "halyard pub: {} of the {} participants with readers matched in {:.1} s; \
                     publishing anyway",
                    expected.participants.len() - missing.len(),
                    expected.participants.len(),
                    timeout.as_secs_f64()
                );
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Reliable readers must also have answered the writer before they are owed anything
    // (the durability services' readers are waited for after writing, see `pub_durable`).
    let matched = w
        .delivery_report()
        .unwrap_or_default()
        .iter()
        .filter(|d| d.matched && !d.durability_service)
        .count();
    let left = timeout.saturating_sub(start.elapsed());
    let _ = w.wait_for_matched(u32::try_from(matched).unwrap_or(u32::MAX), left);
}

/// The delivery report once the readers that left had time to be heard: a reader that takes
/// what it wanted and exits sends its last ACKNACK on the data socket, its goodbye on the
/// discovery one, and the goodbye may be handled first.
fn final_report(w: &UntypedDataWriter) -> Result<Vec<ReaderDelivery>, Failure> {
    let deadline = Instant::now() + DEPARTED_GRACE;
    loop {
        let report = w
            .delivery_report()
            .map_err(|e| Failure::Dds("the writer is gone".into(), Box::new(e)))?;
        let waiting = report.iter().any(|d| {
            !d.matched
                && matches!(d.reception, Reception::Acknowledged { .. })
                && !d.has_everything()
        });
        if !waiting || Instant::now() >= deadline {
            return Ok(report);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What the delivery report says, counted for the closing line.
#[derive(Debug, Default, PartialEq, Eq)]
struct Summary {
    /// Reliable readers that acknowledged everything they were owed.
    complete: usize,
    /// Reliable readers short of that: (reader, acknowledged, owed).
    short: Vec<(halyard_wire::Guid, u64, u64)>,
    /// Best-effort readers: their delivery cannot be known.
    best_effort: usize,
    /// Durability services outside this process that stored everything.
    services_stored: usize,
}

impl Summary {
    /// The application readers of `report` (the durability services' are no readers of the
    /// application's), and `services_stored`.
    fn of(report: &[ReaderDelivery], services_stored: usize) -> Self {
        let mut s = Summary {
            services_stored,
            ..Summary::default()
        };
        for d in report.iter().filter(|d| !d.durability_service) {
            match (d.reception, d.has_everything()) {
                (Reception::Unknown, _) => s.best_effort += 1,
                (_, true) => s.complete += 1,
                (Reception::Acknowledged { acknowledged, owed }, false) => {
                    s.short.push((d.reader, acknowledged, owed))
                }
                (Reception::Local, false) => {}
            }
        }
        s
    }

    /// `1 reader acknowledged everything; 1 best-effort reader (delivery unknown)`.
    fn text(&self) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut parts = Vec::new();
        if self.complete > 0 || self.short.is_empty() && self.best_effort == 0 {
            parts.push(format!(
                "{} acknowledged everything",
                plural(self.complete, "reader", "readers")
            ));
        }
        if !self.short.is_empty() {
            parts.push(format!(
                "{} did not acknowledge everything",
                plural(self.short.len(), "reader", "readers")
            ));
        }
        if self.best_effort > 0 {
            parts.push(format!(
                "{} (delivery unknown)",
                plural(
                    self.best_effort,
                    "best-effort reader",
                    "best-effort readers"
                )
            ));
        }
        if self.services_stored > 0 {
            parts.push(format!(
                "stored by {}",
                plural(
                    self.services_stored,
                    "durability service",
                    "durability services"
                )
            ));
        }
        parts.join("; ")
    }

    fn warnings(&self, timeout: Duration) -> Vec<String> {
        self.short
            .iter()
            .map(|(g, acknowledged, owed)| {
                format!(
                    "reader {} acknowledged {acknowledged} of the {owed} changes it was sent \
                     within {:.1} s",
                    crate::discovery::guid(*g),
                    timeout.as_secs_f64()
                )
            })
            .collect()
    }
}

fn encode_all(
    r: &Resolved,
    texts: &[(String, Value)],
    rep: DataRepresentation,
) -> Result<Vec<Vec<u8>>, Failure> {
    texts
        .iter()
        .map(|(what, j)| {
            let v = dynamic::from_json(&r.ty, j, JsonOptions::default()).map_err(|e| {
                Failure::BadArgs(format!("{what} does not fit {}: {e}", r.type_name))
            })?;
            dynamic::encode(&r.ty, &v, rep, Endianness::Little)
                .map_err(|e| Failure::BadArgs(format!("{what} cannot be encoded: {e}")))
        })
        .collect()
}

fn run(a: &Args, texts: &[(String, Value)]) -> Result<(), Failure> {
    let topic = a.common.topic().map_err(|e| Failure::BadArgs(e.0))?;
    let (dp, r, seen) = dyntopic::resolve(&a.common, "halyard pub", false)?;
    let mut qos = writer_qos(&a.common, &seen, &r.type_name, a.xcdr1);
    a.durable.apply(&mut qos);
    if let Some(note) = a.durable.unused_note(&qos) {
        eprintln!("halyard pub: {note}");
    }
    let rep = if qos.data_representation.first() == Some(&XCDR2) {
        DataRepresentation::Xcdr2
    } else {
        DataRepresentation::Xcdr1
    };
    let samples = encode_all(&r, texts, rep)?;
    let t = dp
        .create_untyped_topic(topic, r.untyped())
        .map_err(|e| Failure::Dds("cannot create the topic".into(), Box::new(e)))?;
    let w = dp
        .create_publisher(PublisherQos::default().partition(qos.partition.clone()))
        .create_untyped_datawriter(&t, DataWriterQos::from(&qos), None)
        .map_err(|e| Failure::Dds("cannot create the writer".into(), Box::new(e)))?;
    if let Err(e) = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst)) {
        eprintln!("halyard pub: cannot catch Ctrl-C: {e}");
    }
    wait_for_readers(
        &w,
        &expected_readers(topic, &seen, &r.type_name, &qos),
        a.common.timeout,
    );
    let period = a.rate.map(|hz| Duration::from_secs_f64(1.0 / hz));
    let mut next = Instant::now();
    let mut written = 0u64;
    'outer: for _ in 0..a.repeat {
        for (bytes, (_, j)) in samples.iter().zip(texts) {
            if INTERRUPTED.load(Ordering::SeqCst) {
                break 'outer;
            }
            if let Some(p) = period {
                let now = Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                }
                next += p;
            }
            w.write(bytes)
                .map_err(|e| Failure::Dds("write failed".into(), Box::new(e)))?;
            written += 1;
            if a.common.json {
                println!("{}", serde_json::json!({ "written": j }));
            }
        }
    }
    // Bounded: a reader that leaves or stops acknowledging shows in the report below.
    let _ = w.wait_for_acknowledgments(a.common.timeout);
    crate::pub_durable::wait_for_a_service(&w, &qos, a.common.timeout);
    let report = final_report(&w)?;
    let stored = w
        .durability_services()
        .iter()
        .filter(|s| !s.embedded && s.stored_all)
        .count();
    let summary = Summary::of(&report, stored);
    let line = format!(
        "published {written} samples of {} to {topic}: {}",
        r.type_name,
        summary.text()
    );
    if a.common.json {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
    for warning in summary.warnings(a.common.timeout) {
        eprintln!("halyard pub: {warning}");
    }
    Ok(())
}
