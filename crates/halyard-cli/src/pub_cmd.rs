//! `halyard pub TOPIC JSON...`: writes samples given as JSON to a topic whose type Halyard
//! learns at run time (a reader's or writer's TypeInformation and TypeLookup, or `--idl`).
//!
//! Every JSON value is converted and encoded before anything is written, so a mistake (not
//! JSON, a member missing or of the wrong kind, a string past its bound) exits 2 naming the
//! member path and nothing is sent. The writer is reliable and waits (bounded by `--timeout`)
//! for the readers that were discovered to match, then, after writing, for their
//! acknowledgments, so short-lived runs do not lose samples. Its durability is the strongest
//! the discovered readers ask (so that every one matches), its partitions theirs.
//! Samples are XCDR2 unless `--xcdr1` or a discovered reader does not accept XCDR2.

use crate::discovery::{option_value, BadArgs};
use crate::dyntopic::{self, Common, Failure, Resolved, Seen};
use halyard::cdr::{DataRepresentation, Endianness};
use halyard::qos::EndpointQos;
use halyard::xtypes::dynamic::{self, JsonOptions};
use halyard::GroupQos;
use halyard_core::matching::{XCDR1, XCDR2};
use halyard_wire::qos::{DurabilityKind, ReliabilityKind};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Largest `--json-file` read.
const MAX_FILE: u64 = 64 << 20;

const HELP: &str = "usage: halyard pub TOPIC JSON... [-i|--id DOMAIN] [-p|--partition P]... [--reliable|--best-effort]
       [--durability volatile|transient-local|transient|persistent] [--history keep-all|N]
       [--rate HZ] [--repeat N] [--json-file FILE|-] [--xcdr1] [--timeout S]
       [--idl FILE [-I DIR]... [--type NAME]] [--json]

Publishes each JSON value (arguments, then --json-file: a JSON array of samples or one JSON value
a line; - is stdin) as a sample of TOPIC. The type comes from the network (the TypeInformation a
reader or writer of TOPIC announces, TypeObjects through TypeLookup) or from --idl FILE. JSON form:
struct members by name (all non-optional members required; optional ones may be null or left
out), enums by enumerator name, sequences and arrays as lists, unions {\"discriminator\": d,
\"case\": v}.
  --rate HZ    samples a second (default: as fast as matching allows)
  --repeat N   publish the list N times (default 1)
  --timeout S  how long to look for the type, the readers' matching and their acknowledgments
               (default 10)
  --json       print one JSON line a sample written ({\"written\": SAMPLE}) instead of a count
QoS: reliable; the durability and partitions the discovered readers ask; KEEP_ALL history.

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
    let readers = seen
        .iter()
        .filter(|s| s.type_name == r.type_name)
        .flat_map(|s| &s.readers)
        .filter(|r| !halyard::durability::is_service_endpoint(r))
        .count();
    let t = dp
        .create_untyped_topic(topic, r.untyped())
        .map_err(|e| Failure::Dds("cannot create the topic".into(), Box::new(e)))?;
    let w = dp
        .create_publisher(GroupQos::default())
        .create_untyped_datawriter(&t, qos.clone(), None)
        .map_err(|e| Failure::Dds("cannot create the writer".into(), Box::new(e)))?;
    if let Err(e) = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst)) {
        eprintln!("halyard pub: cannot catch Ctrl-C: {e}");
    }
    if readers > 0 {
        let n = u32::try_from(readers).unwrap_or(u32::MAX);
        if w.wait_for_matched(n, a.common.timeout).is_err() {
            eprintln!(
                "halyard pub: {} of the {readers} readers seen matched in {:.1} s; publishing anyway",
                w.publication_matched_status().current_count,
                a.common.timeout.as_secs_f64()
            );
        }
    } else {
        eprintln!("halyard pub: no reader of {topic} seen; publishing anyway");
    }
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
    if w.wait_for_acknowledgments(a.common.timeout).is_err() {
        eprintln!(
            "halyard pub: not every reader acknowledged within {:.1} s",
            a.common.timeout.as_secs_f64()
        );
    }
    crate::pub_durable::wait_for_a_service(&w, &qos, a.common.timeout);
    if !a.common.json {
        println!(
            "published {written} samples of {} to {topic} ({} readers matched)",
            r.type_name,
            w.publication_matched_status().current_count
        );
    }
    Ok(())
}
