//! `halyard sub TOPIC`: reads a topic whose type Halyard learns at run time (TypeLookup, or
//! `--idl`) and prints each sample: one JSON object a line (`--json`), flattened
//! `member=value` lines (the default) or an aligned table (`--table`). Disposals and
//! unregistrations print as such, with the instance's key when a sample of it was seen.
//!
//! QoS: `sub` reads every writer of the topic, whatever it offers and whenever it starts
//! (see [`crate::sub_readers`]): a RELIABLE, VOLATILE reader from the start, and a reader of
//! exactly what a writer offers for each kind of writer that reader does not serve; each
//! sample is printed once. `--reliable`, `--best-effort`, `--durability`, `--history` and
//! `--partition` override. It accepts XCDR1 and XCDR2. `--filter` keeps the samples a DDS
//! SQL expression accepts, evaluated on the decoded sample by Halyard's filter language
//! ([`halyard::filter`], bound to the type learnt at run time).

use crate::discovery::{option_value, BadArgs};
use crate::dyntopic::{self, Common, Failure, Resolved};
use crate::sub_readers::Readers;
use halyard::filter::DynamicSample;
use halyard::xtypes::dynamic;
use halyard::{DomainParticipant, Filter, InstanceHandle, InstanceState, Sample};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// How often discovery is looked at for writers that need another reader.
const ADAPT_PERIOD: Duration = Duration::from_millis(100);

/// Most instances whose key `sub` remembers to print with their disposal.
const MAX_REMEMBERED_KEYS: usize = 65_536;

const HELP: &str =
    "usage: halyard sub TOPIC [-d DOMAIN] [-p|--partition P]... [--reliable|--best-effort]
       [--durability volatile|transient-local|transient|persistent] [--history keep-all|N]
       [--filter EXPR] [--json [--info]] [--table] [--count N] [--duration S] [--timeout S]
       [--idl FILE [-I DIR]... [--type NAME]]

Subscribes to TOPIC, whose type comes from the network (a writer's or reader's XTypes
TypeInformation, TypeObjects through TypeLookup) or from --idl FILE (for peers that announce no
type information), and prints each sample:
  -d, --domain DOMAIN  the DDS domain id, 0..=232 (default 0; also -i, --id, --domain-id)
  default    one line a sample: member=value ... (nested members as a.b, collections as JSON)
  --table    a header of the member paths, then one aligned row a sample
  --json     one JSON object a line: the sample (struct members by name in declaration
             order, enums by enumerator
             name, sequences/arrays as lists, unions {\"discriminator\": d, \"case\": v},
             absent optionals null); a disposal {\"disposed\": KEY}, an unregistration
             {\"unregistered\": KEY} (KEY: the instance's key members, null if never seen);
             with --info: {\"sample\": S|null, \"info\": {state, instance, source_timestamp}}
  --filter   a DDS SQL condition on the sample's members, e.g. \"x > 3 AND name LIKE 'a%'\"
  --count N  stop after N samples; --duration S stop after S seconds (also 500ms);
  --timeout S  how long to look for the topic and its type (default 10)
  --type NAME  which type when the topic (or the IDL file) has several
QoS: sub reads every writer of TOPIC, whatever it offers and whether it starts before or after
sub: a RELIABLE, VOLATILE reader in the default partition from the start, and, for each kind of
writer discovered that no reader serves yet (best effort, its own durability, EXCLUSIVE
ownership, other partitions), one more reader asking exactly what that writer offers, so a
durable writer's history arrives too. Each sample is printed once. --reliable, --best-effort,
--durability and --partition fix that part of every reader (a writer they exclude is named on
stderr; so is each writer matched or gone). History KEEP_ALL unless --history N. With --idl naming one type (the file's only topic
type, or --type), the readers exist as soon as sub starts, so a writer started a moment later
finds them; without --idl, sub first waits for an endpoint of TOPIC to learn the type.

Exit status: 0 (also on Ctrl-C / SIGTERM, with the count on stderr), 1 if the topic or its type
cannot be found or decoded, 2 for bad arguments (a bad --filter included).";

/// Options of `sub`.
#[derive(Debug)]
struct Args {
    common: Common,
    table: bool,
    info: bool,
    count: Option<u64>,
    duration: Option<Duration>,
    filter: Option<String>,
}

fn parse(args: &[String]) -> Result<Args, BadArgs> {
    let mut a = Args {
        common: Common::new(),
        table: false,
        info: false,
        count: None,
        duration: None,
        filter: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if a.common.take(arg, &mut it, true)? {
            continue;
        }
        let mut value = |name: &str| option_value(&mut it, name);
        match arg.as_str() {
            "--table" => a.table = true,
            "--info" => a.info = true,
            "-c" | "--count" => {
                let v = value(arg)?;
                a.count =
                    Some(v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        BadArgs(format!("bad --count {v:?} (a positive integer)"))
                    })?);
            }
            "-r" | "--runtime" | "--duration" => {
                let v = value(arg)?;
                a.duration = Some(
                    dyntopic::seconds(&v, Duration::from_secs(365 * 86400))
                        .ok_or_else(|| BadArgs(format!("bad --duration {v:?} (seconds, > 0)")))?,
                );
            }
            "-f" | "--filter" => a.filter = Some(value(arg)?),
            other => return Err(BadArgs(format!("unknown argument {other:?}"))),
        }
    }
    a.common.topic()?;
    if a.table && a.common.json {
        return Err(BadArgs("--table and --json exclude each other".into()));
    }
    if a.info && !a.common.json {
        return Err(BadArgs("--info goes with --json".into()));
    }
    Ok(a)
}

/// Runs `halyard sub`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{HELP}");
        return 0;
    }
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("halyard sub: {}\n\n{HELP}", e.0);
            return 2;
        }
    };
    match run(&a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("halyard sub: {e}");
            e.code()
        }
    }
}

/// Joins the domain and finds the topic's type. With `--idl` naming one type (the file's
/// only topic type, or `--type`), that is at once, so the readers exist from the start and a
/// writer started a moment later finds them; otherwise discovery decides (as
/// [`dyntopic::resolve`] does). The flag says whether writers may register the type under
/// another name (see [`Readers`]).
fn join_and_resolve(c: &Common) -> Result<(DomainParticipant, Resolved, bool), Failure> {
    if let Some(path) = &c.idl {
        match dyntopic::from_idl(path, &c.includes, c.type_name.as_deref()) {
            Ok(r) => {
                let dp = crate::discovery::join(c.domain, "halyard sub").map_err(|e| {
                    Failure::Dds(format!("cannot join domain {}", c.domain), Box::new(e))
                })?;
                return Ok((dp, r, c.type_name.is_none()));
            }
            // Several topic types and no --type: the one the topic's endpoints announce.
            Err(_) if c.type_name.is_none() => {}
            Err(e) => return Err(e),
        }
    }
    let (dp, r, _) = dyntopic::resolve(c, "halyard sub", true)?;
    Ok((dp, r, false))
}

fn run(a: &Args) -> Result<(), Failure> {
    let topic = a.common.topic().map_err(|e| Failure::BadArgs(e.0))?;
    // A bad filter is refused before anything joins the domain when the type is at hand.
    let (dp, r, other_names) = join_and_resolve(&a.common)?;
    let filter = match &a.filter {
        Some(text) => Some(
            Filter::for_schema(text, &[], &r.ty)
                .map_err(|e| Failure::BadArgs(format!("bad --filter {text:?}: {e}")))?,
        ),
        None => None,
    };
    let mut readers = Readers::new(&dp, &a.common, &r, other_names)
        .map_err(|e| Failure::Dds("cannot create the reader".into(), Box::new(e)))?;
    if let Err(e) = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst)) {
        eprintln!("halyard sub: cannot catch Ctrl-C: {e}");
    }
    eprintln!(
        "subscribed to {topic} (type {}), Ctrl-C to stop",
        r.type_name
    );
    let mut p = Printer::new(a, &r);
    let end = a.duration.map(|d| Instant::now() + d);
    let stdout = std::io::stdout();
    let mut next_adapt = Instant::now();
    let mut writers = BTreeSet::new();
    'outer: while !INTERRUPTED.load(Ordering::SeqCst) {
        let now = Instant::now();
        if end.is_some_and(|e| now >= e) {
            break;
        }
        if now >= next_adapt {
            let before = readers.len();
            readers
                .adapt()
                .map_err(|e| Failure::Dds("cannot create a reader".into(), Box::new(e)))?;
            if readers.len() > before {
                eprintln!("halyard sub: reading with {}", readers.describe());
            }
            next_adapt = now + ADAPT_PERIOD;
        }
        readers.wait(ADAPT_PERIOD);
        let matched = readers.matched_writers();
        if matched != writers {
            for w in matched.difference(&writers) {
                eprintln!("halyard sub: matched writer {}", handle_text(w));
            }
            for w in writers.difference(&matched) {
                eprintln!("halyard sub: writer {} gone", handle_text(w));
            }
            writers = matched;
        }
        let samples = readers
            .take(256)
            .map_err(|e| Failure::Dds("take failed".into(), Box::new(e)))?;
        let mut out = stdout.lock();
        for s in samples {
            if let Some(line) = p.line(&s, filter.as_ref()) {
                if writeln!(out, "{line}").is_err() {
                    break 'outer; // stdout closed (e.g. `| head`)
                }
                if p.data_count > 0 && a.count.is_some_and(|n| p.data_count >= n) {
                    let _ = out.flush();
                    break 'outer;
                }
            }
        }
        let _ = out.flush();
    }
    eprintln!(
        "halyard sub: {} samples, {} disposals/unregistrations{}",
        p.data_count,
        p.notice_count,
        if p.undecodable > 0 {
            format!(", {} samples that did not decode", p.undecodable)
        } else {
            String::new()
        }
    );
    Ok(())
}

/// A writer's handle as its GUID, printed as Cyclone DDS's tools print GUIDs.
fn handle_text(h: &InstanceHandle) -> String {
    crate::discovery::guid(halyard_wire::Guid::from_bytes(h.0))
}

/// Formats samples.
struct Printer<'a> {
    a: &'a Args,
    r: &'a Resolved,
    /// Instance handle → its key members (JSON), from samples seen.
    keys: BTreeMap<[u8; 16], Value>,
    columns: Vec<String>,
    widths: Vec<usize>,
    header_done: bool,
    data_count: u64,
    notice_count: u64,
    undecodable: u64,
}

impl<'a> Printer<'a> {
    fn new(a: &'a Args, r: &'a Resolved) -> Self {
        let columns = dynamic::column_names(&r.ty);
        let widths = columns.iter().map(|c| c.chars().count().max(6)).collect();
        Printer {
            a,
            r,
            keys: BTreeMap::new(),
            columns,
            widths,
            header_done: false,
            data_count: 0,
            notice_count: 0,
            undecodable: 0,
        }
    }

    /// The line to print for `s`, `None` when filtered out or undecodable (reported on
    /// stderr once a sample).
    fn line(&mut self, s: &Sample<Vec<u8>>, filter: Option<&Filter>) -> Option<String> {
        let handle = s.info.instance_handle.0;
        let Some(bytes) = s.data.as_ref().filter(|_| s.info.valid_data) else {
            self.notice_count += 1;
            return Some(self.notice(s, handle));
        };
        let v = match dynamic::decode(&self.r.ty, bytes) {
            Ok(v) => v,
            Err(e) => {
                self.undecodable += 1;
                eprintln!("halyard sub: a sample does not decode: {e}");
                return None;
            }
        };
        let j = match dynamic::to_json(&self.r.ty, &v) {
            Ok(j) => j,
            Err(e) => {
                self.undecodable += 1;
                eprintln!("halyard sub: a sample cannot be shown: {e}");
                return None;
            }
        };
        if dyntopic::has_key(&self.r.ty)
            && (self.keys.len() < MAX_REMEMBERED_KEYS || self.keys.contains_key(&handle))
        {
            self.keys.insert(handle, key_json(&self.r.ty, &j));
        }
        if filter.is_some_and(|f| !f.matches(&DynamicSample::new(&self.r.ty, &v))) {
            return None;
        }
        self.data_count += 1;
        Some(if self.a.common.json {
            let sample = ordered(&self.r.ty, &j, 0);
            if self.a.info {
                format!("{{\"sample\":{sample},\"info\":{}}}", info(s))
            } else {
                sample
            }
        } else {
            match dynamic::columns(&self.r.ty, &v) {
                Ok(cells) if self.a.table => self.row(&cells),
                Ok(cells) => self
                    .columns
                    .iter()
                    .zip(&cells)
                    .map(|(c, v)| format!("{c}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                Err(e) => format!("(cannot show: {e})"),
            }
        })
    }

    fn notice(&self, s: &Sample<Vec<u8>>, handle: [u8; 16]) -> String {
        let what = match s.info.instance_state {
            InstanceState::NotAliveDisposed => "disposed",
            InstanceState::NotAliveNoWriters => "unregistered",
            InstanceState::Alive => "alive",
        };
        let key = self
            .keys
            .get(&handle)
            .cloned()
            .or_else(|| key_from_hash(&self.r.ty, handle))
            .unwrap_or(Value::Null);
        if self.a.common.json {
            if self.a.info {
                json!({"sample": Value::Null, "info": info(s)}).to_string()
            } else {
                json!({ what: key }).to_string()
            }
        } else {
            let key = if key.is_null() {
                format!("instance {}", hex(&handle))
            } else {
                key.to_string()
            };
            format!("({what}: {key})")
        }
    }

    fn row(&mut self, cells: &[String]) -> String {
        let mut out = String::new();
        if !self.header_done {
            self.header_done = true;
            for (i, c) in self.columns.iter().enumerate() {
                let w = self.widths.get(i).copied().unwrap_or(6);
                if let Some(cell) = cells.get(i) {
                    // Columns start as wide as the first row's cells (at most 40).
                    let cw = cell.chars().count().min(40);
                    if let Some(slot) = self.widths.get_mut(i) {
                        *slot = w.max(cw);
                    }
                }
                let w = self.widths.get(i).copied().unwrap_or(6);
                out.push_str(&format!("{c:<w$} "));
            }
            out = out.trim_end().to_string();
            out.push('\n');
        }
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let w = self.widths.get(i).copied().unwrap_or(6);
            line.push_str(&format!("{cell:<w$} "));
        }
        out.push_str(line.trim_end());
        out
    }
}

/// The JSON text of `v` (a value of `t`) with struct members in declaration order, as the
/// type lists them (a JSON object's keys are otherwise sorted).
fn ordered(t: &halyard::xtypes::DynamicType, v: &Value, depth: usize) -> String {
    use halyard::xtypes::dynamic::TypeNode;
    if depth > halyard::xtypes::registry::MAX_TYPE_DEPTH {
        return v.to_string();
    }
    match (t.resolved().node(), v) {
        (TypeNode::Struct(st), Value::Object(map)) => {
            let mut parts: Vec<String> = st
                .members
                .iter()
                .filter_map(|m| {
                    let x = map.get(&m.name)?;
                    Some(format!(
                        "{}:{}",
                        Value::String(m.name.clone()),
                        ordered(&m.ty, x, depth + 1)
                    ))
                })
                .collect();
            // Anything the type does not list (none expected) keeps its place at the end.
            for (k, x) in map {
                if st.member(k).is_none() {
                    parts.push(format!("{}:{x}", Value::String(k.clone())));
                }
            }
            format!("{{{}}}", parts.join(","))
        }
        (TypeNode::Sequence { element, .. }, Value::Array(items))
        | (TypeNode::Array { element, .. }, Value::Array(items)) => {
            let inner: Vec<String> = items
                .iter()
                .map(|x| match x {
                    // The inner lists of a multi-dimensional array have the same element type.
                    Value::Array(_) if matches!(t.resolved().node(), TypeNode::Array { .. }) => {
                        ordered(t, x, depth + 1)
                    }
                    _ => ordered(element, x, depth + 1),
                })
                .collect();
            format!("[{}]", inner.join(","))
        }
        _ => v.to_string(),
    }
}

/// The key members of a sample's JSON form (top-level struct members marked key).
fn key_json(t: &halyard::xtypes::DynamicType, j: &Value) -> Value {
    let Some(s) = t.resolved().as_struct() else {
        return Value::Null;
    };
    let mut m = serde_json::Map::new();
    for member in s.members.iter().filter(|m| m.key) {
        if let Some(v) = j.get(&member.name) {
            m.insert(member.name.clone(), v.clone());
        }
    }
    Value::Object(m)
}

/// The key members of an instance from its key hash, when the key is small enough for the
/// hash to be the key itself (XTypes 1.3 §7.6.8: the big-endian XCDR2 serialization of the key
/// members, zero-padded, when at most 16 bytes; otherwise its MD5).
fn key_from_hash(t: &halyard::xtypes::DynamicType, hash: [u8; 16]) -> Option<Value> {
    if !dyntopic::has_key(t) || dynamic::key_max_size(t)? > 16 {
        return None;
    }
    // A CDR2_BE header, then the key members as the hash holds them.
    let mut bytes = vec![0x00, 0x06, 0x00, 0x00];
    bytes.extend_from_slice(&hash);
    let v = dynamic::decode_key(t, &bytes).ok()?;
    Some(key_json(t, &dynamic::to_json(t, &v).ok()?))
}

fn info(s: &Sample<Vec<u8>>) -> Value {
    let state = match s.info.instance_state {
        InstanceState::Alive => "alive",
        InstanceState::NotAliveDisposed => "disposed",
        InstanceState::NotAliveNoWriters => "no_writers",
    };
    json!({
        "valid_data": s.info.valid_data,
        "instance_state": state,
        "instance": hex(&s.info.instance_handle.0),
        "source_timestamp": s.info.source_timestamp.map(|t| t.to_nanos() as f64 / 1e9),
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
